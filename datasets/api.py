"""GET /api/v1/challenges/, GET /api/v1/challenges/<slug>/ and
GET /api/v1/challenges/<slug>/datasets/<name>.zip (token or session authentication).

What the command-line client lists and downloads; the same visibility as the pages:
the challenge list of the home page, the datasets of the Data tab (their rows and files
as far as released), and the zip of the dataset page, which a token can fetch here.
"""

from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from challenge_site.access import get_visible_or_404
from challenge_site.api_schema import ZIP, Participation, errors
from challenge_site.challenges import policy
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase
from challenge_site.challenges.participation import participation_block
from challenge_site.negotiation import AnyAccept
from scoring.upload_check import PHASE_SPLITS

from .archive import archive_etag, iter_archive
from .models import Dataset, Split
from .policy import visible_datasets
from .readme import readme_text
from .services import released_files

# --- The answers' shapes (the OpenAPI description only) ----------------------------


class ChallengeSummarySerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    phase = serializers.ChoiceField(choices=Phase.choices)
    start = serializers.DateTimeField()
    test_start = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    results_published = serializers.BooleanField()
    url = serializers.URLField()
    api_url = serializers.URLField()


class ChallengeListSerializer(serializers.Serializer):
    results = ChallengeSummarySerializer(many=True)


class DatasetFileSerializer(serializers.Serializer):
    filename = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField()


class DatasetSerializer(serializers.Serializer):
    """Name and task always; the rest only once the challenge's datasets are open."""

    name = serializers.CharField()
    task = serializers.CharField(help_text="regression, classification, multiclass, …")
    rows = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        required=False,
        help_text="{split: rows, or null while hidden}",
    )
    log_base = serializers.FloatField(required=False)
    allow_samples = serializers.BooleanField(required=False)
    min_quantile_gap = serializers.FloatField(required=False)
    classes = serializers.IntegerField(required=False, allow_null=True)
    allow_ensembles = serializers.BooleanField(required=False)
    quantile_levels = serializers.ListField(
        child=serializers.FloatField(), required=False, allow_null=True
    )
    files = DatasetFileSerializer(many=True, required=False)
    url = serializers.URLField(required=False)
    zip_url = serializers.URLField(required=False, allow_null=True)
    leaderboard_url = serializers.URLField(required=False)


class AcceptsSerializer(serializers.Serializer):
    splits = serializers.ListField(child=serializers.ChoiceField(choices=Split.choices))
    required = serializers.ChoiceField(choices=Split.choices, allow_null=True)


class ParticipationSerializer(serializers.Serializer):
    missing = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField(allow_null=True)
    join_url = serializers.URLField()


class ChallengeDetailSerializer(ChallengeSummarySerializer):
    accepts = AcceptsSerializer()
    participation = ParticipationSerializer()
    datasets = DatasetSerializer(many=True)


def _challenge_summary(request, challenge: Challenge, *, now) -> dict:
    return {
        "slug": challenge.slug,
        "title": challenge.title,
        "phase": current_phase(challenge, now=now),
        "start": challenge.start,
        "test_start": challenge.test_start,
        "deadline": challenge.deadline,
        "results_published": challenge.results_published,
        "url": request.build_absolute_uri(reverse("challenge_detail", args=[challenge.slug])),
        "api_url": request.build_absolute_uri(reverse("api_challenge", args=[challenge.slug])),
    }


@extend_schema(
    operation_id="challenges_list",
    summary="The challenges",
    responses={200: ChallengeListSerializer, **errors(429)},
)
@api_view(["GET"])
@permission_classes([AllowAny])
def api_challenges(request):
    """{"results": [{"slug", "title", "phase", "start", "test_start", "deadline",
    "results_published", "url", "api_url"}]}: the challenges the home page lists."""
    now = timezone.now()
    challenges = policy.visible_challenges(user=request.user, now=now).order_by("start", "slug")
    return Response({"results": [_challenge_summary(request, c, now=now) for c in challenges]})


def _dataset(request, dataset: Dataset, *, opened: bool, now) -> dict:
    """A dataset as the Data tab shows it to ``request.user``: name and task always; its
    rows, files and links only once its pages are open to them."""
    challenge = dataset.challenge
    row = {"name": dataset.name, "task": dataset.task}
    if not opened:
        return row
    rows = {
        split: getattr(dataset, f"n_{split}")
        if policy.split_rows_visible(challenge, split, user=request.user, now=now)
        else None
        for split in Split
    }
    files = released_files(dataset, now=now)
    args = [challenge.slug, dataset.name]
    row.update(
        rows=rows,
        # Scoring options: what a local check of a prediction file needs.
        log_base=dataset.log_base,
        allow_samples=dataset.allow_samples,
        min_quantile_gap=dataset.min_quantile_gap,
        classes=dataset.scoring_options.classes,  # a multiclass dataset's L; else None
        allow_ensembles=dataset.allow_ensembles,
        # A regression dataset's levels (spec §8; --levels of python -m scoring); else None.
        quantile_levels=_levels(dataset),
        files=[{"filename": f.filename, "size": f.size, "sha256": f.sha256} for f in files],
        url=request.build_absolute_uri(reverse("dataset_detail", args=args)),
        zip_url=request.build_absolute_uri(reverse("api_dataset_zip", args=args))
        if files
        else None,
        leaderboard_url=request.build_absolute_uri(reverse("api_leaderboard", args=args)),
    )
    return row


