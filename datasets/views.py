from django.http import Http404, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_safe

from challenge_site import policy
from challenge_site.access import get_visible_or_404
from challenge_site.challenges.services import current_phase

from .archive import archive_etag, iter_archive
from .models import Dataset
from .services import part_statuses, released_files


@require_safe
def dataset_detail(request, slug, name):
    now = timezone.now()
    dataset = get_visible_or_404(
        Dataset, user=request.user, now=now, challenge__slug=slug, name=name
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
    }
    return render(request, "datasets/dataset_detail.html", context)


@require_safe
def dataset_zip(request, slug, name):
    """The files released right now, zipped on the fly; 404 while nothing is released."""
    now = timezone.now()
    dataset = get_visible_or_404(
        Dataset, user=request.user, now=now, challenge__slug=slug, name=name
    )
    files = released_files(dataset, now=now)
    if not files:
        raise Http404("Nothing of this dataset is released yet.")
    etag = f'"{archive_etag(files)}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = StreamingHttpResponse(
            iter_archive(files, folder=dataset.name), content_type="application/zip"
        )
        response["Content-Disposition"] = f'attachment; filename="{dataset.name}.zip"'
    response["ETag"] = etag
    # What is released changes with the clock: caches must ask again every time.
    patch_cache_control(response, private=True, no_cache=True)
    return response
