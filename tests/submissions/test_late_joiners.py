"""submissions.late_joiners: accounts that join during the test phase get no public
feedback where the challenge says so (Challenge.late_joiners_feedback = False)."""

import numpy as np
import pytest
import time_machine

from challenge_site.challenges.models import Feedback, Participant
from challenge_site.submissions import late_joiners
from challenge_site.submissions.models import BoardStep, Score
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset, make_user

from .helpers import get_at

N_TEST = 200


def _setup(challenge, *, feedback=Feedback.EXACT, late=False):
    challenge.test_public_fraction = 0.5
    challenge.feedback = feedback
    challenge.late_joiners_feedback = late
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, 30, N_TEST))


def _upload(submit_zip, user, dataset, seed, *, now=TEST_PHASE):
    p = 0.05 + 0.9 * np.random.default_rng(seed).random(N_TEST)
    files = {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in p).encode()}
    return submit_zip(user, dataset.challenge, files, now=now, method="Model")


def _public(submission) -> float:
    return Score.objects.get(submission=submission, split="public", loss="nlp").value


@pytest.fixture
def early(challenge):
    """Joined during the validation phase (a Participant row), submits in the test phase."""
    user = make_user("early")
    Participant.objects.create(challenge=challenge, user=user, joined=VALIDATION)
    return user


def test_a_late_joiner_sees_no_public_score_and_an_early_one_does(challenge, early, submit_zip):
    beta = _setup(challenge)
    late = make_user("late")
    with time_machine.travel(TEST_PHASE, tick=False):  # joined during the test phase
        Participant.objects.create(challenge=challenge, user=late)
    mine = _upload(submit_zip, late, beta, 1)
    theirs = _upload(submit_zip, early, beta, 2)
    assert late_joiners.is_late(mine) and not late_joiners.is_late(theirs)
    hidden = [repr(_public(mine)), f"{_public(mine):.4f}"]
    own = get_at(f"/submissions/{mine.pk}/", user=late, when=TEST_PHASE).content.decode()
    assert "No public feedback: you joined during the test phase" in own
    assert not [value for value in hidden if value in own]
    data = get_at(f"/api/v1/submissions/{mine.pk}/", user=late, when=TEST_PHASE).json()
    assert "public" not in data["scores"]
    assert data["ladder"]["public"]["note"] == late_joiners.WITHHELD
    seen = get_at(f"/submissions/{mine.pk}/", user=early, when=TEST_PHASE).content.decode()
    assert "this account joined during the test phase" in seen
    assert not [value for value in hidden if value in seen]
    # The early joiner's entry shows its public score as usual.
    data = get_at(f"/api/v1/submissions/{theirs.pk}/", user=early, when=TEST_PHASE).json()
    assert data["scores"]["public"]["nlp"] == pytest.approx(_public(theirs))
    # Once the results are published, everything is shown.
    with time_machine.travel(AFTER, tick=False):
        challenge.results_published = True
        challenge.save()
    data = get_at(f"/api/v1/submissions/{mine.pk}/", user=late, when=AFTER).json()
    assert data["scores"]["public"]["nlp"] == pytest.approx(_public(mine))


def test_a_first_entry_during_the_test_phase_makes_an_account_late(challenge, submit_zip):
    beta = _setup(challenge)
    newcomer = make_user("newcomer")  # no Participant row: the challenge asks for none
    entry = _upload(submit_zip, newcomer, beta, 3)
    assert late_joiners.is_late(entry)
    challenge.late_joiners_feedback = True
    challenge.save()
    entry.dataset.challenge.refresh_from_db()
    assert not late_joiners.is_late(entry)


def test_late_joiners_take_no_part_in_the_boards_ladder(challenge, early, submit_zip):
    beta = _setup(challenge, feedback=Feedback.BOARD_LADDER)
    late = _upload(submit_zip, make_user("late"), beta, 4)
    early_entry = _upload(submit_zip, early, beta, 5)
    assert not BoardStep.objects.filter(submission=late, board__split="public").exists()
    assert BoardStep.objects.get(submission=early_entry, board__split="public").value is not None
    board = get_at(
        "/api/v1/challenges/demo/datasets/beta/leaderboard/?split=public", when=TEST_PHASE
    ).json()
    assert [row["submission"] for row in board["results"]] == [early_entry.pk]
    page = get_at(
        "/challenges/demo/datasets/beta/leaderboard/?split=public", when=TEST_PHASE
    ).content.decode()
    assert f'href="/submissions/{late.pk}/"' not in page


