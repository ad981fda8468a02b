import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine
from django.core.management import CommandError, call_command

from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from datasets.importing import ImportProblems, import_challenge
from datasets.models import Dataset, DatasetFile
from tests.factories import dataset_files, write_challenge_folder

TOML = """
slug = "epuc"
title = "Evaluating Predictive Uncertainty"
start = 2004-11-10T00:00:00Z
test_start = 2004-12-03T00:00:00Z
deadline = 2004-12-10T23:59:59Z
results_published = false
test_daily_limit = 5

[datasets.gaze]
task = "regression"
min_quantile_gap = 0.0

[datasets.catalysis]
task = "classification"
log_base = 10
"""


@pytest.fixture
def folder(tmp_path):
    return write_challenge_folder(
        tmp_path / "epuc",
        TOML,
        {
            "gaze": dataset_files("gaze", task="regression", sizes=(5, 3, 4), dim=2),
            "catalysis": dataset_files("catalysis", task="classification", sizes=(6, 2, 3), dim=4),
        },
    )


def _problems(folder) -> list[str]:
    with pytest.raises(ImportProblems) as error:
        import_challenge(folder)
    return error.value.problems


@pytest.mark.django_db
def test_import_creates_challenge_datasets_and_files(folder):
    summary = import_challenge(folder)
    assert summary[0] == "Created challenge 'epuc'"
    challenge = Challenge.objects.get(slug="epuc")
    assert challenge.title == "Evaluating Predictive Uncertainty"
    assert (challenge.test_daily_limit, challenge.val_daily_limit, challenge.results_published) == (
        5,
        None,
        False,
    )
    assert challenge.deadline.isoformat() == "2004-12-10T23:59:59+00:00"
    gaze, catalysis = Dataset.objects.filter(challenge=challenge)  # in file order
    assert (gaze.name, gaze.task, gaze.input_dim, gaze.n_train, gaze.n_val, gaze.n_test) == (
        "gaze",
        "regression",
        2,
        5,
        3,
        4,
    )
    assert gaze.effective_ranking_loss == "nlpd" and catalysis.effective_ranking_loss == "nlp"
    assert catalysis.log_base == 10.0 and catalysis.input_dim == 4
    assert DatasetFile.objects.count() == 12


@pytest.mark.django_db(transaction=True)
def test_importing_again_updates_in_place(folder, storage_roots):
    import_challenge(folder)
    before = {
        (f.dataset.name, f.filename): (f.pk, f.path, f.sha256)
        for f in DatasetFile.objects.select_related("dataset")
    }
    summary = import_challenge(folder)
    assert summary == [
        "Updated challenge 'epuc'",
        "  dataset gaze: no file changed",
        "  dataset catalysis: no file changed",
    ]
    after = {
        (f.dataset.name, f.filename): (f.pk, f.path, f.sha256)
        for f in DatasetFile.objects.select_related("dataset")
    }
    assert after == before

    (folder / "gaze" / "gaze_val_targets.txt").write_bytes(b"1\n2\n3\n")
    (folder / "challenge.toml").write_text(
        TOML.replace('title = "Evaluating Predictive Uncertainty"', 'title = "EPUC"').replace(
            "results_published = false", "results_published = true"
        )
    )
    summary = import_challenge(folder)
    assert summary[1] == "  dataset gaze: gaze_val_targets.txt"
    challenge = Challenge.objects.get()
    assert (challenge.title, challenge.results_published) == ("EPUC", True)
    assert (
        Challenge.objects.count() == 1
        and Dataset.objects.count() == 2
        and DatasetFile.objects.count() == 12
    )
    new = DatasetFile.objects.get(dataset__name="gaze", split="val", kind="targets")
    old_path = before[("gaze", "gaze_val_targets.txt")][1]
    assert new.path != old_path
    assert (storage_roots["private"] / new.path).read_bytes() == b"1\n2\n3\n"
    assert not (storage_roots["private"] / old_path).exists()


