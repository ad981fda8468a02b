import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

import scoring
from datasets.models import Dataset, DatasetFile
from tests.factories import dataset_admin_form, dataset_files, make_dataset


@pytest.fixture
def admin_client(client, db):
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "pw"))
    return client


def test_upload_all_files_when_adding_a_dataset(admin_client, challenge, storage_roots):
    files = dataset_files("gaze", task="regression", sizes=(6, 4, 5), dim=3)
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, files), follow=True
    )
    assert "Stored gaze_train_inputs.txt" in response.content.decode()
    dataset = Dataset.objects.get()
    assert (dataset.input_dim, dataset.n_train, dataset.n_val, dataset.n_test) == (3, 6, 4, 5)
    stored = {
        f.filename: (storage_roots[f.storage_alias] / f.path).read_bytes()
        for f in dataset.files.all()
    }
    assert stored == files


def test_bad_upload_is_shown_with_file_and_line_and_nothing_is_stored(admin_client, challenge):
    files = {
        "gaze_train_inputs.txt": b"1 2\n3\n",
        "gaze_train_targets.txt": b"1\n2\n",
        "readme.txt": b"hi",
    }
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, files)
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "gaze_train_inputs.txt:2: expected 2 numbers (as on line 1), found 1" in page
    assert "readme.txt: unexpected file name" in page
    assert not Dataset.objects.exists() and not DatasetFile.objects.exists()


def test_replacing_one_file_is_checked_against_the_others(admin_client, challenge):
    dataset = make_dataset(challenge, sizes=(6, 4, 5))
    url = reverse("admin:datasets_dataset_change", args=[dataset.pk])
    initial = {f"files-{i}-id": f.pk for i, f in enumerate(dataset.files.all())}
    management = {"files-TOTAL_FORMS": "6", "files-INITIAL_FORMS": "6", **initial}
    data = dataset_admin_form(challenge, {"gaze_val_targets.txt": b"1\n2\n"}, **management)
    response = admin_client.post(url, data)
    assert (
        "gaze_val_targets.txt: expected 4 rows (one per row of gaze_val_inputs.txt), found 2"
        in response.content.decode()
    )
    data = dataset_admin_form(challenge, {"gaze_val_targets.txt": b"1\n2\n3\n4\n"}, **management)
    assert admin_client.post(url, data).status_code == 302
    assert dataset.files.get(split="val", kind="targets").rows == 4


def test_changing_the_task_rechecks_stored_targets(admin_client, challenge):
    dataset = make_dataset(challenge, sizes=(6, 4, 5))
    initial = {f"files-{i}-id": f.pk for i, f in enumerate(dataset.files.all())}
    data = dataset_admin_form(
        challenge,
        {},
        task="classification",
        **{"files-TOTAL_FORMS": "6", "files-INITIAL_FORMS": "6"},
        **initial,
    )
    response = admin_client.post(reverse("admin:datasets_dataset_change", args=[dataset.pk]), data)
    page = response.content.decode()
    assert "The stored targets do not fit a classification dataset:" in page
    assert "gaze_train_targets.txt:1: expected a class label of +1 or -1" in page
    dataset.refresh_from_db()
    assert dataset.task == "regression"


def test_deleting_a_stored_file_in_the_admin(
    admin_client, challenge, storage_roots, django_capture_on_commit_callbacks
):
    dataset = make_dataset(challenge, sizes=(6, 4, 5))
    files = list(dataset.files.all())
    data = dataset_admin_form(
        challenge, {}, **{"files-TOTAL_FORMS": "6", "files-INITIAL_FORMS": "6"}
    )
    for i, datafile in enumerate(files):
        data[f"files-{i}-id"] = datafile.pk
        data[f"files-{i}-dataset"] = dataset.pk
    victim = next(f for f in files if f.filename == "gaze_test_targets.txt")
    data[f"files-{files.index(victim)}-DELETE"] = "on"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:datasets_dataset_change", args=[dataset.pk]), data
        )
    assert response.status_code == 302
    assert not dataset.files.filter(pk=victim.pk).exists()
    assert not (storage_roots["private"] / victim.path).exists()
    assert dataset.files.count() == 5


def test_the_admin_shows_the_settings_of_the_dataset_s_task_only(admin_client, challenge):
    """Each task's own settings (scoring.tasks: TaskSpec.settings) in a section of their
    own: all of them while a new dataset has no task yet, then its task's alone."""
    added = admin_client.get(reverse("admin:datasets_dataset_add")).content.decode()
    assert "Regression options" in added and "Only for regression datasets." in added
    assert 'name="allow_samples"' in added and 'name="nmse_normaliser"' in added
    regression = make_dataset(challenge, "gaze", task="regression")
    classification = make_dataset(challenge, "catalysis", task="classification")
    page = admin_client.get(reverse("admin:datasets_dataset_change", args=[regression.pk]))
    page = page.content.decode()
    assert "Regression options" in page and 'name="min_quantile_gap"' in page
    assert "Only for regression datasets." not in page
    page = admin_client.get(reverse("admin:datasets_dataset_change", args=[classification.pk]))
    page = page.content.decode()
    assert "Regression options" not in page and 'name="allow_samples"' not in page


