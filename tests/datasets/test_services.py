import hashlib
from datetime import timedelta

import pytest

import scoring
from datasets.models import DatasetFile, Kind, Split, StorageAlias
from datasets.services import (
    DatasetFilesError,
    check_file,
    check_files,
    check_losses,
    check_ranking_loss,
    cross_check,
    delete_file,
    save_files,
    storage_alias_for,
)
from datasets.signals import dataset_files_changed
from scoring import ScoringOptions
from tests.factories import START, dataset_files, make_challenge, make_dataset

SECOND = timedelta(seconds=1)
PUBLIC = {(Split.TRAIN, Kind.INPUTS), (Split.TRAIN, Kind.TARGETS), (Split.VAL, Kind.INPUTS)}


def test_check_file_reads_shape_and_hash():
    data = b"1 2 3\n4 5 6\n"
    checked = check_file(
        name="gaze", task="regression", filename="gaze_val_inputs.txt", source=data
    )
    assert (checked.split, checked.kind, checked.rows, checked.columns, checked.size) == (
        "val",
        "inputs",
        2,
        3,
        12,
    )
    assert checked.sha256 == hashlib.sha256(data).hexdigest()


def test_check_file_reports_every_bad_line_with_file_and_line():
    data = b"1 2\n3\n4 x\n"
    with pytest.raises(DatasetFilesError) as error:
        check_file(name="gaze", task="regression", filename="gaze_train_inputs.txt", source=data)
    assert error.value.problems == [
        "gaze_train_inputs.txt:2: expected 2 numbers (as on line 1), found 1",
        "gaze_train_inputs.txt:3: expected a number, found 'x'",
    ]


def test_classification_targets_must_be_plus_or_minus_one():
    with pytest.raises(DatasetFilesError) as error:
        check_file(
            name="cat",
            task="classification",
            filename="cat_train_targets.txt",
            source=b"1\n-1\n0\n",
        )
    assert error.value.problems == [
        "cat_train_targets.txt:3: expected a class label of +1 or -1, found 0"
    ]
    # The same file is fine as regression targets.
    assert (
        check_file(
            name="cat", task="regression", filename="cat_train_targets.txt", source=b"1\n-1\n0\n"
        ).rows
        == 3
    )


@pytest.mark.parametrize(
    "filename", ["gaze_train.txt", "other_train_inputs.txt", "gaze_training_inputs.txt"]
)
def test_file_names_must_follow_the_convention(filename):
    with pytest.raises(
        DatasetFilesError,
        match=rf"{filename}: unexpected file name; expected one of gaze_train_inputs.txt",
    ):
        check_file(name="gaze", task="regression", filename=filename, source=b"1\n")


def test_cross_check_rows_and_dimension():
    parts = {
        ("train", "inputs"): (10, 4),
        ("train", "targets"): (9, 1),
        ("val", "inputs"): (5, 3),
        ("test", "inputs"): (7, 4),
    }
    assert cross_check("gaze", parts) == [
        "gaze_train_targets.txt: expected 10 rows (one per row of gaze_train_inputs.txt), found 9",
        "gaze_val_inputs.txt: expected 4 numbers per row (as in gaze_train_inputs.txt), found 3",
    ]


def test_check_files_collects_problems_of_all_files_before_failing():
    files = dataset_files("gaze", task="regression")
    files["gaze_val_inputs.txt"] = b"1 2 3\nnan 2 3\n"
    files["gaze_test_targets.txt"] = b"1,5\n"
    uploads = [(name, data, name) for name, data in files.items()]
    with pytest.raises(DatasetFilesError) as error:
        check_files(name="gaze", task="regression", uploads=uploads)
    assert error.value.problems[0].startswith("gaze_val_inputs.txt:2: expected a finite number")
    assert error.value.problems[1].startswith(
        "gaze_test_targets.txt:1: expected numbers separated by spaces"
    )


def test_check_files_compares_with_the_files_kept(challenge):
    dataset = make_dataset(challenge, sizes=(6, 4, 5), dim=3)
    kept = [f for f in dataset.files.all() if f.filename != "gaze_val_targets.txt"]
    with pytest.raises(DatasetFilesError, match="gaze_val_targets.txt: expected 4 rows .* found 3"):
        check_files(
            name="gaze",
            task="regression",
            uploads=[("gaze_val_targets.txt", b"1\n2\n3\n", "x")],
            existing=kept,
        )


def test_check_ranking_loss_accepts_the_task_losses_only():
    assert check_ranking_loss(task="regression", ranking_loss="") is None
    assert check_ranking_loss(task="regression", ranking_loss="crps") is None
    message = check_ranking_loss(task="regression", ranking_loss="nlp")
    assert message.startswith("expected one of nlpd, ") and message.endswith("found 'nlp'")