def test_with_the_option_on_late_joiners_get_feedback(challenge, submit_zip):
    beta = _setup(challenge, late=True)
    entry = _upload(submit_zip, make_user("late"), beta, 6)
    assert not late_joiners.is_late(entry)
    data = get_at(f"/api/v1/submissions/{entry.pk}/", user=entry.user, when=TEST_PHASE).json()
    assert data["scores"]["public"]["nlp"] == pytest.approx(_public(entry))


def test_under_exact_feedback_the_public_board_leaves_late_joiners_out(
    challenge, early, organiser, submit_zip
):
    """Exact feedback: the public part's board (page, API, best view, plot points) lists
    the early joiner's entry and not the late joiner's, for everyone but organisers."""
    from challenge_site.leaderboard import plots

    beta = _setup(challenge)
    late = make_user("late")
    mine = _upload(submit_zip, late, beta, 1)
    theirs = _upload(submit_zip, early, beta, 2)
    board = f"/challenges/{challenge.slug}/datasets/beta/leaderboard"
    api = f"/api/v1/challenges/{challenge.slug}/datasets/beta/leaderboard/"
    for viewer in (None, late, early):
        for view in ("all", "best"):
            data = get_at(f"{api}?split=public&view={view}", user=viewer, when=TEST_PHASE).json()
            ids = [row["submission"] for row in data["results"] if row["submission"]]
            assert theirs.pk in ids and mine.pk not in ids, (viewer, view)
        page = get_at(f"{board}/?split=public", user=viewer, when=TEST_PHASE).content.decode()
        assert f"/submissions/{theirs.pk}/" in page
        assert f"/submissions/{mine.pk}/" not in page
    data = get_at(f"{api}?split=public", user=organiser, when=TEST_PHASE).json()
    assert {theirs.pk, mine.pk} <= {row["submission"] for row in data["results"]}
    points = plots.points(beta, split="public", ranking="nlp", point="01l")
    assert points.y.size == 1 and points.y[0] == pytest.approx(_public(theirs))
    # With the option on, late joiners are listed like anyone.
    challenge.late_joiners_feedback = True
    challenge.save()
    data = get_at(f"{api}?split=public", user=None, when=TEST_PHASE).json()
    assert {theirs.pk, mine.pk} <= {row["submission"] for row in data["results"]}


def test_public_intervals_plots_and_final_counts_leave_late_joiners_out(
    challenge, early, staff, submit_zip, django_capture_on_commit_callbacks
):
    """Exact feedback: the public part's intervals are computed over the entries the
    public board lists (a late joiner's entry neither leads nor ranks), the late entry's
    public plot is a 404 and which entries count for the final ranking is not told; after
    publication, the intervals are computed again with it."""
    from challenge_site.challenges.services import publish_results

    beta = _setup(challenge)
    late = make_user("late")
    # The late joiner's entry is the better one (0.5 everywhere: ln 2 against ~0.85).
    files = {"beta_test_predict.txt": b"0.5\n" * N_TEST}
    mine = submit_zip(late, challenge, files, now=TEST_PHASE, method="Half")
    theirs = _upload(submit_zip, early, beta, 1)
    assert _public(mine) < _public(theirs)
    row = Score.objects.get(submission=theirs, split="public", loss="nlp")
    assert (row.leader_lower, row.leader_upper, row.rank_lower) == (0.0, 0.0, 1)
    assert Score.objects.get(submission=mine, split="public", loss="nlp").leader_lower is None
    for viewer in (late, early, None):
        plot = get_at(f"/submissions/{mine.pk}/plots/public.svg", user=viewer, when=TEST_PHASE)
        assert plot.status_code == 404
    own = get_at(f"/submissions/{theirs.pk}/plots/public.svg", user=early, when=TEST_PHASE)
    assert own.status_code == 200
    data = get_at(f"/api/v1/submissions/{mine.pk}/", user=late, when=TEST_PHASE).json()
    assert data["final_selection"]["in_final_ranking"] is None
    data = get_at(f"/api/v1/submissions/{theirs.pk}/", user=early, when=TEST_PHASE).json()
    assert data["final_selection"]["in_final_ranking"] is True
    with (
        time_machine.travel(AFTER, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        publish_results(challenge=challenge, user=staff, now=AFTER)
    late_row = Score.objects.get(submission=mine, split="public", loss="nlp")
    assert late_row.leader_lower is not None and late_row.rank_lower is not None
