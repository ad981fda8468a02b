"""datasets.readme: every dataset zip carries a README.txt: the description, the files in
that zip with their rows, and the prediction file format of the dataset's task."""

import io
import zipfile

import time_machine
from django.urls import reverse

from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset

DESCRIPTION = "Gaze positions from **eye tracking**.\n\n- 3 inputs\n- one target"


def _download(client, name="gaze", **headers):
    return client.get(reverse("dataset_zip", args=["demo", name]), headers=headers)


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None
    return archive


def _readme(client, name="gaze") -> str:
    with _zip(_download(client, name)) as archive:
        return archive.read(f"{name}/README.txt").decode()


def test_readme_describes_the_dataset_and_the_released_files_only(client, challenge):
    make_dataset(challenge, "gaze", sizes=(6, 4, 5), dim=3, description=DESCRIPTION)
    with time_machine.travel(VALIDATION, tick=False), _zip(_download(client)) as archive:
        names = archive.namelist()
        readme = archive.read("gaze/README.txt").decode()
    assert names[0] == "gaze/README.txt"
    assert readme.startswith("gaze (Demo challenge)\n=====================\n")
    assert DESCRIPTION in readme  # the Markdown source as it is
    assert "Regression dataset, 3 inputs per example. Ranked by nlpd" in readme
    files = readme.split("Files in this zip\n-----------------\n")[1].split("\n\n")[0]
    assert files.splitlines() == [
        "gaze_train_inputs.txt   6 rows of 3 numbers (inputs)",
        "gaze_train_targets.txt  6 rows of one target each",
        "gaze_val_inputs.txt     4 rows of 3 numbers (inputs)",
    ]
    # Nothing of the files not released yet, not even their names.
    for unreleased in ("gaze_val_targets", "gaze_test_inputs", "gaze_test_targets"):
        assert unreleased not in readme
    assert "test_targets" not in readme and " 5 rows" not in readme


def test_readme_follows_the_release_of_more_files(client, challenge):
    challenge.results_published = True
    challenge.test_targets_release = "after_publication"
    with time_machine.travel(AFTER, tick=False):
        challenge.save()
    make_dataset(challenge, "gaze", sizes=(6, 4, 5), dim=3)
    with time_machine.travel(TEST_PHASE, tick=False):
        readme = _readme(client)
    assert "gaze_val_targets.txt    4 rows of one target each" in readme
    assert "gaze_test_inputs.txt    5 rows of 3 numbers (inputs)" in readme
    assert "gaze_test_targets" not in readme
    with time_machine.travel(AFTER, tick=False):
        readme = _readme(client)
    assert "gaze_test_targets.txt   5 rows of one target each" in readme


@time_machine.travel(VALIDATION, tick=False)
def test_readme_explains_the_regression_format_of_the_dataset(client, challenge):
    make_dataset(challenge, "gaze", min_quantile_gap=0.25, allow_samples=False)
    readme = _readme(client)
    assert "File format\n-----------\n" in readme
    assert "Predictions (regression)" in readme
    assert "Flag 1, a Gaussian: 1 m v." in readme and "    1 3.1 1.7\n" in readme
    assert "Flag 0, quantiles: 0 a1 q1 a2 q2 ... aN qN." in readme
    assert "    0 0.2 -2 0.3 -1 0.8 1 0.9 3\n" in readme
    assert "at least 0.25 apart" in " ".join(readme.split())
    assert "Flag 2 (a sample of values) is not accepted for this dataset." in readme
    assert "2 4.9 5.3" not in readme
    assert "classification" not in readme.lower()


@time_machine.travel(VALIDATION, tick=False)
def test_readme_explains_the_classification_format(client, challenge):
    make_dataset(challenge, "catalysis", task="classification", log_base=10.0)
    readme = _readme(client, "catalysis")
    flat = " ".join(readme.split())
    assert "Classification dataset" in readme and "Ranked by nlp" in readme
    assert "logarithms in base 10." in flat
    assert "Predictions (classification)" in readme
    assert (
        "One number per line: your probability that the example belongs to class +1, "
        "between 0 and 1." in flat
    )
    assert "    0.91\n    0.0625\n    5.0000000e-01\n    1\n" in readme
    assert "a targets file one target per line: +1 or -1." in flat
    assert "Flag 1" not in readme


@time_machine.travel(VALIDATION, tick=False)
def test_readme_without_description_has_no_empty_section(client, challenge):
    make_dataset(challenge, "gaze", description="   ")
    readme = _readme(client)
    assert "\n\n\n" not in readme
    assert readme.split("\n\n")[2].startswith("Files in this zip")


@time_machine.travel(VALIDATION, tick=False)
def test_readme_explains_the_multiclass_format_for_the_dataset_s_classes(client, challenge):
    dataset = make_dataset(
        challenge, "shapes", task="multiclass", classes=4, allow_ensembles=False, dim=3
    )
    readme = _readme(client, "shapes")
    spec = dataset.task_spec
    assert readme.startswith("shapes (Demo challenge)\n")
    label = spec.label
    assert f"{label} dataset of 4 classes (0 to 3), 3 inputs per example." in " ".join(
        readme.split()
    )
    assert "Ranked by nlp" in readme
    # The task's own paragraphs, for this dataset's options, and its targets' rule.
    for paragraph in spec.format_help(dataset.scoring_options):
        assert paragraph in readme
    assert " ".join(spec.readme_targets.split()) in " ".join(readme.split())
    assert "Flag 1" not in readme and "+1 or -1" not in readme


@time_machine.travel(VALIDATION, tick=False)
def test_readme_names_the_quantile_levels_and_what_they_score(client, challenge):
    make_dataset(challenge, "gaze", quantile_levels=[0.05, 0.25, 0.5, 0.75, 0.95])
    flat = " ".join(_readme(client).split())
    assert "at the levels 0.05, 0.25, 0.5, 0.75, 0.95" in flat
    assert "weighted interval score (wis)" in flat
    assert "50%: levels 0.25 to 0.75, 90%: levels 0.05 to 0.95" in flat
