import pytest
import time_machine
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Submission
from challenge_site.submissions import probing
from tests.factories import VALIDATION, make_user


@pytest.fixture
def ada(db):
    return make_user("ada")


@pytest.mark.parametrize("url,method", [
    ("/api/v1/submissions/", "get"),
    ("/api/v1/challenges/demo/team/", "get"),
    ("/api/v1/challenges/demo/team/", "post"),
    ("/api/v1/challenges/", "get"),
    ("/api/v1/challenges/demo/", "get"),
    ("/api/v1/challenges/demo/datasets/gaze.zip", "get"),
    ("/api/v1/submissions/999/withdraw/", "post"),
])
def test_throttled(settings, challenge, gaze, ada, url, method):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "api_user": "3/minute", "api_upload": "3/minute"}
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.create(user=ada).key}")
    with time_machine.travel(VALIDATION, tick=False):
        codes = [getattr(c, method)(url).status_code for _ in range(5)]
    print(url, method, codes)
    assert codes[-1] == 429


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Bearer \u00e9\u00e9", "bearer x", "Bearer " + "x" * 5000])
def test_bearer_odd(challenge, ada, header):
    c = APIClient(raise_request_exception=False)
    c.credentials(HTTP_AUTHORIZATION=header)
    r = c.get("/api/v1/submissions/")
    print(header[:20], r.status_code)
    assert r.status_code == 401


def test_inactive_bearer(challenge, ada):
    key = Token.objects.create(user=ada).key
    ada.is_active = False
    ada.save()
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert c.get("/api/v1/submissions/").status_code == 401


def test_same_file_flag_vs_filter_baseline(challenge, gaze, ada):
    base = Submission.objects.create(dataset=gaze, is_baseline=True, user=None, created=VALIDATION, queued_at=VALIDATION, phase="validation",
                                     predictions_sha256="abc", splits=["val"], method="b")
    mine = Submission.objects.create(dataset=gaze, user=ada, created=VALIDATION, queued_at=VALIDATION, phase="validation",
                                     predictions_sha256="abc", splits=["val"], method="m")
    column = probing.flags(Submission.objects.filter(pk__in=[base.pk, mine.pk]).select_related("dataset"))
    filt = set(Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE)).values_list("pk", flat=True))
    print({k: [f.code for f in v] for k, v in column.items()}, filt)
    col = {k for k, v in column.items() if any(f.code == probing.SAME_FILE for f in v)}
    assert col == filt
