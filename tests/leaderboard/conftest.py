from datetime import timedelta

import pytest
import time_machine

from challenge_site.submissions.models import Status
from challenge_site.submissions.services import refresh_baseline
from tests.factories import (
    AFTER,
    TEST_PHASE,
    VALIDATION,
    make_challenge,
    make_dataset,
    make_user,
)
from tests.submissions.helpers import make_shapes, predictions, shapes_files

from .helpers import (
    INF,
    add_entry,
    at,
    cls,
    entry,
    gaussian_file,
    point_only_cls,
    reg,
    set_interval,
    when,
)


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def grace(db):
    return make_user("grace")


@pytest.fixture
def alan(db):
    return make_user("alan")


@pytest.fixture
def catalysis(challenge):
    """Classification, base-10 logarithms as in 2004: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "catalysis", task="classification", seed=3, log_base=10.0)


@pytest.fixture(autouse=True)
def clock():
    """Pages are requested after the deadline unless a test travels elsewhere."""
    from tests.factories import AFTER

    with time_machine.travel(AFTER, tick=False):
        yield


@pytest.fixture
def score_baseline(django_capture_on_commit_callbacks):
    """The dataset's baseline, created and scored by the submission service."""
    from challenge_site.submissions.services import refresh_baseline

    def run(dataset, *, now):
        with django_capture_on_commit_callbacks(execute=True):
            baseline = refresh_baseline(dataset=dataset, now=now)
        baseline.refresh_from_db()
        return baseline

    return run


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    """A demo challenge "epuc" with three datasets and their baselines, ready for the
    demo loader (challenge_site.leaderboard.demo)."""
    challenge = make_challenge(slug="epuc", results_published=True)
    datasets = {
        "catalysis": make_dataset(
            challenge, "catalysis", task="classification", sizes=(60, 30, 40), seed=4
        ),
        "gaze": make_dataset(challenge, "gaze", task="regression", sizes=(60, 30, 40), seed=5),
        "maki": make_dataset(
            challenge, "maki", task="regression", sizes=(50, 20, 20), allow_samples=False
        ),
    }
    with django_capture_on_commit_callbacks(execute=True):
        for dataset in datasets.values():
            refresh_baseline(dataset=dataset, now=challenge.start)
    return challenge, datasets


@pytest.fixture
def board(catalysis, ada, grace, alan):
    """Ada leads, Grace cannot be told apart from her, Alan can; one entry still computing
    (the bootstrap fields written on the Score rows as intervals.py would)."""
    entries = {
        "baseline": add_entry(
            catalysis, created=at(-5), val=cls(0.3, 0.4), baseline=True, method="Baseline"
        ),
        "ada": add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.3), method="BNN"),
        "grace": add_entry(catalysis, user=grace, created=at(1), val=cls(0.25, 0.3), method="SVM"),
        "alan": add_entry(catalysis, user=alan, created=at(2), val=cls(0.4, 0.3), method="Tree"),
        "new": add_entry(catalysis, user=alan, created=at(3), val=cls(0.5, 0.3), method="New"),
    }
    set_interval(entries["ada"], own=(0.19, 0.23), leader=(0.0, 0.0), tied=True, rank=(1, 2))
    set_interval(entries["grace"], own=(0.22, 0.28), leader=(-0.01, 0.09), tied=True, rank=(1, 2))
    set_interval(entries["alan"], own=(0.35, INF), leader=(0.1, 0.3), tied=False, rank=(3, 3))
    set_interval(entries["baseline"], own=(0.27, 0.33), leader=(0.05, 0.15), tied=False)
    return entries


@pytest.fixture
def many(catalysis, ada, grace, alan):
    """70 entries of three participants: ties, infinities, n/a and point-only files."""
    add_entry(catalysis, created=at(-10), val=cls(0.7, 0.5), baseline=True, method="Baseline")
    users = [ada, grace, alan]
    for i in range(69):
        if i % 10 == 3:
            scores = point_only_cls(0.1 + i / 1000)
        elif i % 10 == 5:
            scores = cls(INF, 0.2, lift=None)
        else:
            scores = cls(0.5 + (i % 7) / 10, 0.3 - (i % 5) / 100, lift=0.4 + (i % 3) / 10)
        add_entry(catalysis, user=users[i % 3], created=at(i), val=scores, method=f"Method {i}")