@pytest.mark.django_db
def test_dataset_missing_from_the_toml_is_left_alone_and_reported(folder):
    import_challenge(folder)
    (folder / "challenge.toml").write_text(TOML.split("[datasets.catalysis]")[0])
    import shutil

    shutil.rmtree(folder / "catalysis")
    summary = import_challenge(folder)
    assert (
        summary[-1]
        == "  dataset catalysis: not in challenge.toml, left unchanged (delete it in the admin)"
    )
    assert Dataset.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('slug = "epuc"\n', "", "challenge.toml: key 'slug' is missing"),
        (
            "start = 2004-11-10T00:00:00Z",
            "start = 2004-11-10",
            "challenge.toml: key 'start': expected a date-time with a time zone, e.g. 2004-11-10T00:00:00Z, found datetime.date(2004, 11, 10)",
        ),
        (
            "start = 2004-11-10T00:00:00Z",
            "start = 2004-11-10T00:00:00",
            "challenge.toml: key 'start': expected a date-time with a time zone",
        ),
        (
            "test_daily_limit = 5",
            "test_daily_limit = 0",
            "challenge.toml: key 'test_daily_limit': expected a positive integer or \"unlimited\", found 0",
        ),
        (
            "test_daily_limit = 5",
            "test_daily_limit = true",
            "key 'test_daily_limit': expected a positive integer",
        ),
        (
            "results_published = false",
            'results_published = "no"',
            "key 'results_published': expected true or false, found 'no'",
        ),
        (
            "results_published = false",
            "results_publish = false",
            "challenge.toml: unknown key 'results_publish'; expected one of slug, title",
        ),
        ('slug = "epuc"', 'slug = "EPUC 2004"', "challenge.toml: key 'slug': Enter a valid “slug”"),
        (
            "deadline = 2004-12-10T23:59:59Z",
            "deadline = 2004-12-01T00:00:00Z",
            "challenge.toml: Dates must satisfy start ≤ test start < deadline.",
        ),
        (
            'task = "regression"',
            'task = "regresion"',
            "challenge.toml: [datasets.gaze]: key 'task': Value 'regresion' is not a valid choice.",
        ),
        (
            "log_base = 10",
            "log_base = 1",
            "challenge.toml: [datasets.catalysis]: log_base must be a positive number other than 1.",
        ),
        (
            "log_base = 10",
            'log_base = 10\nranking_loss = "nlpd"',
            "challenge.toml: [datasets.catalysis]: key 'ranking_loss': expected one of nlp, 01l",
        ),
        (
            "min_quantile_gap = 0.0",
            "min_quantile_gap = -1",
            "challenge.toml: [datasets.gaze]: key 'min_quantile_gap': Ensure this value is greater than or equal to 0.0.",
        ),
        (
            "min_quantile_gap = 0.0",
            "min_quantile_gap = nan",
            "key 'min_quantile_gap': expected a number, found nan",
        ),
        (
            "min_quantile_gap = 0.0",
            "colour = 1",
            "challenge.toml: [datasets.gaze]: unknown key 'colour'",
        ),
        (
            "title =",
            "title == ",
            "challenge.toml: not valid TOML: Invalid value (at line 3, column 8)",
        ),
    ],
)
def test_bad_settings_name_file_and_key(folder, old, new, problem):
    assert old in TOML
    (folder / "challenge.toml").write_text(TOML.replace(old, new, 1))
    problems = _problems(folder)
    assert any(problem in p for p in problems), problems
    assert all(p.startswith(str(folder)) for p in problems)
    assert not Challenge.objects.exists()


@pytest.mark.django_db
def test_bad_files_name_path_and_line_and_nothing_is_written(folder, storage_roots):
    (folder / "catalysis" / "catalysis_train_targets.txt").write_bytes(b"1\n-1\n1\n2\n1\n-1\n")
    (folder / "gaze" / "gaze_test_inputs.txt").write_bytes(b"1 2\n3 4\n5 6\n")
    (folder / "gaze" / "notes.txt").write_text("hello")
    (folder / "gaze" / "gaze_val_inputs.txt").unlink()
    (folder / "stray").mkdir()
    problems = _problems(folder)
    assert problems == [
        f"{folder}/gaze/gaze_val_inputs.txt: missing file",
        f"{folder}/gaze/notes.txt: unexpected file; expected only gaze_test_inputs.txt, gaze_test_targets.txt, "
        "gaze_train_inputs.txt, gaze_train_targets.txt, gaze_val_inputs.txt, gaze_val_targets.txt "
        "(and optionally gaze_val_slices.txt and gaze_test_slices.txt)",
        f"{folder}/catalysis/catalysis_train_targets.txt:4: expected a class label of +1 or -1, found 2",
        f"{folder}/stray/: folder has no [datasets.stray] table in {folder}/challenge.toml",
    ]
    assert not Challenge.objects.exists()
    assert not any(storage_roots["default"].rglob("*.txt")) and not any(
        storage_roots["private"].rglob("*.txt")
    )


