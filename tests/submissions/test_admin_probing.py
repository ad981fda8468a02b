"""submissions.admin_probing: the probing flags in the submissions console: the column
with each flag's explanation, the filter, a number of queries that does not grow with
the rows listed, and an entry's page (the flags themselves: test_probing.py)."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from challenge_site.submissions import probing
from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION, make_user
from tests.leaderboard.helpers import add_entry, at, cls

from .helpers import constant_but, honest_lines

CHANGELIST = reverse("admin:submissions_submission_changelist")


@pytest.fixture
def upload(iris, submit_zip):
    def run(user, data: bytes, **fields):
        submission = submit_zip(
            user, iris.challenge, {"iris_val_predict.txt": data}, now=VALIDATION, **fields
        )
        assert submission.status == Status.SCORED, submission.errors or submission.failure
        return submission

    return run


def _rows(response) -> list[int]:
    return [s.pk for s in response.context["cl"].result_list]


@pytest.fixture
def console(challenge):
    client = Client()
    client.force_login(make_user("organiser", organiser_of=challenge))
    return client


def test_the_console_shows_and_filters_the_flags_in_bounded_queries(
    participant, other, upload, iris, console, django_assert_max_num_queries
):
    probe = upload(participant, constant_but(3))
    shared = honest_lines(seed=5)
    mine, theirs = upload(participant, shared), upload(other, shared)
    honest = upload(other, honest_lines(seed=6))

    response = console.get(CHANGELIST)
    assert response.status_code == 200
    page = response.content.decode()
    for code in (probing.CONSTANT, probing.SAME_FILE):
        label, explanation = probing.FLAGS[code]
        assert f'title="{escape(explanation)}">{label}</span>' in page
    # each flag with its evidence: the entry's numbers behind it
    assert '<small class="probing-evidence">(3 rows off the bulk of 40)</small>' in page
    assert '<small class="probing-evidence">(2 accounts sent this file)</small>' in page
    for label, explanation in probing.FLAGS.values():  # explained above the list
        assert f"<dt>{label}</dt><dd>{escape(explanation)}</dd>" in page
    assert f'?probing={probing.RUN}"' in page  # the filter offers every flag

    for code, expected in [
        (probing.CONSTANT, {probe}),
        (probing.SAME_FILE, {mine, theirs}),
        (probing.RUN, set()),
        (probing.BOOSTING, set()),
        (probing.COMBINED, set()),
        (probing.BURST, set()),
    ]:
        response = console.get(f"{CHANGELIST}?probing={code}")
        assert set(_rows(response)) == {s.pk for s in expected}, code
    assert _rows(console.get(f"{CHANGELIST}?probing=nope")) == []
    assert honest.pk in _rows(console.get(CHANGELIST))

    with CaptureQueriesContext(connection) as queries:
        assert console.get(CHANGELIST).status_code == 200
    few = len(queries)
    for minute in range(30):  # more rows, of other users, each with its own file
        entry = add_entry(
            iris, user=make_user(f"user{minute}"), created=at(minute), val=cls(0.6, 0.3)
        )
        Submission.objects.filter(pk=entry.pk).update(predictions_sha256=f"{minute:064x}")
    with django_assert_max_num_queries(few):
        response = console.get(CHANGELIST)
    assert len(_rows(response)) == 34


def test_an_entry_page_shows_its_final_ranking_fields_and_flags(participant, upload, console):
    probe = upload(participant, constant_but(2))
    page = console.get(reverse("admin:submissions_submission_change", args=[probe.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "In final ranking" in text or "in final ranking" in text.lower()
    assert probing.FLAGS[probing.CONSTANT][0] in text
    response = console.get(f"{CHANGELIST}?final__exact=1")
    assert _rows(response) == []
    probe.final = True
    probe.save(update_fields=["final"])
    assert _rows(console.get(f"{CHANGELIST}?final__exact=1")) == [probe.pk]
