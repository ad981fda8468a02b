import pytest
from django.contrib.auth.models import User
from django.urls import reverse

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