@pytest.mark.django_db
def test_rows_must_agree_across_a_split(folder):
    (folder / "gaze" / "gaze_test_targets.txt").write_bytes(b"1\n2\n3\n")
    assert _problems(folder) == [
        f"{folder}/gaze/gaze_test_targets.txt: expected 4 rows "
        "(one per row of gaze_test_inputs.txt), found 3"
    ]


@pytest.mark.django_db
def test_changing_the_task_rechecks_unchanged_targets(folder):
    import_challenge(folder)
    (folder / "challenge.toml").write_text(
        TOML.replace('task = "regression"\nmin_quantile_gap = 0.0', 'task = "classification"')
    )
    problems = _problems(folder)
    assert problems[0].startswith(
        f"{folder}/gaze/gaze_train_targets.txt:1: expected a class label of +1 or -1"
    )


@pytest.mark.django_db
def test_the_organisers_guide_example_imports(tmp_path):
    guide = (Path(__file__).resolve().parents[2] / "docs" / "organisers.md").read_text()
    toml = re.search(r"```toml\n(.*?)```", guide, re.S).group(1)
    folder = write_challenge_folder(
        tmp_path / "epuc", toml, {"gaze": dataset_files("gaze", task="regression")}
    )
    import_challenge(folder)
    challenge = Challenge.objects.get(slug="epuc")
    assert (challenge.val_daily_limit, challenge.test_daily_limit, challenge.test_total_limit) == (
        None,
        5,
        None,
    )
    assert challenge.datasets.get().effective_ranking_loss == "nlpd"


# --- Publication guard (issue 10, finding 9) ------------------------------------------

FUTURE = TOML.replace("2004-", "2030-")  # deadline 2030-12-10T23:59:59Z


@pytest.mark.django_db
def test_results_published_before_the_deadline_are_refused_saying_when(folder):
    (folder / "challenge.toml").write_text(
        FUTURE.replace("results_published = false", "results_published = true")
    )
    with time_machine.travel(datetime(2030, 12, 10, 23, 59, 59, tzinfo=UTC), tick=False):
        problems = _problems(folder)
        with pytest.raises(CommandError, match="after the deadline, 10 Dec 2030 23:59:59 UTC"):
            call_command("import_challenge", str(folder))
    assert problems == [
        f"{folder / 'challenge.toml'}: key 'results_published': "
        "Results can be published after the deadline, 10 Dec 2030 23:59:59 UTC."
    ]
    assert not Challenge.objects.exists() and not DatasetFile.objects.exists()


@pytest.mark.django_db
def test_publication_and_replaced_targets_by_import_are_recorded(folder):
    (folder / "challenge.toml").write_text(FUTURE)
    with time_machine.travel(datetime(2030, 12, 1, tzinfo=UTC), tick=False):
        import_challenge(folder)
    assert not ChallengeEvent.objects.exists()  # new files replace nothing

    published = FUTURE.replace("results_published = false", "results_published = true")
    (folder / "challenge.toml").write_text(published)
    old = DatasetFile.objects.get(dataset__name="gaze", split="test", kind="targets").sha256
    (folder / "gaze" / "gaze_test_targets.txt").write_bytes(b"1\n2\n3\n4\n")
    after = datetime(2030, 12, 11, tzinfo=UTC)
    with time_machine.travel(after, tick=False):
        summary = import_challenge(folder)
    assert summary[1:] == [
        "  dataset gaze: gaze_test_targets.txt",
        "  dataset catalysis: no file changed",
        "  results published",
    ]
    challenge = Challenge.objects.get()
    # The targets changed before the results were published: nothing published was revised.
    assert (challenge.results_published, challenge.results_revised_at) == (True, None)
    replaced, publication = ChallengeEvent.objects.order_by("id")
    assert (replaced.kind, replaced.user, replaced.via, replaced.at) == (
        EventKind.TARGETS_REPLACED,
        None,
        "import_challenge",
        after,
    )
    assert replaced.detail["old_sha256"] == old
    assert replaced.detail["new_sha256"] == hashlib.sha256(b"1\n2\n3\n4\n").hexdigest()
    assert (publication.kind, publication.user, publication.via) == (
        EventKind.PUBLISHED,
        None,
        "import_challenge",
    )

    # A correction once published revises the results.
    (folder / "gaze" / "gaze_test_targets.txt").write_bytes(b"4\n3\n2\n1\n")
    later = datetime(2031, 1, 5, tzinfo=UTC)
    with time_machine.travel(later, tick=False):
        import_challenge(folder)
    challenge.refresh_from_db()
    assert challenge.results_revised_at == later
    assert ChallengeEvent.objects.latest("id").detail["results_revised"] is True

    (folder / "challenge.toml").write_text(FUTURE)
    with time_machine.travel(later, tick=False):
        assert import_challenge(folder)[-1] == "  results withdrawn"
    assert ChallengeEvent.objects.latest("id").kind == EventKind.WITHDRAWN


