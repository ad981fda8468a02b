from django.http import Http404, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges import policy
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.participation_views import refusal

from .archive import archive_etag, iter_archive
from .policy import visible_datasets
from .readme import readme_text
from .services import part_statuses, released_files


@require_safe
def dataset_detail(request, slug, name):
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    parts = part_statuses(dataset, user=request.user, now=now)
    context = {
        "dataset": dataset,
        "challenge": dataset.challenge,
        "phase": current_phase(dataset.challenge, now=now),
        "parts": parts,
        "downloadable": any(p.released and p.file for p in parts),
        "test_scores_visible": policy.split_visible(
            dataset.challenge, policy.HIDDEN_UNTIL_PUBLICATION, user=request.user
        ),
        "public_board_visible": policy.public_board_visible(dataset.challenge, user=request.user),
    }
    return render(request, "datasets/dataset_detail.html", context)


@require_safe
def dataset_zip(request, slug, name):
    """The files released right now, zipped on the fly with a README.txt that describes
    them; 404 while nothing is released. Refused (the log-in page, or a page that says
    what is missing) until the user may take part (participation_views.refusal)."""
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    refused = refusal(request, dataset.challenge, back=reverse("dataset_detail", args=[slug, name]))
    if refused is not None:
        return refused
    files = released_files(dataset, now=now)
    if not files:
        raise Http404("Nothing of this dataset is released yet.")
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
    # What is released changes with the clock: caches must ask again every time.
    patch_cache_control(response, private=True, no_cache=True)
    return response
