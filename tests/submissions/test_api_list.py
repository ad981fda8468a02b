"""GET /api/v1/submissions/: the caller's own submissions, paged and filtered."""

from datetime import timedelta

import pytest
import time_machine
from rest_framework.test import APIClient

from challenge_site.submissions import services
from challenge_site.submissions.models import Score, SplitResult, Status, Submission
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_challenge, make_dataset

from .helpers import predictions

URL = "/api/v1/submissions/"


def get(client, query: str = "", *, when=VALIDATION):
    with time_machine.travel(when, tick=False):
        return client.get(f"{URL}{query}")


def plain_entries(user, dataset, count: int, *, start=VALIDATION, **fields) -> list[Submission]:
    """``count`` queued entries, a minute apart, the newest at ``start``."""
    values = {"method": "m", "phase": "validation", "splits": ["val"]}
    values.update(fields)
    return Submission.objects.bulk_create(
        Submission(
            user=user,
            dataset=dataset,
            created=start - timedelta(minutes=i),
            queued_at=start - timedelta(minutes=i),
            **values,
        )
        for i in range(count)
    )


def copies_of(submission: Submission, count: int) -> None:
    """``count`` more entries with the scores and split results of ``submission``."""
    scores = list(Score.objects.filter(submission=submission))
    results = list(SplitResult.objects.filter(submission=submission))
    for i in range(count):
        clone = Submission.objects.get(pk=submission.pk)
        clone.pk = None
        clone.created = submission.created - timedelta(minutes=i + 1)
        clone.save()
        for row in scores + results:
            row.pk = None
            row.submission = clone
        Score.objects.bulk_create(scores)
        SplitResult.objects.bulk_create(results)


def test_only_the_callers_entries_newest_first_no_baseline(
    api_client, gaze, participant, other, submit_zip, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        services.refresh_baseline(dataset=gaze, now=VALIDATION)
    mine_first = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    submit_zip(other, gaze.challenge, predictions("gaze"), now=VALIDATION)
    mine_last = submit_zip(
        participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION
    )
    assert Submission.objects.filter(is_baseline=True, dataset=gaze).exists()
    body = get(api_client).json()
    assert [item["id"] for item in body["results"]] == [mine_last.pk, mine_first.pk]
    assert (body["page"], body["next"], body["previous"]) == (1, None, None)


def test_each_item_shows_what_the_detail_shows(api_client, gaze, participant, submit_zip):
    entry = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE
    )
    for when in (TEST_PHASE, AFTER):
        (item,) = get(api_client, when=when).json()["results"]
        with time_machine.travel(when, tick=False):
            detail = api_client.get(f"{URL}{entry.pk}/").json()
        assert item == {
            "id": entry.pk,
            "url": f"http://testserver/submissions/{entry.pk}/",
            "api_url": f"http://testserver/api/v1/submissions/{entry.pk}/",
            "challenge": "demo",
            "dataset": "gaze",
            "method": "Gaussian process",
            "status": "scored",
            "phase": "test",
            "mark": "",
            "created": detail["created"],
            "splits": ["val", "test"],
            "team": None,
            "made_by": "ada",
            "withdrawn": False,
            "withdrawn_at": None,
            "scores": detail["scores"],
            "ladder": detail["ladder"],
            "certain": detail["certain"],
        }
    # Test scores stay hidden until the results are published (then the detail shows them).
    assert set(item["scores"]) == {"val"}
    challenge = gaze.challenge
    with time_machine.travel(AFTER, tick=False):  # (publishing waits for the deadline)
        challenge.results_published = True
        challenge.save()
    (item,) = get(api_client, when=AFTER).json()["results"]
    assert set(item["scores"]) == {"val", "test"}
    assert (
        item["scores"]["test"]["nlpd"]
        == Score.objects.get(submission=entry, split="test", loss="nlpd").value
    )


def test_pages_of_fifty_with_links(api_client, gaze, participant):
    entries = plain_entries(participant, gaze, 120)
    page = get(api_client).json()
    assert [item["id"] for item in page["results"]] == [e.pk for e in entries[:50]]
    assert page["next"] == "http://testserver/api/v1/submissions/?page=2"
    assert page["previous"] is None
    page = get(api_client, "?page=3&status=queued").json()
    assert [item["id"] for item in page["results"]] == [e.pk for e in entries[100:]]
    assert page["next"] is None
    assert page["previous"] == "http://testserver/api/v1/submissions/?status=queued&page=2"
    assert get(api_client, "?page=4").status_code == 404
    response = get(api_client, "?page=0")
    assert response.status_code == 400
    assert response.json() == {"page": "expected a page number from 1, found '0'"}


def test_filters_by_challenge_dataset_and_status(api_client, gaze, catalysis, participant):
    other_challenge = make_challenge(slug="second", title="Second")
    wheat = make_dataset(other_challenge, "wheat", task="classification")
    gaze_queued = plain_entries(participant, gaze, 2)
    gaze_failed = plain_entries(participant, gaze, 1, status=Status.FAILED)
    (cat,) = plain_entries(participant, catalysis, 1)
    (wheat_entry,) = plain_entries(participant, wheat, 1)

    def ids(query):
        response = get(api_client, query)
        assert response.status_code == 200, response.json()
        return {item["id"] for item in response.json()["results"]}

    assert ids("?challenge=demo") == {e.pk for e in gaze_queued + gaze_failed} | {cat.pk}
    assert ids("?challenge=second") == {wheat_entry.pk}
    assert ids("?dataset=gaze") == {e.pk for e in gaze_queued + gaze_failed}
    assert ids("?challenge=demo&dataset=catalysis") == {cat.pk}
    assert ids("?status=failed") == {gaze_failed[0].pk}
    assert ids("?challenge=demo&dataset=gaze&status=queued") == {e.pk for e in gaze_queued}
    assert ids("?challenge=second&dataset=wheat&status=scored") == set()


def test_bad_filters_answer_400_naming_the_parameter_and_its_values(api_client, gaze, catalysis):
    make_challenge(slug="draft", title="Draft", opened_at=None)  # not visible: never named
    response = get(api_client, "?status=done&challenge=nope&dataset=wheat")
    assert response.status_code == 400
    assert response.json() == {
        "status": "expected one of queued, running, scored, invalid, failed, withdrawn, "
        "found 'done'",
        "challenge": "expected one of demo, found 'nope'",
        "dataset": "expected a dataset, one of catalysis, gaze, found 'wheat'",
    }
    response = get(api_client, "?challenge=demo&dataset=wheat")
    assert response.json() == {
        "dataset": "expected a dataset of demo, one of catalysis, gaze, found 'wheat'"
    }


def test_needs_authentication_and_takes_a_bearer_token(db, gaze, participant):
    from rest_framework.authtoken.models import Token

    response = get(APIClient())
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    plain_entries(participant, gaze, 1)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.create(user=participant).key}")
    assert len(get(client).json()["results"]) == 1


@pytest.mark.parametrize("copies", [0, 49])
def test_a_page_costs_the_same_queries_however_many_entries(
    api_client, gaze, participant, submit_zip, django_assert_max_num_queries, copies
):
    """No query per entry: the scores and split results come prefetched, one query each."""
    entry = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE
    )
    copies_of(entry, copies)
    with django_assert_max_num_queries(5):  # token, page, scores, split results, rights
        body = get(api_client, when=TEST_PHASE).json()
    assert len(body["results"]) == 1 + copies
    assert all(item["scores"] == body["results"][0]["scores"] for item in body["results"])
    assert set(body["results"][-1]["scores"]["val"]) == {"nlpd", "nmse", "crps", "rauc"}
