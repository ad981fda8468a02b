"""The OpenAPI description of the API views that live beside their pages
(final_views.api_choose_final, withdrawal.api_withdraw, bulk_views.api_export_*).

drf-spectacular view extensions, named by their dotted path: the views' modules stay
about their behaviour, and this one is loaded with api.py (which every URL table loads).
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers

from challenge_site.api_schema import CSV, ZIP, FieldErrors, errors


class FinalSelectionSerializer(serializers.Serializer):
    """An entry's place among its participant's final selections (final_views.final_status)."""

    final = serializers.BooleanField()
    selectable = serializers.BooleanField()
    full = serializers.BooleanField()
    chosen = serializers.IntegerField()
    limit = serializers.IntegerField()
    in_final_ranking = serializers.BooleanField(allow_null=True)


class FinalChoiceSerializer(serializers.Serializer):
    final = serializers.BooleanField(help_text="true to count the entry, false to give it up")


class WithdrawnSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    withdrawn_at = serializers.DateTimeField()


_FINAL_REFUSED = OpenApiResponse(
    FieldErrors,
    description='{"final": ["expected true or false"]} for a bad body, {"detail": why} '
    "when the selection is refused (not the test phase, the limit reached…).",
)


class ChooseFinal(OpenApiViewExtension):
    target_class = "challenge_site.submissions.final_views.api_choose_final"

    def view_replacement(self):
        return extend_schema_view(
            post=extend_schema(
                operation_id="submissions_final",
                summary="Choose whether an entry counts for the final ranking",
                request=FinalChoiceSerializer,
                responses={
                    200: FinalSelectionSerializer,
                    **errors(400, 401, 404, 429, s400=_FINAL_REFUSED),
                },
                examples=[OpenApiExample("mark final", {"final": True}, request_only=True)],
            )
        )(type("Fixed", (self.target_class,), {}))


class Withdraw(OpenApiViewExtension):
    target_class = "challenge_site.submissions.withdrawal.api_withdraw"

    def view_replacement(self):
        return extend_schema_view(
            post=extend_schema(
                operation_id="submissions_withdraw",
                summary="Withdraw one of your entries from the leaderboards",
                request=None,
                responses={200: WithdrawnSerializer, **errors(400, 401, 404, 429)},
            )
        )(type("Fixed", (self.target_class,), {}))


_ORGANISERS = "Organisers of the challenge only; 404 for everyone else, as if it did not exist."


class ExportSubmissions(OpenApiViewExtension):
    target_class = "challenge_site.submissions.bulk_views.api_export_submissions"

    def view_replacement(self):
        return extend_schema_view(
            get=extend_schema(
                operation_id="export_submissions",
                summary="Every submission's file and a manifest (organisers)",
                description=_ORGANISERS,
                responses={
                    (200, "application/zip"): OpenApiResponse(ZIP, description="The zip."),
                    **errors(404, 429),
                },
            )
        )(type("Fixed", (self.target_class,), {}))


class ExportScores(OpenApiViewExtension):
    target_class = "challenge_site.submissions.bulk_views.api_export_scores"

    def view_replacement(self):
        return extend_schema_view(
            get=extend_schema(
                operation_id="export_scores",
                summary="Every score, test split included, one line per loss (organisers)",
                description=_ORGANISERS,
                responses={
                    (200, "text/csv"): OpenApiResponse(CSV, description="The CSV."),
                    **errors(404, 429),
                },
            )
        )(type("Fixed", (self.target_class,), {}))