def test_check_losses_lists_unknown_names_and_wants_the_ranking_loss_among_them():
    plain, levels = ScoringOptions(), ScoringOptions(quantile_levels=(0.1, 0.9))

    def check(losses, ranking="", options=plain, task="regression"):
        return check_losses(task=task, options=options, losses=losses, ranking_loss=ranking)

    assert check([]) == []  # every loss of the task
    assert check(["crps", "nlpd"]) == []
    assert check(["crps"], "crps") == []
    # wis applies with quantile levels only (spec §8).
    assert check(["nlpd", "wis"], options=levels) == []
    assert check(["nlpd", "wis", "nlp"]) == [
        "unknown losses 'wis', 'nlp' for this regression dataset; its losses are "
        + ", ".join(loss.name for loss in scoring.losses_for("regression", plain))
    ]
    assert check(["crps", "crps", "nlpd"]) == ["'crps' named more than once"]
    assert check(["crps"]) == [
        "the ranking loss 'nlpd' must be one of the losses shown (the task's default, as "
        "ranking_loss is empty)"
    ]
    assert check(["nlp"], task="classification", ranking="floorlog") == [
        "the ranking loss 'floorlog' must be one of the losses shown"
    ]
    assert check("nlpd") == ["expected a list of loss names, found 'nlpd'"]


def test_only_files_released_from_the_start_live_in_the_default_storage():
    for split in Split:
        for kind in Kind:
            expected = StorageAlias.DEFAULT if (split, kind) in PUBLIC else StorageAlias.PRIVATE
            assert storage_alias_for(split=split, kind=kind) == expected


def test_saved_files_land_in_their_storage_with_counts(challenge, storage_roots):
    dataset = make_dataset(challenge, sizes=(6, 4, 5), dim=3)
    assert (dataset.input_dim, dataset.n_train, dataset.n_val, dataset.n_test) == (3, 6, 4, 5)
    files = {f.filename: f for f in dataset.files.all()}
    assert len(files) == 6
    for datafile in files.values():
        root = storage_roots[datafile.storage_alias]
        assert (root / datafile.path).stat().st_size == datafile.size
    private = {name for name, f in files.items() if f.storage_alias == "private"}
    assert private == {"gaze_val_targets.txt", "gaze_test_inputs.txt", "gaze_test_targets.txt"}
    public_targets = [p.name for p in storage_roots["default"].rglob("*targets.txt")]
    assert public_targets == ["gaze_train_targets.txt"]


@pytest.mark.django_db(transaction=True)
def test_replacing_a_file_keeps_unchanged_ones_and_deletes_old_bytes(storage_roots):
    challenge = make_challenge()
    received = []
    dataset_files_changed.connect(
        lambda sender, dataset, **kw: received.append(dataset.pk), weak=False, dispatch_uid="t"
    )
    try:
        dataset = make_dataset(challenge)
        assert received == [dataset.pk]
        before = {f.filename: (f.pk, f.path) for f in dataset.files.all()}
        same = dataset_files("gaze", task="regression")
        uploads = [(n, d, n) for n, d in same.items()]
        assert (
            save_files(
                dataset, check_files(name="gaze", task="regression", uploads=uploads), now=START
            )
            == []
        )
        assert received == [dataset.pk]  # nothing changed, nothing sent

        new_targets = b"1\n2\n3\n4.5\n"
        checked = check_files(
            name="gaze",
            task="regression",
            uploads=[("gaze_val_targets.txt", new_targets, "x")],
            existing=[f for f in dataset.files.all() if f.filename != "gaze_val_targets.txt"],
        )
        changed = save_files(dataset, checked, now=START + SECOND)
        assert [c.filename for c in changed] == ["gaze_val_targets.txt"]
        after = {f.filename: (f.pk, f.path) for f in dataset.files.all()}
        assert {n for n in after if after[n] != before[n]} == {"gaze_val_targets.txt"}
        assert (
            storage_roots["private"] / after["gaze_val_targets.txt"][1]
        ).read_bytes() == new_targets
        assert not (storage_roots["private"] / before["gaze_val_targets.txt"][1]).exists()
        assert received == [dataset.pk, dataset.pk]
    finally:
        dataset_files_changed.disconnect(dispatch_uid="t")


def test_deleting_a_file_updates_counts_and_storage(
    challenge, storage_roots, django_capture_on_commit_callbacks
):
    dataset = make_dataset(challenge)
    test_inputs = dataset.files.get(split="test", kind="inputs")
    with django_capture_on_commit_callbacks(execute=True):
        delete_file(test_inputs)
    dataset.refresh_from_db()
    assert dataset.n_test == 5  # still known from the test targets
    assert not DatasetFile.objects.filter(pk=test_inputs.pk).exists()
    assert not (storage_roots["private"] / test_inputs.path).exists()
