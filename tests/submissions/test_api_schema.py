"""challenge_site/submissions/api_schema.py: the description of the API views that live
beside their pages (final selection, withdrawal, organisers' exports), checked against
what those views really answer."""

import pytest
import time_machine
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site import api_schema
from challenge_site.submissions.api import SubmissionDetailSerializer
from challenge_site.submissions.api_schema import WithdrawnSerializer
from tests.factories import VALIDATION

from .helpers import predictions


@pytest.fixture(scope="module")
def paths():
    return api_schema.schema_document()["paths"]


def _api(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.create(user=user).key}")
    return api


def test_the_documented_fields_are_those_answered(challenge, gaze, participant, submit_zip):
    entry = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    api = _api(participant)
    with time_machine.travel(VALIDATION, tick=False):
        detail = api.get(f"/api/v1/submissions/{entry.pk}/")
        withdrawn = api.post(f"/api/v1/submissions/{entry.pk}/withdraw/")
    assert detail.status_code == 200 and withdrawn.status_code == 200
    assert set(detail.json()) == set(SubmissionDetailSerializer().fields)
    assert set(withdrawn.json()) == set(WithdrawnSerializer().fields)


def test_final_selection_and_withdrawal_take_posts_and_document_refusals(paths):
    final = paths["/api/v1/submissions/{id}/final/"]["post"]
    assert final["operationId"] == "submissions_final"
    body = final["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/FinalChoiceRequest")
    assert set(final["responses"]) == {"200", "400", "401", "404", "429"}
    assert set(final["responses"]["400"]["content"]) == {"application/json"}
    assert len(final["responses"]["400"]["content"]["application/json"]["schema"]["anyOf"]) == 2
    withdraw = paths["/api/v1/submissions/{id}/withdraw/"]["post"]
    assert "requestBody" not in withdraw
    assert withdraw["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Withdrawn"
    )


def test_exports_are_files_and_404_for_everyone_but_organisers(paths):
    zip_answers = paths["/api/v1/challenges/{slug}/export/submissions.zip"]["get"]["responses"]
    csv_answers = paths["/api/v1/challenges/{slug}/export/scores.csv"]["get"]["responses"]
    assert zip_answers["200"]["content"]["application/zip"]["schema"] == {
        "type": "string",
        "format": "binary",
    }
    assert list(csv_answers["200"]["content"]) == ["text/csv"]
    # No 403: anyone but an organiser gets the 404 of a missing challenge.
    assert set(zip_answers) == set(csv_answers) == {"200", "400", "401", "404", "429"}
    # Their 400 is only the site's refusal of a NUL byte, before any view.
    assert zip_answers["400"]["content"]["application/json"]["schema"]["required"] == ["detail"]
