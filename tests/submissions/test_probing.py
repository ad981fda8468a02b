"""submissions.probing: the probing flags on real uploads scored by the pipeline (how the
console shows them: test_admin_probing.py)."""

import pytest

from challenge_site.submissions import probing
from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION, make_user

from .helpers import PROBE_ROWS, constant_but, honest_lines


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
    honest = upload(participant, honest_lines())
    probe = upload(participant, constant_but(3))
    assert (honest.rows_off_mode, probe.rows_off_mode) == (PROBE_ROWS - 1, 3)
    assert _codes(honest, probe) == [[], [probing.CONSTANT]]
    flagged = Submission.objects.filter(probing.flagged_filter(probing.CONSTANT))
    assert list(flagged) == [probe]


def test_a_run_of_near_identical_entries_is_flagged_from_the_fifth(participant, upload):
    data, entries = honest_lines(), []
    for row in range(probing.RUN_LENGTH):
        if row:
            data = _with_row_changed(data, row, 0.5 + row / 100)
        entries.append(upload(participant, data, method=f"Variation {row}"))
    assert [e.similar_run for e in entries] == [1, 2, 3, 4, 5]
    assert entries[-1].similar_run >= probing.RUN_LENGTH
    assert entries[1].near_previous == pytest.approx(1 / PROBE_ROWS)
    codes = _codes(*entries)
    assert codes[0] == [] and codes[-1] == [probing.RUN]
    assert all(probing.RUN not in c for c in codes[:-1])
    # a different file breaks the run
    assert upload(participant, honest_lines(seed=9)).similar_run == 1


def test_the_same_file_from_two_accounts_is_flagged_one_row_off_is_not(participant, other, upload):
    data = honest_lines(seed=2)
    mine, theirs = upload(participant, data), upload(other, data)
    near = upload(make_user("hopper"), _with_row_changed(data, 0, 0.42))
    assert mine.predictions_sha256 == theirs.predictions_sha256 != near.predictions_sha256
    assert _codes(mine, theirs, near) == [[probing.SAME_FILE], [probing.SAME_FILE], []]
    flagged = Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE))
    assert set(flagged) == {mine, theirs}
