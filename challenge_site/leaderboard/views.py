from functools import lru_cache
from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges import policy
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.tabs import tabs_for
from challenge_site.query_params import BadOptions, parse_page
from datasets.models import ScoredSplit
from datasets.policy import visible_datasets
from scoring.bootstrap import RESAMPLES

from . import forest, ladder_board, plot_drawings, plots, services, slices, statistics
from .display import display_rows, interval_summary
from .hidden import hidden_reason
from .queries import Board
from .separation import separation


@lru_cache(maxsize=256)
def _board_path(name: str, slug: str, dataset: str, prefix: str, urlconf) -> str:
    return reverse(name, urlconf=urlconf, args=[slug, dataset])


def board_url(board: Board, name: str = "leaderboard", **changes) -> str:
    # A page links to its board a dozen times (sorts, splits, views, pages, exports):
    # reversed once per board and view, keyed on what reverse depends on.
    dataset = board.dataset
    path = _board_path(
        name, dataset.challenge.slug, dataset.name, get_script_prefix(), get_urlconf()
    )
    return f"{path}?{urlencode(services.board_params(board, **changes))}"


def _board(request, slug: str, name: str, *, now) -> Board:
    """The board a request names: 404 for a dataset the user may not see; BadOptions."""
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    return services.parse_board(
        dataset=dataset,
        split=request.GET.get("split"),
        sort=request.GET.get("sort"),
        view=request.GET.get("view"),
        slice=request.GET.get("slice"),
        user=request.user,
        now=now,
    )


def _cursor(request) -> services.Cursor | None:
    return services.parse_cursor(after=request.GET.get("after"), before=request.GET.get("before"))


def _page_url(board: Board, params: dict | None) -> str | None:
    return None if params is None else board_url(board, **params)


def _hidden(request, board: Board, *, now) -> str | None:
    return hidden_reason(board.dataset.challenge, split=board.split, user=request.user, now=now)


def _ladder(request, board: Board, *, now) -> bool:
    return policy.ladder_applies(board.dataset.challenge, board.split, user=request.user, now=now)


def ladder_reason(board: Board) -> str:
    """Why a split's exact scores, plots and intervals are not shown yet (the Ladder)."""
    if board.split == ScoredSplit.VAL:
        when = "when the validation targets are released, as the test phase begins"
    else:
        when = "when the results are published"
    return (
        f"This challenge shows {ScoredSplit(board.split).label.lower()} scores through the "
        f"Ladder: exact scores, the other losses, intervals and plots appear {when}."
    )


def _ladder_page(request, board: Board, *, number: int, now):
    rows, has_next = ladder_board.page(board, number=number, size=services.PAGE_SIZE)
    if number > 1 and not rows:
        raise Http404("No such page.")
    dataset = board.dataset
    context = {
        "board": board,
        "dataset": dataset,
        "challenge": dataset.challenge,
        "rows": rows,
        "loss": services.ranking_loss(dataset),
        "reason": ladder_reason(board),
        "board_ladder": ladder_board.shared(board),
        "split_label": ScoredSplit(board.split).label,
        "previous_url": board_url(board, page=number - 1) if number > 1 else None,
        "next_url": board_url(board, page=number + 1) if has_next else None,
        "csv_url": board_url(board, "leaderboard_csv"),
        "api_url": board_url(board, "api_leaderboard"),
        **_switches(board, user=request.user, now=now),
    }
    return render(request, "leaderboard/ladder.html", context)


def _switches(board: Board, *, user, now) -> dict:
    """Links between splits, views and the challenge's other datasets (same options)."""
    challenge = board.dataset.challenge
    splits = [
        {
            "label": ScoredSplit(split).label,
            "url": board_url(board, split=split, slice=""),
            "current": split == board.split,
            "hidden": hidden_reason(challenge, split=split, user=user, now=now),
        }
        for split in services.board_splits(challenge)
    ]
    views = [
        {
            "label": label,
            "url": board_url(board, view=view),
            "current": (view == "best") is board.best,
        }
        for view, label in services.VIEWS.items()
    ]
    datasets = [
        {
            "name": dataset.name,
            "url": board_url(
                Board(dataset, board.split, services.default_sort(dataset), board.best)
            ),
            "current": dataset.pk == board.dataset.pk,
        }
        for dataset in challenge.datasets.all()
    ]
    # The split's slices (scoring.md §8), once the user may know of them: none before.
    names = slices.visible_names(board.dataset, board.split, user=user, now=now)
    slice_links = [
        {
            "label": label,
            "url": board_url(board, slice=name),
            "current": name == board.slice,
        }
        for name, label in [("", "Whole split"), *((name, name) for name in names)]
    ]
    return {
        "splits": splits,
        "views": views,
        "datasets": datasets,
        "slices": slice_links if names else [],
    }


