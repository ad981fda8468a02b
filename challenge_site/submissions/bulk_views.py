"""The organiser exports of bulk.py, on the site and in the API (token or session).

Only the challenge's organisers (``policy.organised_challenges``: superusers included)
may export; everyone else gets the 404 of a missing challenge, so the URLs reveal
nothing. The answers stream as they are built and are never stored by any cache.
"""

from collections.abc import Iterator

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny

from challenge_site.challenges import policy
from challenge_site.challenges.models import Challenge
from challenge_site.negotiation import AnyAccept

from .bulk import iter_scores_csv, iter_submissions_archive


def organised_challenge_or_404(*, user, slug: str) -> Challenge:
    """The challenge ``slug`` if ``user`` organises it; otherwise 404, as if missing."""
    return get_object_or_404(policy.organised_challenges(user), slug=slug)


def _streamed(request, content: Iterator, *, content_type: str, filename: str):
    # A HEAD request gets the headers without building the export.
    body = iter(()) if request.method == "HEAD" else content
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    patch_cache_control(response, private=True, no_store=True)
    return response


def submissions_zip_response(request, slug: str):
    now = timezone.now()
    challenge = organised_challenge_or_404(user=request.user, slug=slug)
    return _streamed(
        request,
        iter_submissions_archive(challenge, now=now),
        content_type="application/zip",
        filename=f"{challenge.slug}-submissions-{now:%Y%m%dT%H%M%SZ}.zip",
    )


def scores_csv_response(request, slug: str):
    now = timezone.now()
    challenge = organised_challenge_or_404(user=request.user, slug=slug)
    return _streamed(
        request,
        iter_scores_csv(challenge),
        content_type="text/csv; charset=utf-8",
        filename=f"{challenge.slug}-scores-{now:%Y%m%dT%H%M%SZ}.csv",
    )


# --- The site ----------------------------------------------------------------------------


@require_safe
def export_submissions(request, slug):
    """Every submission's zip and manifest.csv, as one zip."""
    return submissions_zip_response(request, slug)


@require_safe
def export_scores(request, slug):
    """Every score of the challenge, test split included, one line per loss."""
    return scores_csv_response(request, slug)


# --- The API -----------------------------------------------------------------------------


def _any_accept(view):
    view.content_negotiation_class = AnyAccept  # read by @api_view
    return view


@api_view(["GET"])
@permission_classes([AllowAny])  # the 404 below, not a 401/403, for everyone else
@_any_accept
def api_export_submissions(request, slug):
    """The zip of export_submissions; 404 unless the user organises the challenge."""
    return submissions_zip_response(request, slug)


@api_view(["GET"])
@permission_classes([AllowAny])
@_any_accept
def api_export_scores(request, slug):
    """The CSV of export_scores; 404 unless the user organises the challenge."""
    return scores_csv_response(request, slug)