# --- Ranking and feedback keys ----------------------------------------------------------

OPTIONS = "test_daily_limit = 5\n"


@pytest.mark.django_db
def test_the_ranking_and_feedback_keys_are_imported(folder):
    import_challenge(folder)
    challenge = Challenge.objects.get()
    assert (challenge.test_public_fraction, challenge.final_entries, challenge.feedback) == (
        0.0,
        2,
        "exact",
    )
    challenge.delete()
    (folder / "challenge.toml").write_text(
        TOML.replace(
            OPTIONS,
            OPTIONS + 'test_public_fraction = 0.25\nfinal_entries = 3\nfeedback = "ladder"\n',
        )
    )
    import_challenge(folder)
    challenge = Challenge.objects.get()
    assert (challenge.test_public_fraction, challenge.final_entries, challenge.feedback) == (
        0.25,
        3,
        "ladder",
    )


@pytest.mark.django_db
def test_the_board_ladder_and_late_joiners_keys_are_imported(folder):
    (folder / "challenge.toml").write_text(
        TOML.replace(
            OPTIONS,
            OPTIONS
            + 'test_public_fraction = 0.5\nfeedback = "board_ladder"\n'
            + "late_joiners_feedback = false\n",
        )
    )
    import_challenge(folder)
    challenge = Challenge.objects.get()
    assert (challenge.feedback, challenge.late_joiners_feedback) == ("board_ladder", False)
    # Left out, late joiners get feedback (the model's default).
    (folder / "challenge.toml").write_text(
        TOML.replace(OPTIONS, OPTIONS + 'test_public_fraction = 0.5\nfeedback = "board_ladder"\n')
    )
    import_challenge(folder)
    challenge.refresh_from_db()
    assert challenge.late_joiners_feedback is True


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("lines", "problem"),  # lines added to the challenge table (and to catalysis's, after |)
    [
        (
            'test_public_fraction = "half"',
            "challenge.toml: key 'test_public_fraction': expected a number, found 'half'",
        ),
        (
            "test_public_fraction = 0.95",
            "challenge.toml: key 'test_public_fraction': Ensure this value is less than or "
            "equal to 0.9.",
        ),
        (
            "final_entries = 2.5",
            "challenge.toml: key 'final_entries': expected an integer, found 2.5",
        ),
        (
            "final_entries = 0",
            "challenge.toml: key 'final_entries': Ensure this value is greater than or equal to 1.",
        ),
        (
            'feedback = "lader"',
            "challenge.toml: key 'feedback': expected 'exact', 'ladder' or 'board_ladder', "
            "found 'lader'",
        ),
        (
            "late_joiners_feedback = 0",
            "challenge.toml: key 'late_joiners_feedback': expected true or false, found 0",
        ),
        (
            'feedback = "board_ladder" | ranking_loss = "lift"',
            "challenge.toml: [datasets.catalysis]: key 'ranking_loss': The Ladder needs "
            "per-example loss terms, and dataset “catalysis” ranks by lift",
        ),
        (
            'feedback = "ladder" | ranking_loss = "lift"',
            "challenge.toml: [datasets.catalysis]: key 'ranking_loss': The Ladder needs "
            "per-example loss terms, and dataset “catalysis” ranks by lift",
        ),
    ],
)
def test_bad_ranking_and_feedback_keys_name_file_and_key(folder, lines, problem):
    challenge_lines, _, catalysis_lines = lines.partition(" | ")
    toml = TOML.replace(OPTIONS, OPTIONS + challenge_lines + "\n")
    toml = toml.replace("log_base = 10\n", "log_base = 10\n" + catalysis_lines + "\n")
    (folder / "challenge.toml").write_text(toml)
    problems = _problems(folder)
    assert any(problem in p for p in problems), problems
    assert all(p.startswith(str(folder)) for p in problems)
    assert not Challenge.objects.exists()