def _levels(dataset: Dataset) -> list[float] | None:
    levels = dataset.scoring_options.quantile_levels
    return None if levels is None else list(levels)


@extend_schema(
    operation_id="challenges_retrieve",
    summary="A challenge and its datasets",
    responses={200: ChallengeDetailSerializer, **errors(404, 429)},
)
@api_view(["GET"])
@permission_classes([AllowAny])
def api_challenge(request, slug):
    """The summary of api_challenges, and "accepts" (the splits a submission may hold
    now, and the one it must: null when any one will do), "participation" ({"missing",
    "detail", "join_url"}: what the user still lacks to download and submit) and
    "datasets": [{"name", "task", "rows": {split: n or null}, "log_base",
    "allow_samples", "min_quantile_gap", "classes", "allow_ensembles", "quantile_levels",
    "files", "url",
    "zip_url", "leaderboard_url"}]
    (name and task only before the challenge's datasets open). 404 if not visible."""
    now = timezone.now()
    challenge = get_visible_or_404(policy.visible_challenges, user=request.user, now=now, slug=slug)
    phase = current_phase(challenge, now=now)
    allowed, required = PHASE_SPLITS.get(phase, (set(), None))
    opened = policy.datasets_open(challenge, user=request.user, now=now)
    join = reverse("challenge_join", args=[challenge.slug])
    body = _challenge_summary(request, challenge, now=now)
    body.update(
        accepts={"splits": [s for s in Split if s in allowed], "required": required},
        participation={
            "missing": list(policy.participation_missing(challenge, user=request.user)),
            "detail": participation_block(challenge, user=request.user),
            "join_url": request.build_absolute_uri(join),
        },
        datasets=[
            _dataset(request, dataset, opened=opened, now=now)
            for dataset in challenge.datasets.select_related("challenge").prefetch_related("files")
        ],
    )
    return Response(body)


def _any_accept(view):
    view.content_negotiation_class = AnyAccept  # read by @api_view: a zip, whatever is accepted
    return view


@extend_schema(
    operation_id="datasets_zip",
    summary="Download a dataset (zip)",
    responses={
        (200, "application/zip"): OpenApiResponse(
            ZIP, description="The released files and README.txt (ETag; 304 if unchanged)."
        ),
        304: OpenApiResponse(description="Not modified (If-None-Match matched the ETag)."),
        **errors(
            403,
            404,
            429,
            s403=OpenApiResponse(
                Participation,
                description="The user may not take part yet: what they lack, where to join.",
                examples=[
                    OpenApiExample(
                        "rules not accepted",
                        {
                            "detail": "Accept the challenge's rules to take part.",
                            "missing": ["rules_acceptance"],
                            "join_url": "https://example.org/challenges/epuc/join/",
                        },
                        status_codes=["403"],
                        response_only=True,
                    )
                ],
            ),
        ),
    },
)
@api_view(["GET"])
@permission_classes([AllowAny])
@_any_accept
def api_dataset_zip(request, slug, name):
    """The zip of the dataset page (its released files and README.txt), streamed; 403
    {"detail", "missing", "join_url"} until the user may take part, 404 while nothing
    is released (or the dataset is not visible)."""
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    challenge = dataset.challenge
    reason = participation_block(challenge, user=request.user)
    if reason is not None:
        join = reverse("challenge_join", args=[challenge.slug])
        return Response(
            {
                "detail": reason,
                "missing": list(policy.participation_missing(challenge, user=request.user)),
                "join_url": request.build_absolute_uri(join),
            },
            status=status.HTTP_403_FORBIDDEN,
        )
    files = released_files(dataset, now=now)
    if not files:
        return Response(
            {"detail": "Nothing of this dataset is released yet."},
            status=status.HTTP_404_NOT_FOUND,
        )
    readme = readme_text(dataset, files=files)
    etag = f'"{archive_etag(files, readme=readme)}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = StreamingHttpResponse(
            iter_archive(files, folder=dataset.name, readme=readme),
            content_type="application/zip",
        )
        response["Content-Disposition"] = f'attachment; filename="{dataset.name}.zip"'
    response["ETag"] = etag
    patch_cache_control(response, private=True, no_cache=True)
    return response