@pytest.fixture
def waves(challenge):
    """Regression, 30 training, 60 validation, 80 test rows."""
    return make_dataset(challenge, "waves", task="regression", sizes=(30, 60, 80), seed=4)


@pytest.fixture
def entries(waves, ada, grace, submit_zip, score_baseline):
    """The baseline, two of Ada's entries and one of Grace's, scored on the validation split."""
    challenge = waves.challenge
    baseline = score_baseline(waves, now=AFTER)
    made = [baseline]
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = {"waves_val_predict.txt": gaussian_file(60, seed=seed)}
        made.append(submit_zip(user, challenge, files, now=AFTER, method=f"m{seed}"))
    return made


@pytest.fixture
def shapes_entries(challenge, ada, grace, submit_zip, score_baseline):
    """A multiclass dataset (tests.submissions.helpers.make_shapes: 4 classes, 24
    validation and 30 test rows) with its baseline, two of Ada's entries and one of
    Grace's on both splits (single and ensemble lines mixed), made in the test phase."""
    shapes = make_shapes(challenge)
    made = [score_baseline(shapes, now=TEST_PHASE)]
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = shapes_files(("val", "test"), seed=seed, members=2 + seed)
        made.append(submit_zip(user, challenge, files, now=TEST_PHASE, method=f"m{seed}"))
    assert all(entry.status == Status.SCORED for entry in made)
    return shapes, made


@pytest.fixture
def history(challenge, gaze, catalysis, ada, grace, alan, submit_zip):
    """The statistics' world (tests/leaderboard/test_statistics*.py): twelve uploads of three people over both phases and after the deadline, a baseline
    and another challenge's submission (neither counted). Day 1 is 10 Jan 2030, the test
    phase starts on day 23 (1 Feb), the deadline is on day 30 (8 Feb)."""
    add_entry(gaze, created=when(1, 10, 0), val=reg(1.0, 1.0), baseline=True)
    # Validation phase: day 1, day 3 and, through the real pipeline, day 11.
    entry(gaze, user=ada, created=when(1, 10, 9), seconds=20)
    entry(gaze, user=grace, created=when(1, 10, 15), seconds=200)
    entry(catalysis, user=ada, created=when(1, 12, 10), seconds=30)
    entry(gaze, user=ada, created=when(1, 12, 11), status=Status.INVALID)
    with time_machine.travel(VALIDATION, tick=False):  # scored 90 s after the upload
        valid = submit_zip(alan, challenge, predictions("gaze"), now=VALIDATION - timedelta(0, 90))
        broken = {"gaze_val_predict.txt": b"1 0.5 1\n"}  # one row of four
        invalid = submit_zip(alan, challenge, broken, now=VALIDATION)
    assert (valid.status, invalid.status) == (Status.SCORED, Status.INVALID)
    # Test phase: day 25 (3 Feb) and day 30 (8 Feb).
    entry(gaze, user=ada, created=TEST_PHASE, seconds=600)
    entry(gaze, user=grace, created=TEST_PHASE + timedelta(hours=1), seconds=300)
    entry(catalysis, user=grace, created=TEST_PHASE, status=Status.FAILED)
    entry(catalysis, user=ada, created=when(2, 8, 23, 30), seconds=45)
    entry(gaze, user=alan, created=when(2, 8, 23, 50), status=Status.QUEUED)
    # After the deadline.
    entry(gaze, user=grace, created=AFTER - timedelta(days=1), seconds=10)
    other = make_challenge(slug="other", title="Other")
    entry(make_dataset(other, "gaze"), user=ada, created=when(1, 20), seconds=5)


@pytest.fixture
def published(challenge):
    challenge.results_published = True
    challenge.save()
    return challenge


@pytest.fixture
def viewers(challenge, staff, organiser, ada):
    other = make_challenge(slug="elsewhere", title="Elsewhere")
    return {
        "organiser": organiser,
        "other organiser": make_user("elsewhere", organiser_of=other),
        "superuser": staff,
        "participant": ada,
        "anonymous": None,
    }
