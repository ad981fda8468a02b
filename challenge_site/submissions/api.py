"""/api/v1/submissions/ (GET: one's own, api_list.py; POST: a new one) and
GET /api/v1/submissions/<id>/ (token, bearer token or session auth)."""

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from challenge_site.access import get_visible_or_404
from challenge_site.api_schema import FieldErrors, ParameterErrors, Participation, errors
from challenge_site.challenges.participation import participation_block
from challenge_site.challenges.policy import participation_missing, visible_challenges

from . import services
from .api_list import (
    PARAMETERS,
    LadderScoreSerializer,
    SubmissionPageSerializer,
    score_field,
    submission_list,
)
from .api_schema import FinalSelectionSerializer  # and the other API views' descriptions
from .evaluation import REPORTED_KEY
from .final_views import final_for
from .limits import LimitReached
from .models import Status, Submission
from .policy import can_see_private, visible_submissions
from .uploads import limit_upload_size, oversized, too_large_message
from .visibility import (
    api_certain,
    api_decomposition,
    api_ladder,
    api_scores,
    json_value,
    score_table,
)


class SizeLimitedMultiPartParser(MultiPartParser):
    """Multipart parsing with the submission size limit as the first upload handler."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit_upload_size(parser_context["request"])
        return super().parse(stream, media_type, parser_context)


class SubmissionCreateSerializer(serializers.Serializer):
    challenge = serializers.SlugField()
    dataset = serializers.CharField(required=False, allow_blank=True, max_length=40)
    method = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    authors = serializers.CharField(required=False, allow_blank=True, max_length=300)
    file = serializers.FileField()


class SubmissionCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Status.choices)
    url = serializers.URLField()
    api_url = serializers.URLField()


class SubmissionDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Status.choices)
    errors = serializers.ListField(child=serializers.JSONField(), help_text="owner only")
    failure = serializers.CharField(help_text="owner only")
    scores = serializers.DictField(child=serializers.DictField(child=score_field()))
    decomposition = serializers.DictField(
        child=serializers.DictField(
            child=serializers.DictField(child=score_field(), allow_null=True)
        )
    )
    reported = serializers.DictField(child=serializers.DictField(child=score_field()))
    certain = serializers.DictField(child=serializers.IntegerField(allow_null=True))
    ladder = serializers.DictField(child=LadderScoreSerializer())
    final_selection = FinalSelectionSerializer(allow_null=True)
    challenge = serializers.SlugField()
    dataset = serializers.CharField()
    method = serializers.CharField()
    mark = serializers.CharField()
    created = serializers.DateTimeField()
    is_baseline = serializers.BooleanField()
    team = serializers.CharField(allow_null=True)
    withdrawn_at = serializers.DateTimeField(allow_null=True)
    url = serializers.URLField()


_REFUSED = OpenApiResponse(
    FieldErrors,
    description="The form or the file refused: {field: [reasons]} (`file`: the file's "
    "line errors; `non_field_errors`: the whole submission's), or {detail} for a limit "
    "without a retry time.",
    examples=[
        OpenApiExample(
            "bad file",
            {"file": ["line 3: expected 2 numbers, found 1"]},
            status_codes=["400"],
            response_only=True,
        )
    ],
)


@extend_schema(
    methods=["GET"],
    operation_id="submissions_list",
    summary="Your submissions",
    parameters=PARAMETERS,
    responses={
        200: SubmissionPageSerializer,
        **errors(400, 401, 404, 429, s400=ParameterErrors),
    },
)
@extend_schema(
    methods=["POST"],
    operation_id="submissions_create",
    summary="Submit predictions",
    request={"multipart/form-data": SubmissionCreateSerializer},
    responses={
        201: SubmissionCreatedSerializer,
        **errors(400, 401, 403, 413, 429, s400=_REFUSED, s403=Participation),
    },
)
@api_view(["GET", "POST"])
@parser_classes([SizeLimitedMultiPartParser, FormParser])
def api_submissions(request):
    """GET lists the caller's submissions (api_list.submission_list); POST makes one."""
    if request.method == "GET":
        return submission_list(request)
    return create_submission(request)


