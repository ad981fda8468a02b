"""submissions.terms: the per-example terms of a scored split, one file per submission
and split in the private storage, read back exactly (+inf kept, no pickles); what this
process wrote or read last is kept in memory."""

import io
import math
import zipfile

import numpy as np
import pytest
from django.core.files.base import ContentFile

from challenge_site.submissions import terms
from challenge_site.submissions.evaluation import Outcome, SplitOutcome
from challenge_site.submissions.models import Status
from challenge_site.submissions.storage import private_storage
from tests.factories import make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.fixture
def entry(challenge):
    return add_entry(make_dataset(challenge, "gaze"), user=make_user("ada"), val=reg(0.5, 0.4))


def test_terms_are_saved_and_read_back_exactly(entry, storage_roots):
    nlpd = np.array([0.25, math.inf, -1e-300])
    name = terms.save(submission=entry, split="val", terms={"nlpd": nlpd, "crps": None})
    assert name.startswith(f"terms/demo/gaze/{entry.pk}-val-") and name.endswith(".npz")
    assert (storage_roots["private"] / name).is_file()
    loaded = terms.load(name)
    assert list(loaded) == ["nlpd"]  # n/a terms are not stored
    assert loaded["nlpd"].dtype == np.float64 and loaded["nlpd"].tobytes() == nlpd.tobytes()
    other = terms.save(submission=entry, split="val", terms={"nlpd": nlpd})
    assert other != name  # a fresh name per run: a reader never sees a file change
    terms.delete([name, "", None])
    assert not (storage_roots["private"] / name).exists()
    assert (storage_roots["private"] / other).exists()


def _split(split: str, nlpd) -> SplitOutcome:
    return SplitOutcome(
        split=split,
        filename=f"gaze_{split}_predict.txt",
        rows=len(nlpd),
        non_probabilistic=False,
        scores={},
        plot_data={},
        terms={"nlpd": np.array(nlpd)},
    )


def test_an_outcome_stores_every_split_or_none(entry, storage_roots):
    assert terms.save_outcome(submission_id=entry.pk, outcome=Outcome(Status.INVALID)) == {}
    scored = Outcome(Status.SCORED, [_split("val", [0.5, 0.25]), _split("test", [1.0])])
    stored = terms.save_outcome(submission_id=entry.pk, outcome=scored)
    assert list(stored) == ["val", "test"]
    assert terms.load(stored["test"])["nlpd"].tolist() == [1.0]
    # A split whose terms cannot be stored: the ones saved before it are deleted again.
    broken = Outcome(Status.SCORED, [_split("val", [0.5]), _split("test", ["x"])])
    before = set((storage_roots["private"] / "terms").rglob("*.npz"))
    with pytest.raises(ValueError):
        terms.save_outcome(submission_id=entry.pk, outcome=broken)
    assert set((storage_roots["private"] / "terms").rglob("*.npz")) == before


def test_terms_are_stored_uncompressed_and_older_compressed_files_still_read(entry, storage_roots):
    name = terms.save(submission=entry, split="val", terms={"nlpd": np.arange(3.0)})
    with zipfile.ZipFile(storage_roots["private"] / name) as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, nlpd=np.array([0.5, math.inf]))
    old = private_storage().save("terms/demo/gaze/old.npz", ContentFile(buffer.getvalue()))
    assert terms.load(old)["nlpd"].tolist() == [0.5, math.inf]


def test_a_file_just_written_is_read_back_from_memory_until_deleted(entry, storage_roots):
    name = terms.save(submission=entry, split="val", terms={"nlpd": np.array([1.0, 2.0])})
    (storage_roots["private"] / name).unlink()  # not read again: kept since it was written
    loaded = terms.load(name)
    assert loaded["nlpd"].tolist() == [1.0, 2.0]
    loaded["nlpd"][0] = 50.0  # the caller's copy
    assert terms.load(name)["nlpd"].tolist() == [1.0, 2.0]
    terms.delete([name])
    with pytest.raises(FileNotFoundError):
        terms.load(name)  # forgotten with the file


def test_a_compared_array_is_kept_apart_from_whole_files(entry, storage_roots):
    """load_array: one array of a file, kept in COMPARED by the file's name, so that
    whole files written since (KEPT's) do not push it out; delete() drops it too."""
    values = np.array([0.5, math.inf, 2.0])
    name = terms.save(submission=entry, split="val", terms={"nlpd": values, "crps": values / 2})
    terms.KEPT.clear()  # as if many files were written since
    assert terms.load_array(name, "brier") is None  # no such array: nothing kept
    assert terms.COMPARED.peek(name) is None
    assert terms.load_array(name, "nlpd").tobytes() == values.tobytes()  # read once …
    (storage_roots["private"] / name).unlink()
    got = terms.load_array(name, "nlpd")  # … then from memory
    assert got.tobytes() == values.tobytes()
    got[0] = 9.0  # the caller's copy
    assert terms.load_array(name, "nlpd")[0] == 0.5
    assert list(terms.COMPARED.peek(name)) == ["nlpd"]  # the one array, not the file
    with pytest.raises(FileNotFoundError):
        terms.load_array(name, "crps")  # not kept: read from the (deleted) file
    terms.delete([name])
    assert terms.COMPARED.peek(name) is None


def test_a_remembered_array_is_read_without_the_storage(entry, storage_roots):
    name = terms.save(submission=entry, split="test", terms={"nlpd": np.arange(4.0)})
    terms.remember_array(name, "nlpd", np.arange(4.0))
    terms.KEPT.clear()
    (storage_roots["private"] / name).unlink()
    assert terms.load_array(name, "nlpd").tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(FileNotFoundError):
        terms.load(name)  # the whole file was not kept


def test_two_arrays_of_one_file_are_kept_side_by_side(entry, storage_roots):
    """A Ladder ranked by another loss than probing's reads another array of the same
    file: both stay kept, neither replaces the other."""
    nlpd, crps = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    name = terms.save(submission=entry, split="val", terms={"nlpd": nlpd, "crps": crps})
    terms.remember_array(name, "nlpd", nlpd)
    terms.KEPT.clear()
    assert terms.load_array(name, "crps").tolist() == [0.5, 0.25]  # read from the file
    (storage_roots["private"] / name).unlink()
    assert terms.load_array(name, "nlpd").tolist() == [1.0, 2.0]
    assert terms.load_array(name, "crps").tolist() == [0.5, 0.25]
    assert sorted(terms.COMPARED.peek(name)) == ["crps", "nlpd"]
