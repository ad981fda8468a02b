"""submissions.probing: the probing flags on real uploads scored by the pipeline (how the
console shows them: test_admin_probing.py)."""

import numpy as np
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


def test_a_run_of_few_row_changes_is_flagged_from_the_third(participant, upload):
    data, entries = honest_lines(), []
    for row in range(5):
        if row:
            data = _with_row_changed(data, row, 0.5 + row / 100)
        entries.append(upload(participant, data, method=f"Variation {row}"))
    assert [e.similar_run for e in entries] == [1, 2, 3, 4, 5]
    assert entries[1].near_previous == pytest.approx(1 / PROBE_ROWS)
    assert entries[1].change_share == pytest.approx(1.0)
    codes = _codes(*entries)
    assert codes[0] == [] and all(c == [probing.RUN] for c in codes[1:])
    # a different file breaks the run
    assert upload(participant, honest_lines(seed=9)).similar_run == 1


def _jittered(data: bytes, seed: int, scale: float) -> bytes:
    """Every value moved by up to ``scale`` (relative), written with all its digits."""
    rng = np.random.default_rng(seed)
    values = [float(line) for line in data.decode().split()]
    return "".join(f"{v * (1 + scale * rng.uniform(-1, 1))!r}\n" for v in values).encode()


@pytest.mark.parametrize("scale", [1e-11, 4e-16])
def test_jitter_hides_neither_a_constant_file_nor_a_run_of_few_row_changes(
    participant, other, upload, scale
):
    """Through the real upload and scoring path: the jitter that evaded the equality
    tests (1e-11, a few ulps) leaves both flags standing."""
    probe = upload(other, _jittered(constant_but(3), seed=1, scale=scale))
    assert probe.rows_off_mode == 3  # equality saw most rows off the most common value
    data, entries = honest_lines(seed=3), []
    for row in range(4):
        if row:
            data = _with_row_changed(data, row, 0.9)
        entries.append(upload(participant, _jittered(data, seed=row, scale=scale)))
    if scale > 1e-12:  # equality within 1e-12 sees most rows change: it was evaded
        assert min(e.near_previous for e in entries[1:]) > 0.9
    assert [e.similar_run for e in entries] == [1, 2, 3, 4]
    assert min(e.change_share for e in entries[1:]) > 0.99
    assert _codes(probe, *entries) == [[probing.CONSTANT], [], *[[probing.RUN]] * 3]


def test_the_same_file_from_two_accounts_is_flagged_one_row_off_is_not(participant, other, upload):
    data = honest_lines(seed=2)
    mine, theirs = upload(participant, data), upload(other, data)
    near = upload(make_user("hopper"), _with_row_changed(data, 0, 0.42))
    assert mine.predictions_sha256 == theirs.predictions_sha256 != near.predictions_sha256
    assert _codes(mine, theirs, near) == [[probing.SAME_FILE], [probing.SAME_FILE], []]
    flagged = Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE))
    assert set(flagged) == {mine, theirs}
