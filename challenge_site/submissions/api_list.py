"""GET /api/v1/submissions/?challenge=<slug>&dataset=<name>&status=<status>&page=N

The caller's own submissions, their team's included (policy.owned_submissions), newest
first; never anyone else's, never a baseline. 50 per page with next/previous links and no
total count, as the leaderboard API pages. Each item carries the scores the caller may
see, as GET /api/v1/submissions/<id>/ shows them. A bad filter value is a 400 naming the
parameter and the values it takes. A page costs a fixed number of queries, whatever its
length: the page, its scores and split results (prefetched), and the caller's organiser
rights (remembered on the user).
"""

from urllib.parse import urlencode

from django.db.models import Prefetch
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers, status
from rest_framework.response import Response

from challenge_site.challenges.models import Phase
from challenge_site.challenges.policy import visible_challenges
from challenge_site.query_params import BadOptions, parse_page
from datasets.policy import visible_datasets

from .models import Score, SplitResult, Status, Submission
from .policy import owned_submissions
from .visibility import api_certain, api_ladder, api_scores, score_table

PAGE_SIZE = 50
FILTERS = ("challenge", "dataset", "status")

# Not a status: an entry its participant withdrew (whatever its status).
WITHDRAWN = "withdrawn"


# --- The OpenAPI description of GET (api.api_submissions) ----------------------------

PARAMETERS = [
    OpenApiParameter("challenge", OpenApiTypes.STR, description="a challenge's slug"),
    OpenApiParameter("dataset", OpenApiTypes.STR, description="a dataset's name"),
    OpenApiParameter(
        "status",
        OpenApiTypes.STR,
        enum=[*Status.values, WITHDRAWN],
        description="a status, or `withdrawn` for the entries withdrawn",
    ),
    OpenApiParameter(
        "page", {"type": "integer", "minimum": 1}, description="from 1; 50 entries a page"
    ),
]


# Scores as the API writes them: a number, "inf" or "-inf" (JSON has no infinity), or null.
def score_field():
    return serializers.JSONField(help_text='a number, "inf", "-inf" or null')


class LadderScoreSerializer(serializers.Serializer):
    loss = serializers.CharField()
    shown = serializers.JSONField(help_text='the shown score: a number, "inf" or null')
    precision = serializers.FloatField(allow_null=True)
    accepted = serializers.BooleanField(allow_null=True)
    ladder = serializers.ChoiceField(
        choices=["board", "participant"],
        help_text="board: the board's Ladder (shown is this entry's released score, if any); "
        "participant: the participant's own Ladder",
    )
    note = serializers.CharField(
        allow_blank=True,
        help_text="why no score is shown (not released by the board's Ladder, or withheld "
        "from an account that joined during the test phase); empty when one is",
    )


class SubmissionItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    api_url = serializers.URLField()
    challenge = serializers.SlugField()
    dataset = serializers.CharField()
    method = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)
    phase = serializers.ChoiceField(choices=Phase.choices)
    mark = serializers.CharField()
    created = serializers.DateTimeField()
    splits = serializers.ListField(child=serializers.CharField())
    team = serializers.CharField(allow_null=True)
    made_by = serializers.CharField()
    withdrawn = serializers.BooleanField()
    withdrawn_at = serializers.DateTimeField(allow_null=True)
    scores = serializers.DictField(
        child=serializers.DictField(child=score_field()), help_text="{split: {loss: score}}"
    )
    ladder = serializers.DictField(child=LadderScoreSerializer(), help_text="{split: …}")
    certain = serializers.DictField(child=serializers.IntegerField(allow_null=True))


class SubmissionPageSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = SubmissionItemSerializer(many=True)


def submission_list(request) -> Response:
    """{"page", "next", "previous", "results": [{"id", "url", "api_url", "challenge",
    "dataset", "method", "status", "phase", "mark", "created", "splits", "scores",
    "ladder"}]}; 400 {parameter: why} for a bad filter or page, 404 past the last page."""
    user, now = request.user, timezone.now()
    params = {name: request.query_params.get(name, "") for name in FILTERS}
    owned = owned_submissions(user)
    try:
        submissions = filtered(owned, user=user, now=now, **params)
        number = parse_page(request.query_params.get("page"))
    except BadOptions as error:
        return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
    offset = (number - 1) * PAGE_SIZE
    page = list(with_scores(submissions)[offset : offset + PAGE_SIZE + 1])
    has_next = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    if number > 1 and not page:
        return Response({"detail": "Invalid page."}, status=status.HTTP_404_NOT_FOUND)
    path = reverse("api_submission_create")

    def link(n: int) -> str:
        query = urlencode({**{k: v for k, v in params.items() if v}, "page": n})
        return request.build_absolute_uri(f"{path}?{query}")

    return Response(
        {
            "page": number,
            "next": link(number + 1) if has_next else None,
            "previous": link(number - 1) if number > 1 else None,
            "results": [item(request, submission, now=now) for submission in page],
        }
    )