def _columns(board: Board) -> list[dict]:
    ranking = services.ranking_loss(board.dataset)
    return [
        {
            "loss": loss,
            "url": board_url(board, sort=loss.name),
            "sorted": loss == board.sort,
            "gain_after": ranking is not None and loss == ranking,
        }
        for loss in board.losses
    ]


@require_safe
def leaderboard(request, slug, name):
    now = timezone.now()
    try:
        board = _board(request, slug, name, now=now)
        number = parse_page(request.GET.get("page"))
        cursor = _cursor(request)
    except BadOptions as error:
        context = {"errors": error.errors, "slug": slug, "name": name}
        return render(request, "leaderboard/bad_request.html", context, status=400)
    reason = _hidden(request, board, now=now)
    if reason:
        context = {
            "board": board,
            "dataset": board.dataset,
            "challenge": board.dataset.challenge,
            "reason": reason,
            "split_label": ScoredSplit(board.split).label,
            **_switches(board, user=request.user, now=now),
        }
        return render(request, "leaderboard/hidden.html", context, status=403)
    if _ladder(request, board, now=now):
        return _ladder_page(request, board, number=number, now=now)
    try:
        services.check_shallow(number)
    except BadOptions as error:
        context = {"errors": error.errors, "slug": slug, "name": name}
        return render(request, "leaderboard/bad_request.html", context, status=400)
    page = services.leaderboard_page(board=board, number=number, cursor=cursor)
    if (number > 1 or cursor) and not page.rows:
        raise Http404("No such page.")
    dataset = board.dataset
    ranking, point = services.ranking_loss(dataset), services.point_loss(dataset)
    plot = None
    if ranking is not None and point is not None and ranking != point:
        plot = _plot_section(board, ranking=ranking, point=point)
    intervals = interval_summary(page.rows, sort=board.sort)
    context = {
        "board": board,
        "page": page,
        "rows": display_rows(page.rows, ranking=ranking, sort=board.sort, best=board.best),
        "intervals": intervals,
        "resamples": RESAMPLES,
        # Losses without per-example terms get no interval (scoring.md §5).
        "without_intervals": [loss.name for loss in board.losses if loss.terms is None],
        "forest_url": board_url(board, "leaderboard_forest", **page.params())
        if intervals.sort_shown
        else None,
        "dataset": dataset,
        "challenge": dataset.challenge,
        "columns": _columns(board),
        "ranking": ranking,
        "unit": services.gain_unit(dataset),
        "log_loss": ranking is not None and ranking.log_scale,
        "split_label": ScoredSplit(board.split).label,
        "split_name": services.board_name(board),
        "point_links": [
            {"loss": loss, "url": board_url(board, sort=loss.name)}
            for loss in board.losses
            if not loss.probabilistic
        ],
        "previous_url": _page_url(board, page.previous_params()),
        "next_url": _page_url(board, page.next_params()),
        "csv_url": board_url(board, "leaderboard_csv"),
        "api_url": board_url(board, "api_leaderboard"),
        "plot": plot,
        **_switches(board, user=request.user, now=now),
    }
    return render(request, "leaderboard/leaderboard.html", context)


def _plain(message: str, *, status: int) -> HttpResponse:
    return HttpResponse(message + "\n", content_type="text/plain; charset=utf-8", status=status)


def _plot_of(board: Board, *, ranking, point) -> plot_drawings.Plot:
    return plot_drawings.Plot(board.dataset.pk, board.split, board.key(ranking), board.key(point))


def _plot_section(board: Board, *, ranking, point) -> dict:
    """The page's plot: its latest finished drawing's facts (never drawn here; a stale or
    missing drawing is asked of a worker)."""
    dataset = board.dataset
    where = {"split": board.split, **({"slice": board.slice} if board.slice else {})}
    plot = _plot_of(board, ranking=ranking, point=point)
    row = plot_drawings.latest(dataset, plot, svg=False)
    drawn = row is not None and row.drawn_at is not None
    return {
        "url": reverse("leaderboard_plot", args=[dataset.challenge.slug, dataset.name])
        + f"?{urlencode(where)}",
        "ranking": ranking,
        "point": point,
        "drawn": drawn,
        "drawn_at": row.drawn_at if drawn else None,
        "behind": drawn and row.behind,
        "entries": row.entries if drawn else 0,
        "density": drawn and plots.density(row.entries),
        "left_out": row.left_out if drawn else 0,
    }