@pytest.mark.django_db
def test_the_public_part_cannot_change_once_the_test_phase_has_begun(folder):
    import_challenge(folder, now=datetime(2004, 11, 20, tzinfo=UTC))  # validation phase
    changed = TOML.replace(OPTIONS, OPTIONS + "test_public_fraction = 0.3\n")
    (folder / "challenge.toml").write_text(changed)
    problems = _problems(folder)  # now: long after the test phase began
    assert problems == [
        f"{folder}/challenge.toml: key 'test_public_fraction': the public part is fixed once "
        "test entries are scored: the test phase began on 03 Dec 2004 00:00 UTC, so it stays 0"
    ]
    summary = import_challenge(folder, now=datetime(2004, 11, 21, tzinfo=UTC))
    assert "  public part changed: 0 entries queued to be scored again" in summary
    assert Challenge.objects.get().test_public_fraction == 0.3


# --- Multiclass datasets (issue 26) ----------------------------------------------------

MULTICLASS_TOML = """
slug = "cifar"
title = "Calibration under shift"
start = 2004-11-10T00:00:00Z
test_start = 2004-12-03T00:00:00Z
deadline = 2004-12-10T23:59:59Z

[datasets.shapes]
task = "multiclass"
classes = 4
allow_ensembles = false
log_base = 2
"""


@pytest.fixture
def multiclass_folder(tmp_path):
    files = dataset_files("shapes", task="multiclass", classes=4, sizes=(40, 24, 30), dim=5)
    return write_challenge_folder(tmp_path / "cifar", MULTICLASS_TOML, {"shapes": files})


@pytest.mark.django_db
def test_import_a_multiclass_challenge(multiclass_folder):
    summary = import_challenge(multiclass_folder)
    assert summary[0] == "Created challenge 'cifar'"
    shapes = Dataset.objects.get(challenge__slug="cifar")
    assert (shapes.task, shapes.classes, shapes.allow_ensembles, shapes.log_base) == (
        "multiclass",
        4,
        False,
        2.0,
    )
    assert (shapes.input_dim, shapes.n_train, shapes.n_val, shapes.n_test) == (5, 40, 24, 30)
    assert shapes.files.count() == 6 and shapes.effective_ranking_loss == "nlp"
    # The options the site scores with, and allow_ensembles' default.
    assert shapes.scoring_options.classes == 4
    toml = MULTICLASS_TOML.replace("allow_ensembles = false\n", "")
    (multiclass_folder / "challenge.toml").write_text(toml)
    assert import_challenge(multiclass_folder)[1] == "  dataset shapes: no file changed"
    shapes.refresh_from_db()
    assert shapes.allow_ensembles is True


@pytest.mark.django_db
@pytest.mark.parametrize(
    "old, new, problem",
    [
        (
            "classes = 4\n",
            "",
            "key 'classes' is missing: a multiclass dataset needs it (the number of classes, 2 to 1000)",
        ),
        (
            "classes = 4",
            "classes = 1",
            "key 'classes': Ensure this value is greater than or equal to 2.",
        ),
        (
            "classes = 4",
            "classes = 1001",
            "key 'classes': Ensure this value is less than or equal to 1000.",
        ),
        ("classes = 4", 'classes = "ten"', "key 'classes': expected an integer, found 'ten'"),
        ("classes = 4", "classes = 4.0", "key 'classes': expected an integer, found 4.0"),
        (
            "allow_ensembles = false",
            'allow_ensembles = "no"',
            "key 'allow_ensembles': expected true or false, found 'no'",
        ),
        (
            "allow_ensembles = false",
            "allow_samples = false",
            "key 'allow_samples' is a setting of regression datasets, not of a multiclass one; remove it",
        ),
        (
            "log_base = 2",
            'log_base = 2\nranking_loss = "nlpd"',
            # rauc, aurc: spec §8; floorlog: the example plug-in's (plugins/floorlog).
            "key 'ranking_loss': expected one of nlp, brier, 01l, ece, rmsce, sce, ace, rauc, "
            "aurc, floorlog for a multiclass dataset, found 'nlpd'",
        ),
    ],
)
def test_bad_multiclass_settings_name_the_key(multiclass_folder, old, new, problem):
    assert old in MULTICLASS_TOML
    (multiclass_folder / "challenge.toml").write_text(MULTICLASS_TOML.replace(old, new, 1))
    problems = _problems(multiclass_folder)
    where = f"{multiclass_folder}/challenge.toml: [datasets.shapes]: "
    assert any(p.startswith(where) and problem in p for p in problems), problems
    assert not Challenge.objects.exists()


