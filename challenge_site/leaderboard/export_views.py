"""The whole-board downloads (…/leaderboard.csv, …/leaderboard.json) and their status page
(…/leaderboard/export/): files a worker builds (export_files), never rows written inside
the request. A file is served only complete, with its row count and sha256; until it is
there the download answers 202 and the status page says it is being prepared.

Who may see the board is checked first, as on the board's page (404, 403, the Ladder).
The Ladder's board, one line per participant and no exact score, is still written in
the request: it grows with the participants, not with the entries.
"""

import base64

from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_http_methods, require_safe

from challenge_site.query_params import BadOptions
from challenge_site.submissions.storage import private_storage
from datasets.models import ScoredSplit

from . import export_files, ladder_board, services
from .exports import ladder_csv_lines, ladder_json_lines
from .models import BoardExport
from .queries import Board
from .views import _board, _hidden, _ladder, _plain, board_url, ladder_reason

FORMATS = tuple(BoardExport.Format.values)
RETRY_SECONDS = 5


def _filename(board: Board, fmt: str) -> str:
    dataset = board.dataset
    view = "best" if board.best else "all"
    split = f"{board.split}-{board.slice}" if board.slice else board.split
    return f"{dataset.challenge.slug}-{dataset.name}-{split}-{board.sort.name}-{view}.{fmt}"


def _private(response):
    # Publication can hide or reveal test scores: never reuse a stored copy unchecked.
    patch_cache_control(response, private=True, no_cache=True)
    return response


def status_url(board: Board, fmt: str) -> str:
    return board_url(board, "leaderboard_export", format=fmt)


def _ladder_download(request, board: Board, fmt: str):
    def url_for(pk):
        return request.build_absolute_uri(reverse("submission_detail", args=[pk]))

    if fmt == "json":
        loss = services.ranking_loss(board.dataset)
        meta = {
            "challenge": board.dataset.challenge.slug,
            "dataset": board.dataset.name,
            "split": board.split,
            "view": "ladder",
            "feedback": ladder_board.feedback_name(board),
        }
        lines = ladder_json_lines(board, url_for=url_for, loss=loss.name if loss else "", meta=meta)
    else:
        lines = ladder_csv_lines(board, url_for=url_for)
    response = StreamingHttpResponse(lines, content_type=export_files.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{_filename(board, fmt)}"'
    return _private(response)


def serve(request, board: Board, row: BoardExport):
    """The complete file, with what lets a reader check it is whole."""
    etag = f'"{row.sha256}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        handle = private_storage().open(row.file, "rb")
        response = FileResponse(handle, content_type=export_files.CONTENT_TYPES[row.format])
        response["Content-Length"] = str(row.bytes)
        response["Content-Disposition"] = f'attachment; filename="{_filename(board, row.format)}"'
    response["ETag"] = etag
    response["X-Row-Count"] = str(row.rows)
    response["X-Content-SHA256"] = row.sha256
    digest = base64.b64encode(bytes.fromhex(row.sha256)).decode()
    response["Repr-Digest"] = f"sha-256=:{digest}:"
    return _private(response)


def _failed(board: Board, row: BoardExport, fmt: str) -> HttpResponse:
    return _private(
        _plain(
            f"The {fmt.upper()} file of this board could not be built: {row.error} "
            f"Ask for another try on {status_url(board, fmt)}",
            status=503,
        )
    )


def _prepared(board: Board, fmt: str) -> HttpResponse:
    response = _plain(
        f"The {fmt.upper()} file of this board is being prepared; try again in a few "
        f"seconds, or follow {status_url(board, fmt)}",
        status=202,
    )
    response["Retry-After"] = str(RETRY_SECONDS)
    response["Location"] = status_url(board, fmt)
    return _private(response)


def _checked(request, slug, name, *, now):
    """(board, None) for a board the user may download; (None, the answer) otherwise."""
    try:
        board = _board(request, slug, name, now=now)
    except BadOptions as error:
        return None, _plain(str(error), status=400)
    if reason := _hidden(request, board, now=now):
        return None, _plain(reason, status=403)
    return board, None


def _file_of(board: Board, fmt: str, *, now, retry: bool = False):
    """(the board's export row, its current version), asking for a build when the file
    of that version is missing; where tasks run in-process, built by the time it returns."""
    audience = export_files.audience(board, now=now)
    current = export_files.version(board.dataset, board.split)
    row = export_files.find(board, fmt=fmt, audience=audience)
    if export_files.servable(row, current=current) and not retry:
        return row, current
    if export_files.failed(row, current=current) and not retry:
        return row, current
    row = export_files.request(
        board=board, fmt=fmt, audience=audience, current=current, retry=retry
    )
    return row, current


def _download(request, slug, name, fmt: str):
    now = timezone.now()
    board, answer = _checked(request, slug, name, now=now)
    if answer is not None:
        return answer
    if _ladder(request, board, now=now):
        return _ladder_download(request, board, fmt)
    row, current = _file_of(board, fmt, now=now)
    if export_files.servable(row, current=current):
        try:
            return serve(request, board, row)
        except OSError:  # the stored file went: build it again
            BoardExport.objects.filter(pk=row.pk).update(built=None, file="")
            row, current = _file_of(board, fmt, now=now)
            if export_files.servable(row, current=current):
                return serve(request, board, row)
    if export_files.failed(row, current=current):
        return _failed(board, row, fmt)
    return _prepared(board, fmt)


@require_safe
def leaderboard_csv(request, slug, name):
    """Every row of the leaderboard (not one page), in the page's order, as CSV."""
    return _download(request, slug, name, "csv")


@require_safe
def leaderboard_json(request, slug, name):
    """Every row of the leaderboard as one JSON document: the API's rows, the board's
    fields and the row count."""
    return _download(request, slug, name, "json")


@require_http_methods(["GET", "HEAD", "POST"])
def leaderboard_export(request, slug, name):
    """Where a board's file stands: being prepared (the page reloads itself), ready (its
    row count, size, sha256 and the link), or failed (why, and a button to try again)."""
    now = timezone.now()
    board, answer = _checked(request, slug, name, now=now)
    if answer is not None:
        return answer
    fmt = request.GET.get("format") or "csv"
    if fmt not in FORMATS:
        return _plain(
            f"format: expected one of {', '.join(FORMATS)}, found {fmt[:20]!r}", status=400
        )
    download_url = board_url(board, f"leaderboard_{fmt}")
    if _ladder(request, board, now=now):
        return _plain(
            f"{ladder_reason(board)} The Ladder's board downloads directly: {download_url}",
            status=403,
        )
    retry = request.method == "POST"
    row, current = _file_of(board, fmt, now=now, retry=retry)
    if retry:  # after the POST, a page that can be reloaded
        return redirect(status_url(board, fmt))
    if export_files.servable(row, current=current):
        state = "ready"
    elif export_files.failed(row, current=current):
        state = "failed"
    else:
        state = "preparing"
    dataset = board.dataset
    context = {
        "board": board,
        "dataset": dataset,
        "challenge": dataset.challenge,
        "split_label": ScoredSplit(board.split).label,
        "split_name": services.board_name(board),
        "view": services.VIEWS["best" if board.best else "all"],
        "format": fmt.upper(),
        "state": state,
        "row": row,
        "current": current,
        "download_url": download_url,
        "board_url": board_url(board),
        "retry_url": status_url(board, fmt),
        "refresh_seconds": RETRY_SECONDS,
    }
    response = render(request, "leaderboard/export.html", context)
    return _private(response)
