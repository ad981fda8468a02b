"""Zipping a folder or files into a submission: prediction files at the top, by name."""

import zipfile

import pytest
from puc_client import errors
from puc_client.errors import ClientError
from puc_client.zipping import prepared


def test_folder_gives_its_prediction_files_and_leaves_the_rest(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "gaze_val_predict.txt").write_text("1 0 1\n")
    (folder / "gaze_train_predict.txt").write_text("1 0 2\n")
    (folder / "Gaze_Validation_Predict.csv").write_text("near miss\n")  # kept: the check names it
    (folder / "gaze_val_inputs.txt").write_text("0.1\n")
    (folder / ".DS_Store").write_text("")
    (folder / "sub").mkdir()
    with prepared([folder]) as upload:
        assert upload.built
        names = zipfile.ZipFile(upload.path).namelist()
        assert names == [
            "Gaze_Validation_Predict.csv",
            "gaze_train_predict.txt",
            "gaze_val_predict.txt",
        ]
        assert zipfile.ZipFile(upload.path).read("gaze_val_predict.txt") == b"1 0 1\n"
        assert [p.name for p in upload.skipped] == ["gaze_val_inputs.txt"]
        built = upload.path
    assert not built.exists()  # the temporary zip is removed


def test_files_go_in_under_their_own_names(tmp_path):
    (tmp_path / "a").mkdir()
    source = tmp_path / "a" / "gaze_val_predict.txt"
    source.write_text("1 0 1\n")
    other = tmp_path / "notes.txt"
    other.write_text("x\n")
    with prepared([source, other]) as upload:
        assert zipfile.ZipFile(upload.path).namelist() == ["gaze_val_predict.txt", "notes.txt"]
        assert upload.skipped == []


def test_a_zip_is_sent_as_it_is(tmp_path):
    made = tmp_path / "mine.zip"
    made.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with prepared([made]) as upload:
        assert upload.path == made and not upload.built
    assert made.exists()


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({"missing.txt": None}, "missing.txt: no such file or folder"),
        ({"empty/": None}, "empty: no prediction files in this folder"),
        ({"a.zip": b"x", "gaze_val_predict.txt": b"1"}, "a.zip: give a zip on its own"),
        (
            {"x/gaze_val_predict.txt": b"1", "y/gaze_val_predict.txt": b"2"},
            "two files named gaze_val_predict.txt",
        ),
    ],
)
def test_usage_errors(tmp_path, layout, message):
    paths = []
    for name, data in layout.items():
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir()
        elif data is not None:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
        paths.append(path)
    with pytest.raises(ClientError) as raised, prepared(paths):
        pass
    assert raised.value.code == errors.USAGE
    assert message in raised.value.message