@require_safe
def leaderboard_plot(request, slug, name):
    """The dataset's ranking loss against its point loss for one split, as SVG: the latest
    drawing a worker finished (plot_drawings), or 503 while the first is being drawn."""
    now = timezone.now()
    try:
        board = _board(request, slug, name, now=now)
    except BadOptions as error:
        return _plain(str(error), status=400)
    if reason := _hidden(request, board, now=now):
        return _plain(reason, status=403)
    if _ladder(request, board, now=now):
        return _plain(ladder_reason(board), status=403)
    dataset = board.dataset
    ranking, point = services.ranking_loss(dataset), services.point_loss(dataset)
    if ranking is None or point is None or ranking == point:
        raise Http404("This dataset has no second loss to plot against.")
    plot = _plot_of(board, ranking=ranking, point=point)
    row = plot_drawings.latest(dataset, plot)
    if row is None or row.drawn_at is None:
        response = _plain("The plot is being drawn; try again in a few seconds.", status=503)
        response["Retry-After"] = "5"
        patch_cache_control(response, no_store=True)
        return response
    etag = f'"plot-{dataset.pk}-{board.split}-{plot.ranking}-{plot.point}-{row.drawn}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = HttpResponse(row.svg, content_type="image/svg+xml")
    response["ETag"] = etag
    # Publication can hide or reveal test scores: never reuse a stored copy unchecked.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def leaderboard_forest(request, slug, name):
    """The 95 % intervals of a leaderboard page's entries under its sort loss, as SVG: the
    page's rows (same split, sort, view and page), under the page's visibility rules."""
    now = timezone.now()
    try:
        board = _board(request, slug, name, now=now)
        number = parse_page(request.GET.get("page"))
        services.check_shallow(number)
        cursor = _cursor(request)
    except BadOptions as error:
        return _plain(str(error), status=400)
    if reason := _hidden(request, board, now=now):
        return _plain(reason, status=403)
    if _ladder(request, board, now=now):
        return _plain(ladder_reason(board), status=403)
    if board.sort.terms is None:
        raise Http404(f"{board.sort.name} has no intervals.")
    page = services.leaderboard_page(board=board, number=number, cursor=cursor)
    if (number > 1 or cursor) and not page.rows:
        raise Http404("No such page.")
    dataset = board.dataset
    view = "each participant's best entry" if board.best else "all entries"
    title = (
        f"{dataset.name}, {services.board_name(board)}, {view}: "
        f"95 % intervals of {board.sort.name}"
        + (f", entries {page.first}–{page.last}" if page.rows else "")
    )
    data = forest.bars(page.rows, sort=board.sort)
    key = forest.fingerprint(data, loss=board.sort, title=title)
    etag = f'"forest-{key}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        svg = forest.cached_svg(data, loss=board.sort, title=title, key=key)
        response = HttpResponse(svg, content_type="image/svg+xml")
    response["ETag"] = etag
    # Publication can hide or reveal test scores: never reuse a stored copy unchecked.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def results(request, slug):
    """Per dataset, the leading test entries under the ranking loss, once published;
    before that, when the results come (and a preview for staff)."""
    now = timezone.now()
    challenge = get_visible_or_404(policy.visible_challenges, user=request.user, now=now, slug=slug)
    shown = policy.results_visible(challenge, user=request.user)
    tables, datasets = [], None
    if shown:
        datasets = list(visible_datasets(user=request.user, now=now).filter(challenge=challenge))
        split = services.final_split(challenge)
        tables = [
            (result, separation(result))
            for dataset in datasets
            if (
                result := services.dataset_results(
                    dataset=dataset,
                    names=tuple(
                        slices.visible_names(
                            dataset, services.sliced_split(split), user=request.user, now=now
                        )
                    ),
                )
            )
            is not None
        ]
    context = {
        "challenge": challenge,
        "phase": current_phase(challenge, now=now),
        "shown": shown,
        "preview": policy.results_preview(challenge, user=request.user),
        "statistics_visible": statistics.statistics_visible(challenge, user=request.user),
        "deadline_passed": now > challenge.deadline,
        "tables": tables,
        "size": services.RESULTS_SIZE,
        "resamples": RESAMPLES,
        "tabs": tabs_for(
            challenge, active="results", user=request.user, now=now, datasets=datasets
        ),
    }
    return render(request, "leaderboard/results.html", context)


@require_safe
def index(request):
    """Every challenge with links to its datasets' leaderboards and its results."""
    now = timezone.now()
    datasets = visible_datasets(user=request.user, now=now)
    by_challenge = {}
    for dataset in datasets:
        by_challenge.setdefault(dataset.challenge_id, []).append(dataset)
    challenges = [
        {
            "challenge": challenge,
            "datasets": by_challenge.get(challenge.pk, []),
            "test_visible": policy.split_visible(
                challenge, policy.HIDDEN_UNTIL_PUBLICATION, user=request.user
            ),
        }
        for challenge in policy.visible_challenges(user=request.user, now=now)
    ]
    return render(request, "leaderboard/index.html", {"challenges": challenges})
