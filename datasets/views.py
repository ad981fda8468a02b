from django.core.files.storage import storages
from django.db.models import prefetch_related_objects
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
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
from .croissant import (
    MEDIA_TYPE,
    croissant_document,
    croissant_json,
    croissant_script,
    document_etag,
)
from .policy import visible_datasets
from .readme import readme_text
from .services import part_statuses, released_files


@require_safe
def dataset_detail(request, slug, name):
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    # One query for the files, which the table and the Croissant block both read.
    prefetch_related_objects([dataset], "files")
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
        # The same public document for every user (released files only): datasets.croissant.
        "croissant": croissant_script(
            croissant_document(dataset=dataset, now=now, absolute=request.build_absolute_uri)
        ),
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


@require_safe
def dataset_croissant(request, slug, name):
    """The dataset's Croissant JSON-LD (the page's data block), to anyone who may see the
    dataset page: it holds only released files, whoever asks."""
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    document = croissant_document(dataset=dataset, now=now, absolute=request.build_absolute_uri)
    body = croissant_json(document).encode()
    etag = document_etag(body)
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = HttpResponse(body, content_type=MEDIA_TYPE)
    response["ETag"] = etag
    # What is released changes with the clock: caches must ask again every time.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def dataset_file(request, slug, name, filename):
    """One released file of the dataset (the Croissant document's contentUrl), under the
    zip's rules: refused until the user may take part; 404 alike for a file that is not
    released, not stored or not of this dataset, so nothing unreleased is confirmed."""
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    refused = refusal(request, dataset.challenge, back=reverse("dataset_detail", args=[slug, name]))
    if refused is not None:
        return refused
    datafile = next((f for f in released_files(dataset, now=now) if f.filename == filename), None)
    if datafile is None:
        raise Http404("No released file of this dataset has that name.")
    etag = f'"{datafile.sha256}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = FileResponse(
            storages[datafile.storage_alias].open(datafile.path, "rb"),
            as_attachment=True,
            filename=datafile.filename,
            content_type="text/plain; charset=us-ascii",
        )
    response["ETag"] = etag
    patch_cache_control(response, private=True, no_cache=True)
    return response