@pytest.mark.django_db
def test_classes_on_a_dataset_of_another_task_are_refused(folder):
    (folder / "challenge.toml").write_text(
        TOML.replace("log_base = 10", "log_base = 10\nclasses = 2")
    )
    assert _problems(folder) == [
        f"{folder}/challenge.toml: [datasets.catalysis]: key 'classes' is a setting of "
        "multiclass datasets, not of a classification one; remove it"
    ]


@pytest.mark.django_db
def test_multiclass_labels_are_checked_against_the_classes(multiclass_folder):
    shapes = multiclass_folder / "shapes"
    (shapes / "shapes_val_targets.txt").write_bytes(b"0\n" * 10 + b"4\n" + b"1.5\n" + b"2\n" * 12)
    problems = _problems(multiclass_folder)
    assert problems[0] == f"{shapes}/shapes_val_targets.txt:11: class label 4 is outside 0..3"
    assert problems[1].startswith(f"{shapes}/shapes_val_targets.txt:12: ")
    assert len(problems) == 2 and not Challenge.objects.exists()


@pytest.mark.django_db
def test_fewer_classes_recheck_the_unchanged_targets(multiclass_folder):
    import_challenge(multiclass_folder)
    (multiclass_folder / "challenge.toml").write_text(
        MULTICLASS_TOML.replace("classes = 4", "classes = 3")
    )
    problems = _problems(multiclass_folder)
    train = f"{multiclass_folder}/shapes/shapes_train_targets.txt"
    assert problems and all(p.startswith(f"{multiclass_folder}/shapes/shapes_") for p in problems)
    assert any(p.startswith(f"{train}:") and "class label 3 is outside 0..2" in p for p in problems)
    assert Dataset.objects.get().classes == 4


@pytest.mark.django_db
def test_a_ladder_challenge_refuses_a_multiclass_loss_without_terms(multiclass_folder):
    toml = MULTICLASS_TOML.replace(
        "deadline = 2004-12-10T23:59:59Z", 'deadline = 2004-12-10T23:59:59Z\nfeedback = "ladder"'
    )
    (multiclass_folder / "challenge.toml").write_text(toml + 'ranking_loss = "sce"\n')
    problems = _problems(multiclass_folder)
    assert len(problems) == 1
    assert problems[0].startswith(
        f"{multiclass_folder}/challenge.toml: [datasets.shapes]: key 'ranking_loss': "
    )
    assert "sce" in problems[0]
    (multiclass_folder / "challenge.toml").write_text(toml + 'ranking_loss = "brier"\n')
    import_challenge(multiclass_folder)
    assert Dataset.objects.get().effective_ranking_loss == "brier"


# --- quantile_levels (spec §8) ----------------------------------------------------------


@pytest.mark.django_db
def test_quantile_levels_are_imported_into_the_scoring_options(folder):
    (folder / "challenge.toml").write_text(
        TOML.replace(
            "min_quantile_gap = 0.0",
            "min_quantile_gap = 0.0\nquantile_levels = [0.05, 0.25, 0.5, 0.75, 0.95]",
        )
    )
    import_challenge(folder)
    gaze = Dataset.objects.get(name="gaze")
    assert gaze.quantile_levels == [0.05, 0.25, 0.5, 0.75, 0.95]
    assert gaze.scoring_options.quantile_levels == (0.05, 0.25, 0.5, 0.75, 0.95)
    assert "wis" in [loss.name for loss in gaze.shown_losses()]
    assert Dataset.objects.get(name="catalysis").quantile_levels is None  # optional