def filtered(submissions, *, user, now, challenge: str, dataset: str, status: str):
    """``submissions`` narrowed by the filters given; BadOptions names each bad one with
    the values it takes (the challenges and datasets the user may see or has entries in)."""
    errors = {}
    statuses = [*Status.values, WITHDRAWN]
    if status and status not in statuses:
        errors["status"] = f"expected one of {', '.join(statuses)}, found {status!r}"
    if challenge:
        known = _challenges(submissions, user=user, now=now)
        if challenge not in known:
            errors["challenge"] = f"expected one of {', '.join(known)}, found {challenge!r}"
    if dataset:
        within = "" if "challenge" in errors else challenge
        known = _datasets(submissions, user=user, now=now, challenge=within)
        if dataset not in known:
            of = f" of {within}" if within else ""
            errors["dataset"] = (
                f"expected a dataset{of}, one of {', '.join(known) or '(none)'}, found {dataset!r}"
            )
    if errors:
        raise BadOptions(errors)
    if status == WITHDRAWN:
        submissions = submissions.filter(withdrawn_at__isnull=False)
    elif status:
        submissions = submissions.filter(status=status)
    if challenge:
        submissions = submissions.filter(dataset__challenge__slug=challenge)
    if dataset:
        submissions = submissions.filter(dataset__name=dataset)
    return submissions


def _challenges(owned, *, user, now) -> list[str]:
    """Slugs a challenge filter takes: the challenges the user may see, and those of
    their own entries."""
    visible = visible_challenges(user=user, now=now).values_list("slug", flat=True)
    mine = owned.values_list("dataset__challenge__slug", flat=True)
    return sorted(set(visible) | set(mine))


def _datasets(owned, *, user, now, challenge: str) -> list[str]:
    """Names a dataset filter takes: the datasets the user may see and those of their own
    entries (of ``challenge`` only, when given)."""
    visible = visible_datasets(user=user, now=now)
    if challenge:
        visible = visible.filter(challenge__slug=challenge)
        owned = owned.filter(dataset__challenge__slug=challenge)
    names = set(visible.values_list("name", flat=True))
    return sorted(names | set(owned.values_list("dataset__name", flat=True)))


def with_scores(submissions):
    """Newest first, with what score_table reads prefetched (two queries per page)."""
    return (
        submissions.select_related("dataset__challenge", "team", "user")
        .prefetch_related(
            Prefetch(
                "scores",
                queryset=Score.objects.only(
                    "submission",
                    "split",
                    "loss",
                    "value",
                    "ladder_value",
                    "ladder_precision",
                    "ladder_accepted",
                ),
            ),
            Prefetch("split_results", queryset=SplitResult.objects.defer("plot_data")),
        )
        .order_by("-created", "-id")
    )


def item(request, submission: Submission, *, now) -> dict:
    user = request.user
    table = score_table(submission, user=user, now=now)
    return {
        "id": submission.pk,
        "url": request.build_absolute_uri(reverse("submission_detail", args=[submission.pk])),
        "api_url": request.build_absolute_uri(reverse("api_submission", args=[submission.pk])),
        "challenge": submission.dataset.challenge.slug,
        "dataset": submission.dataset.name,
        "method": submission.method,
        "status": submission.status,
        "phase": submission.phase,
        "mark": submission.mark,
        "created": submission.created,
        "splits": list(submission.splits),
        # The team it belongs to (its name on the boards) and which member made it.
        "team": submission.team.name if submission.team else None,
        "made_by": submission.user.get_username(),
        "withdrawn": submission.withdrawn_at is not None,
        "withdrawn_at": submission.withdrawn_at,
        "scores": api_scores(submission, user=user, table=table),
        # Splits shown through the Ladder: the participant's shown score, not the exact.
        "ladder": api_ladder(submission, user=user, table=table),
        # Examples claiming certainty per shown split (visibility.api_certain).
        "certain": api_certain(submission, user=user, table=table),
    }
