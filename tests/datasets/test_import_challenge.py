"""import_challenge: a challenge folder imported from the command line, its summary
printed, every problem a CommandError (what importing checks: test_importing.py)."""

import pytest
from django.core.management import CommandError, call_command

from tests.factories import dataset_files, write_challenge_folder

TOML = """
slug = "epuc"
title = "Evaluating Predictive Uncertainty"
start = 2004-11-10T00:00:00Z
test_start = 2004-12-03T00:00:00Z
deadline = 2004-12-10T23:59:59Z

[datasets.gaze]
task = "regression"
"""


@pytest.fixture
def folder(tmp_path):
    files = {"gaze": dataset_files("gaze", task="regression", sizes=(5, 3, 4), dim=2)}
    return write_challenge_folder(tmp_path / "epuc", TOML, files)


@pytest.mark.django_db
def test_command_prints_summary_and_fails_loudly(folder, capsys):
    call_command("import_challenge", str(folder))
    assert "Created challenge 'epuc'" in capsys.readouterr().out
    (folder / "challenge.toml").write_text("slug = 3")
    with pytest.raises(CommandError, match="key 'slug': expected a string, found 3"):
        call_command("import_challenge", str(folder))
    with pytest.raises(CommandError, match="not a folder"):
        call_command("import_challenge", str(folder / "nope"))
    with pytest.raises(CommandError, match="challenge.toml: missing file"):
        call_command("import_challenge", str(folder / "gaze"))