# --- Multiclass datasets (issue 26) ----------------------------------------------------


def _multiclass_form(challenge, files, **overrides) -> dict:
    values = {"name": "cifar", "task": "multiclass", "classes": "4", "allow_ensembles": "on"}
    return dataset_admin_form(challenge, files, **{**values, **overrides})


def test_the_admin_shows_a_multiclass_dataset_its_own_settings(admin_client, challenge):
    label = scoring.get_task("multiclass").label
    added = admin_client.get(reverse("admin:datasets_dataset_add")).content.decode()
    assert f"{label} options" in added and f"Only for {label.lower()} datasets." in added
    assert 'name="classes"' in added and 'name="allow_ensembles"' in added
    cifar = make_dataset(challenge, "cifar", task="multiclass", classes=4, sizes=(8, 4, 5))
    page = admin_client.get(reverse("admin:datasets_dataset_change", args=[cifar.pk]))
    page = page.content.decode()
    assert 'name="classes"' in page and 'name="allow_ensembles"' in page
    assert 'name="allow_samples"' not in page and "Regression options" not in page
    gaze = make_dataset(challenge, "gaze", task="regression")
    page = admin_client.get(reverse("admin:datasets_dataset_change", args=[gaze.pk]))
    assert b'name="classes"' not in page.content and b'name="allow_ensembles"' not in page.content


def test_adding_a_multiclass_dataset_checks_its_labels_against_the_classes(admin_client, challenge):
    files = dataset_files("cifar", task="multiclass", classes=4, sizes=(8, 4, 5))
    files["cifar_val_targets.txt"] = b"0\n3\n4\n1\n"
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), _multiclass_form(challenge, files)
    )
    assert response.status_code == 200
    assert "cifar_val_targets.txt:3: class label 4 is outside 0..3" in response.content.decode()
    assert not Dataset.objects.exists()
    files["cifar_val_targets.txt"] = b"0\n3\n2\n1\n"
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), _multiclass_form(challenge, files)
    )
    assert response.status_code == 302
    cifar = Dataset.objects.get()
    assert (cifar.task, cifar.classes, cifar.allow_ensembles) == ("multiclass", 4, True)
    assert (cifar.n_train, cifar.n_val, cifar.n_test) == (8, 4, 5)


def test_a_multiclass_dataset_without_classes_is_refused_on_the_field(admin_client, challenge):
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), _multiclass_form(challenge, {}, classes="")
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["classes"] == ["A multiclass dataset needs its number of classes (2 to 1000)."]
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), _multiclass_form(challenge, {}, classes="1001")
    )
    assert response.context["adminform"].form.errors["classes"] == [
        "Ensure this value is less than or equal to 1000."
    ]
    assert not Dataset.objects.exists()


def test_changing_the_task_shows_the_new_task_s_settings_before_saving(admin_client, challenge):
    """The page posted showed regression's settings: the multiclass ones come back to be
    given (classes) and checked (allow_ensembles, ticked as stored), then save."""
    gaze = Dataset.objects.create(challenge=challenge, name="gaze", task="regression")
    url = reverse("admin:datasets_dataset_change", args=[gaze.pk])
    page = admin_client.get(url)
    shown = page.context["adminform"].form["shown_settings"].value()
    assert shown == "allow_samples min_quantile_gap nmse_normaliser quantile_levels"
    data = dataset_admin_form(challenge, {}, task="multiclass", shown_settings=shown)
    response = admin_client.post(url, data)
    form = response.context["adminform"].form
    assert form.errors["classes"] == [
        "A multiclass dataset needs its number of classes (2 to 1000)."
    ]
    html = response.content.decode()
    assert 'name="classes"' in html
    assert re.search(r'<input type="checkbox" name="allow_ensembles"[^>]* checked', html)
    resent = {
        **data,
        "classes": "10",
        "allow_ensembles": "on",
        "shown_settings": form["shown_settings"].value(),
    }
    assert admin_client.post(url, resent).status_code == 302
    gaze.refresh_from_db()
    assert (gaze.task, gaze.classes, gaze.allow_ensembles) == ("multiclass", 10, True)


def test_fewer_classes_recheck_the_stored_targets(admin_client, challenge):
    cifar = make_dataset(challenge, "cifar", task="multiclass", classes=4, sizes=(8, 4, 5))
    url = reverse("admin:datasets_dataset_change", args=[cifar.pk])
    initial = {f"files-{i}-id": f.pk for i, f in enumerate(cifar.files.all())}
    management = {"files-TOTAL_FORMS": "6", "files-INITIAL_FORMS": "6", **initial}
    response = admin_client.post(url, _multiclass_form(challenge, {}, classes="3", **management))
    page = response.content.decode()
    assert "The stored targets do not fit a multiclass dataset:" in page
    assert "cifar_train_targets.txt:" in page and "is outside 0..2" in page
    cifar.refresh_from_db()
    assert cifar.classes == 4