@pytest.mark.django_db
def test_new_quantile_levels_on_import_score_every_entry_again(folder, monkeypatch):
    import_challenge(folder)
    sent = []
    monkeypatch.setattr("datasets.importing.levels_changed", lambda dataset: sent.append(dataset))
    import_challenge(folder)  # the same levels (none): nothing to score again
    assert sent == []
    (folder / "challenge.toml").write_text(
        TOML.replace("min_quantile_gap = 0.0", "quantile_levels = [0.1, 0.9]")
    )
    import_challenge(folder)
    assert [dataset.name for dataset in sent] == ["gaze"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("levels", "problem"),
    [
        (
            '"0.1, 0.9"',
            "key 'quantile_levels': expected a list of quantile levels, e.g. [0.05, 0.25, 0.5, 0.75, 0.95], found '0.1, 0.9'",
        ),
        ("[]", "key 'quantile_levels': expected a list of quantile levels"),
        ('[0.1, "0.9"]', "key 'quantile_levels': expected a list of quantile levels"),
        ("[0.1, true]", "key 'quantile_levels': expected a list of quantile levels"),
        (
            "[0.9, 0.1]",
            "key 'quantile_levels': quantile levels must increase strictly (0.1 after 0.9)",
        ),
        (
            "[0.1, 1]",
            "key 'quantile_levels': quantile levels must lie strictly between 0 and 1, got 1.0",
        ),
        (
            "[" + ", ".join(str(k / 101) for k in range(1, 101)) + "]",
            "key 'quantile_levels': expected 1 to 99 quantile levels, got 100",
        ),
    ],
)
def test_bad_quantile_levels_name_the_key(folder, levels, problem):
    (folder / "challenge.toml").write_text(
        TOML.replace("min_quantile_gap = 0.0", f"quantile_levels = {levels}")
    )
    problems = _problems(folder)
    assert any(
        p.startswith(f"{folder}/challenge.toml: [datasets.gaze]: ") and problem in p
        for p in problems
    ), problems
    assert not Challenge.objects.exists()


@pytest.mark.django_db
def test_quantile_levels_on_a_classification_dataset_are_refused(folder):
    (folder / "challenge.toml").write_text(
        TOML.replace("log_base = 10", "log_base = 10\nquantile_levels = [0.1, 0.9]")
    )
    assert _problems(folder) == [
        f"{folder}/challenge.toml: [datasets.catalysis]: key 'quantile_levels' is a setting of "
        "regression datasets, not of a classification one; remove it"
    ]


# --- losses: the losses a dataset shows (spec §9) -----------------------------------------


@pytest.mark.django_db
def test_the_losses_shown_are_imported_and_a_change_rescores_what_lacks_one(folder, monkeypatch):
    import_challenge(folder)
    assert Dataset.objects.get(name="catalysis").losses == []  # default: every loss
    sent = []
    monkeypatch.setattr("datasets.importing.losses_changed", lambda dataset: sent.append(dataset))
    shown = 'losses = ["nlp", "brier", "floorlog"]'
    (folder / "challenge.toml").write_text(TOML.replace("log_base = 10", f"log_base = 10\n{shown}"))
    import_challenge(folder)
    catalysis = Dataset.objects.get(name="catalysis")
    assert catalysis.losses == ["nlp", "brier", "floorlog"]
    assert [loss.name for loss in catalysis.shown_losses()] == ["nlp", "brier", "floorlog"]
    assert [dataset.name for dataset in sent] == ["catalysis"]
    import_challenge(folder)  # the same list: nothing to do
    assert len(sent) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (
            'losses = "nlp"',
            "key 'losses': expected a list of loss names, e.g. [\"nlp\", \"brier\"], found 'nlp'",
        ),
        ("losses = [1, 2]", "key 'losses': expected a list of loss names, found [1, 2]"),
        (
            'losses = ["nlp", "nlpd", "crps"]',
            "key 'losses': unknown losses 'nlpd', 'crps' for this classification dataset; "
            "its losses are nlp, 01l, lift, brier, ece, ",
        ),
        ('losses = ["nlp", "nlp"]', "key 'losses': 'nlp' named more than once"),
        (
            'losses = ["brier"]',
            "key 'losses': the ranking loss 'nlp' must be one of the losses shown (the task's "
            "default, as ranking_loss is empty)",
        ),
        (
            'losses = ["nlp"]\nranking_loss = "floorlog"',
            "key 'losses': the ranking loss 'floorlog' must be one of the losses shown",
        ),
    ],
)
def test_bad_losses_are_named_with_the_task_s_losses(folder, lines, problem):
    (folder / "challenge.toml").write_text(TOML.replace("log_base = 10", f"log_base = 10\n{lines}"))
    problems = _problems(folder)
    assert any(
        p.startswith(f"{folder}/challenge.toml: [datasets.catalysis]: ") and problem in p
        for p in problems
    ), problems
    assert not Challenge.objects.exists()
