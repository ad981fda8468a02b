"""Probing flags (challenge_site.submissions.probing) on real uploads scored by the
pipeline, and in the submissions console: the column with each flag's explanation, the
filter, and a number of queries that does not grow with the rows listed."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from challenge_site.submissions import probing
from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, at, cls

from .helpers import probability_lines

CHANGELIST = reverse("admin:submissions_submission_changelist")
ROWS = 40  # validation rows: enough for "a few" (at most 10) to be few


@pytest.fixture
def iris(challenge):
    """Classification, 40 validation examples."""
    return make_dataset(challenge, "iris", task="classification", sizes=(6, ROWS, 5), seed=4)


def _lines(values) -> bytes:
    return "".join(f"{value:.6g}\n" for value in values).encode()


def _honest(seed=1) -> bytes:
    return probability_lines(ROWS, seed=seed)


def _constant_but(few: int) -> bytes:
    return _lines([0.5] * (ROWS - few) + [0.9, 0.1, 0.7, 0.2, 0.8][:few])


def _with_row_changed(data: bytes, row: int, value: float) -> bytes:
    lines = data.decode().splitlines(keepends=True)
    lines[row] = f"{value:.6g}\n"
    return "".join(lines).encode()


@pytest.fixture
def upload(iris, submit_zip):
    def run(user, data: bytes, **fields):
        submission = submit_zip(
            user, iris.challenge, {"iris_val_predict.txt": data}, now=VALIDATION, **fields
        )
        assert submission.status == Status.SCORED, submission.errors or submission.failure
        return submission

    return run


def _codes(*submissions) -> list[list[str]]:
    found = probing.flags(Submission.objects.select_related("dataset").order_by("pk"))
    return [[flag.code for flag in found[s.pk]] for s in submissions]


def test_a_file_constant_but_for_three_rows_is_flagged_an_honest_one_not(participant, upload):
    honest = upload(participant, _honest())
    probe = upload(participant, _constant_but(3))
    assert (honest.rows_off_mode, probe.rows_off_mode) == (ROWS - 1, 3)
    assert _codes(honest, probe) == [[], [probing.CONSTANT]]
    flagged = Submission.objects.filter(probing.flagged_filter(probing.CONSTANT))
    assert list(flagged) == [probe]


def test_a_run_of_near_identical_entries_is_flagged_from_the_fifth(participant, upload):
    data, entries = _honest(), []
    for row in range(probing.RUN_LENGTH):
        if row:
            data = _with_row_changed(data, row, 0.5 + row / 100)
        entries.append(upload(participant, data, method=f"Variation {row}"))
    assert [e.similar_run for e in entries] == [1, 2, 3, 4, 5]
    assert entries[-1].similar_run >= probing.RUN_LENGTH
    assert entries[1].near_previous == pytest.approx(1 / ROWS)
    codes = _codes(*entries)
    assert codes[0] == [] and codes[-1] == [probing.RUN]
    assert all(probing.RUN not in c for c in codes[:-1])
    # a different file breaks the run
    assert upload(participant, _honest(seed=9)).similar_run == 1


def test_the_same_file_from_two_accounts_is_flagged_one_row_off_is_not(participant, other, upload):
    data = _honest(seed=2)
    mine, theirs = upload(participant, data), upload(other, data)
    near = upload(make_user("hopper"), _with_row_changed(data, 0, 0.42))
    assert mine.predictions_sha256 == theirs.predictions_sha256 != near.predictions_sha256
    assert _codes(mine, theirs, near) == [[probing.SAME_FILE], [probing.SAME_FILE], []]
    flagged = Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE))
    assert set(flagged) == {mine, theirs}


# --- The submissions console ----------------------------------------------------------


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
    probe = upload(participant, _constant_but(3))
    shared = _honest(seed=5)
    mine, theirs = upload(participant, shared), upload(other, shared)
    honest = upload(other, _honest(seed=6))

    response = console.get(CHANGELIST)
    assert response.status_code == 200
    page = response.content.decode()
    for code in (probing.CONSTANT, probing.SAME_FILE):
        label, explanation = probing.FLAGS[code]
        assert f'title="{escape(explanation)}">{label}</span>' in page
    for label, explanation in probing.FLAGS.values():  # explained above the list
        assert f"<dt>{label}</dt><dd>{escape(explanation)}</dd>" in page
    assert f'?probing={probing.RUN}"' in page  # the filter offers every flag

    for code, expected in [
        (probing.CONSTANT, {probe}),
        (probing.SAME_FILE, {mine, theirs}),
        (probing.RUN, set()),
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
    probe = upload(participant, _constant_but(2))
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