def test_more_classes_than_the_submission_limits_allow_are_refused(
    admin_client, challenge, settings
):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 150  # 5 test rows × 4 classes × 5 bytes = 100
    cifar = make_dataset(challenge, "cifar", task="multiclass", classes=4, sizes=(8, 4, 5))
    url = reverse("admin:datasets_dataset_change", args=[cifar.pk])
    initial = {f"files-{i}-id": f.pk for i, f in enumerate(cifar.files.all())}
    management = {"files-TOTAL_FORMS": "6", "files-INITIAL_FORMS": "6", **initial}
    response = admin_client.post(url, _multiclass_form(challenge, {}, classes="10", **management))
    assert response.context["adminform"].form.errors["classes"] == [
        'cifar: a test prediction file of 5 rows of 10 probabilities (np.savetxt with fmt="%.6g") '
        "is about 250 bytes zipped, over the 150 bytes an upload may have: use fewer classes "
        "or rows, or raise SUBMISSION_MAX_UPLOAD_BYTES"
    ]
    cifar.refresh_from_db()
    assert cifar.classes == 4


# --- Quantile levels (spec §8) -----------------------------------------------------------


def _change_form(dataset, **overrides) -> dict:
    data = dataset_admin_form(dataset.challenge, {}, **overrides)
    data.pop("upload")
    return data


def test_quantile_levels_are_set_in_the_admin_as_written(
    admin_client, challenge, django_capture_on_commit_callbacks, monkeypatch
):
    dataset = make_dataset(challenge)
    url = reverse("admin:datasets_dataset_change", args=[dataset.pk])
    assert b'name="quantile_levels"' in admin_client.get(url).content
    rescored = []
    monkeypatch.setattr(
        "challenge_site.submissions.services.dataset_files_changed",
        lambda *, dataset, now: rescored.append(dataset.pk),
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, _change_form(dataset, quantile_levels="0.05, 0.5 0.95"))
    assert response.status_code == 302
    dataset.refresh_from_db()
    assert dataset.quantile_levels == [0.05, 0.5, 0.95]
    assert dataset.scoring_options.quantile_levels == (0.05, 0.5, 0.95)
    assert rescored == [dataset.pk]  # new levels: every entry scored again
    html = admin_client.get(url).content.decode()
    assert 'value="0.05, 0.5, 0.95"' in html
    # Saved unchanged: nothing to score again; emptied: no levels.
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, _change_form(dataset, quantile_levels="0.05, 0.5, 0.95"))
    assert rescored == [dataset.pk]
    admin_client.post(url, _change_form(dataset, quantile_levels=" "))
    dataset.refresh_from_db()
    assert dataset.quantile_levels is None


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("0.5, 0.4", "quantile levels must increase strictly (0.4 after 0.5)"),
        ("0.1, 1", "quantile levels must lie strictly between 0 and 1, got 1.0"),
        ("0.1, ninety", "expected numbers"),
    ],
)
def test_bad_quantile_levels_are_refused_on_the_field(admin_client, challenge, written, message):
    dataset = make_dataset(challenge)
    url = reverse("admin:datasets_dataset_change", args=[dataset.pk])
    response = admin_client.post(url, _change_form(dataset, quantile_levels=written))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert any(message in error for error in errors["quantile_levels"]), errors
    dataset.refresh_from_db()
    assert dataset.quantile_levels is None


def test_wis_may_rank_a_dataset_with_levels_only(admin_client, challenge):
    dataset = make_dataset(challenge)
    url = reverse("admin:datasets_dataset_change", args=[dataset.pk])
    refused = admin_client.post(url, _change_form(dataset, ranking_loss="wis"))
    assert refused.status_code == 200
    errors = str(refused.context["adminform"].form.errors)
    assert "the ranking loss &#x27;wis&#x27; is not computed for this dataset" in errors
    assert "only for a dataset with quantile levels" in errors
    ok = admin_client.post(
        url, _change_form(dataset, ranking_loss="wis", quantile_levels="0.1 0.9")
    )
    assert ok.status_code == 302
    dataset.refresh_from_db()
    assert (dataset.ranking_loss, dataset.quantile_levels) == ("wis", [0.1, 0.9])


def test_a_file_with_many_bad_lines_is_summarised_not_listed_whole(admin_client, challenge):
    bad = b"".join(b"1,2\n" if i % 2 else b"x\n" for i in range(75))
    files = {"gaze_train_inputs.txt": b"1 2\n" + bad, "gaze_train_targets.txt": b"1\n" * 76}
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, files)
    )
    page = response.content.decode()
    errors = re.findall(r"<li>gaze_train_inputs\.txt:\d+: ", page)
    assert len(errors) == 8  # the first eight bad lines, then one line for the rest
    assert "… and 67 more lines with problems" in page
    assert "gaze_train_inputs.txt: " in page  # the report's summary lines stay
    assert not Dataset.objects.exists()
