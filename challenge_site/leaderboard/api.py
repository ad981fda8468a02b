"""GET /api/v1/challenges/<slug>/datasets/<name>/leaderboard/?split=val&sort=nlpd&view=all&page=1

``slice=NAME`` ranks one slice of the split (scoring.md §8) once its slices may be seen
(challenges.policy.slices_visible); any other name is a 400 naming the parameter.

Public (token or session authentication only matters for staff, who see test scores
before publication). 50 rows per page with next/previous links: ``page=N`` for the first
pages, then ``after=``/``before=`` a row (keyset pages, services.SHALLOW_PAGES); no total
count, which would cost a scan of every entry (see queries.py).

Rows are exports.json_row's: scores, the bootstrap intervals (scoring.md §5) and their
heavy-tail marks (``heavy_tail``, ``vs_leader_heavy_tail``, ``vs_baseline_heavy_tail``
per loss, ``rank_interval_heavy_tail``: true where the interval may be too narrow).
"""

from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from challenge_site.access import get_visible_or_404
from challenge_site.api_schema import ParameterErrors, errors
from challenge_site.challenges import policy
from challenge_site.challenges.splits import ScoredSplit
from challenge_site.query_params import BadOptions, parse_page
from datasets.policy import visible_datasets

from . import ladder_board, services
from .exports import json_row
from .hidden import hidden_reason

# --- The OpenAPI description ---------------------------------------------------------

PARAMETERS = [
    OpenApiParameter(
        "split",
        OpenApiTypes.STR,
        enum=[ScoredSplit.VAL, ScoredSplit.TEST, ScoredSplit.PUBLIC, ScoredSplit.PRIVATE],
        description="val (default) or test; public and private: the test's two parts, "
        "where the challenge has a public part",
    ),
    OpenApiParameter(
        "sort",
        OpenApiTypes.STR,
        description="a loss of the dataset's task (nlpd, nmse, …); default its ranking loss",
    ),
    OpenApiParameter(
        "view", OpenApiTypes.STR, enum=list(services.VIEWS), description="all or best"
    ),
    OpenApiParameter("slice", OpenApiTypes.STR, description="a slice of the split, once shown"),
    OpenApiParameter(
        "page",
        {"type": "integer", "minimum": 1, "maximum": services.SHALLOW_PAGES},
        description="from 1, up to 20 (then the next links); 50 rows a page",
    ),
    OpenApiParameter("after", OpenApiTypes.STR, description="the page after a row (next links)"),
    OpenApiParameter("before", OpenApiTypes.STR, description="the page before a row"),
]


class BoardRowSerializer(serializers.Serializer):
    """A row (exports.json_row; ladder_board.json_row on the Ladder: rank, submission, url,
    participant, method, created, scores, precision, entries)."""

    rank = serializers.IntegerField(allow_null=True)
    submission = serializers.IntegerField()
    url = serializers.URLField()
    participant = serializers.CharField()
    method = serializers.CharField()
    created = serializers.CharField(help_text="ISO 8601")
    scores = serializers.DictField(
        child=serializers.JSONField(), help_text='{loss: a number, "inf" or null}'
    )


class BoardPageSerializer(serializers.Serializer):
    challenge = serializers.SlugField()
    dataset = serializers.CharField()
    split = serializers.CharField()
    sort = serializers.CharField(allow_null=True)
    view = serializers.ChoiceField(choices=["all", "best", "ladder"])
    feedback = serializers.ChoiceField(choices=["exact", "ladder", "board_ladder"])
    page = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = BoardRowSerializer(many=True)


@extend_schema(
    operation_id="leaderboard",
    summary="A dataset's leaderboard",
    parameters=PARAMETERS,
    responses={
        200: BoardPageSerializer,
        **errors(
            400,
            403,
            404,
            429,
            s400=ParameterErrors,
            s403=OpenApiResponse(
                errors(403)[403].response,
                description="The split's scores are hidden until the results are published.",
            ),
        ),
    },
)
@api_view(["GET"])
@permission_classes([AllowAny])
def api_leaderboard(request, slug, name):
    """{"challenge", "dataset", "split", "sort", "view", "page", "next", "previous",
    "results": [{rank, submission, participant, method, mark, created, scores, …}]}.

    404 for a dataset the user may not see (or a page past the end), 403 with the
    reason for test scores before publication, 400 naming wrong parameters.
    """
    now = timezone.now()
    dataset = get_visible_or_404(
        visible_datasets, user=request.user, now=now, challenge__slug=slug, name=name
    )
    try:
        board = services.parse_board(
            dataset=dataset,
            split=request.query_params.get("split"),
            sort=request.query_params.get("sort"),
            view=request.query_params.get("view"),
            slice=request.query_params.get("slice"),
            user=request.user,
            now=now,
        )
        number = parse_page(request.query_params.get("page"))
        cursor = services.parse_cursor(
            after=request.query_params.get("after"), before=request.query_params.get("before")
        )
    except BadOptions as error:
        return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
    reason = hidden_reason(dataset.challenge, split=board.split, user=request.user, now=now)
    if reason:
        return Response({"detail": reason}, status=status.HTTP_403_FORBIDDEN)
    path = reverse("api_leaderboard", args=[slug, name])

    def link(number: int) -> str:
        query = urlencode(services.board_params(board, page=number))
        return request.build_absolute_uri(f"{path}?{query}")

    def page_link(params: dict | None) -> str | None:
        if params is None:
            return None
        query = urlencode(services.board_params(board, **params))
        return request.build_absolute_uri(f"{path}?{query}")

    def submission_url(pk: int) -> str:
        return request.build_absolute_uri(reverse("submission_detail", args=[pk]))

    if policy.ladder_applies(dataset.challenge, board.split, user=request.user, now=now):
        rows, has_next = ladder_board.page(board, number=number, size=services.PAGE_SIZE)
        if number > 1 and not rows:
            return Response({"detail": "Invalid page."}, status=status.HTTP_404_NOT_FOUND)
        loss = services.ranking_loss(dataset)
        return Response(
            {
                "challenge": dataset.challenge.slug,
                "dataset": dataset.name,
                "split": board.split,
                "sort": loss.name if loss else None,
                "view": "ladder",
                "feedback": ladder_board.feedback_name(board),
                "page": number,
                "next": link(number + 1) if has_next else None,
                "previous": link(number - 1) if number > 1 else None,
                "results": [
                    ladder_board.json_row(
                        row, url=submission_url(row.submission), loss=loss.name if loss else ""
                    )
                    for row in rows
                ],
            }
        )
    try:
        services.check_shallow(number)
    except BadOptions as error:
        return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
    page = services.leaderboard_page(board=board, number=number, cursor=cursor)
    if (number > 1 or cursor) and not page.rows:
        return Response({"detail": "Invalid page."}, status=status.HTTP_404_NOT_FOUND)

    return Response(
        {
            "challenge": dataset.challenge.slug,
            "dataset": dataset.name,
            "split": board.split,
            "sort": board.sort.name,
            "view": "best" if board.best else "all",
            "slice": board.slice or None,
            "feedback": "exact",
            "final_ranking": board.final,
            "page": page.number,
            "next": page_link(page.next_params()),
            "previous": page_link(page.previous_params()),
            "results": [
                json_row(board, row, url=submission_url(row.entry.pk)) for row in page.rows
            ],
        }
    )