def create_submission(request):
    """201 {"id", "status", "url"}; 400 with the reasons (a file that breaks the format
    gets its line errors even over a limit); 403 {"detail", "missing", "join_url"} until
    the user may take part; 429 over the daily limit."""
    now = timezone.now()
    serializer = SubmissionCreateSerializer(data=request.data)
    valid = serializer.is_valid()
    errors = dict(serializer.errors)
    if oversized(request, "file"):
        errors["file"] = [too_large_message()]
    if not valid or errors:
        return Response(errors, status=status.HTTP_400_BAD_REQUEST)
    data = serializer.validated_data
    challenge = (
        visible_challenges(user=request.user, now=now).filter(slug=data["challenge"]).first()
    )
    if challenge is None:
        return Response(
            {"challenge": [f"no challenge {data['challenge']!r}"]},
            status=status.HTTP_400_BAD_REQUEST,
        )
    missing = participation_missing(challenge, user=request.user)
    if missing:
        join = reverse("challenge_join", args=[challenge.slug])
        return Response(
            {
                "detail": participation_block(challenge, user=request.user),
                "missing": list(missing),
                "join_url": request.build_absolute_uri(join),
            },
            status=status.HTTP_403_FORBIDDEN,
        )
    try:
        submission = services.submit(
            user=request.user,
            challenge=challenge,
            dataset_name=data.get("dataset") or None,
            method=data["method"],
            description=data.get("description", ""),
            authors=data.get("authors", ""),
            upload=data["file"],
            now=now,
        )
    except services.Rejected as rejected:
        body = {
            ("non_field_errors" if field == "__all__" else field): problems
            for field, problems in rejected.errors.items()
        }
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    except LimitReached as limit:
        if limit.retry_after is None:
            return Response({"detail": limit.message}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {"detail": limit.message},
            status=status.HTTP_429_TOO_MANY_REQUESTS,
            headers={"Retry-After": str(limit.retry_after)},
        )
    submission.refresh_from_db(fields=["status"])  # scored already when tasks run in-process
    url = request.build_absolute_uri(reverse("submission_detail", args=[submission.pk]))
    api_url = request.build_absolute_uri(reverse("api_submission", args=[submission.pk]))
    return Response(
        {"id": submission.pk, "status": submission.status, "url": url, "api_url": api_url},
        status=status.HTTP_201_CREATED,
        headers={"Location": api_url},
    )


@extend_schema(
    operation_id="submissions_retrieve",
    summary="A submission, its status and the scores you may see",
    responses={200: SubmissionDetailSerializer, **errors(404, 429)},
)
@api_view(["GET"])
@permission_classes([AllowAny])
def api_submission(request, pk):
    """{"id", "status", "errors", "scores": {split: {loss: value or null}},
    "decomposition": {split: {loss: {"mcb", "dsc", "unc"}}}, …}; infinity as "inf".

    The same visibility as the submission's page: errors for its owner and staff only,
    test scores (and their decomposition) once results are published (staff: always).
    ``decomposition``: the CORP decomposition of brier and nlp (classification; {} for
    regression), for the same splits as ``scores``. ``reported``: {split: {name: value}},
    the values reported beside the losses and not ranked (a multiclass file with ensemble
    lines: its ``tu``, ``du`` and ``mi``), for the same splits; {} when there are none.
    ``certain``: {split: count or null} for the same splits, how many examples of the
    split's whole file the predictions claim certainty on (probability 0 or 1, a class of
    probability 0, zero variance: one whose ruled-out outcome happens makes nlp or nlpd
    infinite); a test part gives the whole test file's count; null for a
    non-probabilistic file and for a split scored before it was counted.
    """
    submission: Submission = get_visible_or_404(
        visible_submissions, user=request.user, now=timezone.now(), pk=pk
    )
    private = can_see_private(submission, user=request.user)
    return Response(
        {
            "id": submission.pk,
            "status": submission.status,
            "errors": submission.errors if private else [],
            "failure": submission.failure if private else "",
            "scores": api_scores(submission, user=request.user),
            "decomposition": api_decomposition(submission, user=request.user),
            "reported": api_reported(submission, user=request.user),
            "certain": api_certain(submission, user=request.user),
            # Splits shown through the Ladder: the participant's shown score, not the exact.
            "ladder": api_ladder(submission, user=request.user),
            "final_selection": final_for(submission, user=request.user, now=timezone.now()),
            "challenge": submission.dataset.challenge.slug,
            "dataset": submission.dataset.name,
            "method": submission.method,
            "mark": submission.mark,
            "created": submission.created,
            "is_baseline": submission.is_baseline,
            "team": submission.team.name if submission.team else None,
            "withdrawn_at": submission.withdrawn_at if private else None,
            "url": request.build_absolute_uri(reverse("submission_detail", args=[submission.pk])),
        }
    )


def api_reported(submission: Submission, *, user) -> dict:
    """{split: {name: value}}: what scoring reported beside the losses (stored with the
    split's plot data, evaluation.REPORTED_KEY) for the splits whose exact scores the user
    sees (never a split shown through the Ladder, nor a hidden test split)."""
    out = {}
    for entry in score_table(submission, user=user):
        if not (entry.visible and entry.result is not None):
            continue
        pairs = entry.result.plot_data.get(REPORTED_KEY)
        if isinstance(pairs, list) and pairs:  # [name, value] pairs, in scoring's order
            out[str(entry.split)] = {str(name): json_value(value) for name, value in pairs}
    return out
