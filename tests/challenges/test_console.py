"""The admin as each organiser's console: drafts, opening, and per-challenge organisers.

An organiser of one challenge runs it from the admin and sees nothing of another: not
in a list, not by URL, not in a filter or a choice.
"""

from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from challenge_site.challenges.opening import missing_for_opening, open_challenge
from datasets.models import Dataset
from tests.factories import (
    BEFORE_START,
    dataset_admin_form,
    dataset_files,
    make_challenge,
    make_dataset,
    make_user,
)

from .test_admin import _challenge_form

SETUP = datetime(2029, 12, 1, tzinfo=UTC)  # before make_challenge's dates


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def two(db):
    """Two challenges, each with its own organiser and a dataset."""
    mine = make_challenge(slug="mine", title="Mine")
    theirs = make_challenge(slug="theirs", title="Theirs", opened_at=None)
    make_dataset(mine, "gaze")
    make_dataset(theirs, "secret")
    return {
        "mine": mine,
        "theirs": theirs,
        "me": make_user("me", organiser_of=mine),
        "them": make_user("them", organiser_of=theirs),
    }


def test_an_organiser_sees_only_their_challenge_in_every_admin_list(two):
    client = _client(two["me"])
    pages = {
        "admin:challenges_challenge_changelist": ("Mine", "Theirs"),
        "admin:datasets_dataset_changelist": ("gaze", "secret"),
    }
    for name, (shown, hidden) in pages.items():
        page = client.get(reverse(name)).content.decode()
        assert shown in page and hidden not in page, name
    # the challenge filter of the dataset list names only their challenge
    page = client.get(reverse("admin:datasets_dataset_changelist")).content.decode()
    assert "?challenge=" in page and "Theirs" not in page
    # events of the other challenge are not listed either
    open_challenge_event = ChallengeEvent.objects.create(
        challenge=two["theirs"], kind=EventKind.OPENED, at=SETUP, detail={"datasets": []}
    )
    page = client.get(reverse("admin:challenges_challengeevent_changelist")).content.decode()
    assert "Theirs" not in page
    assert open_challenge_event.pk


def test_another_challenge_is_not_reachable_by_url(two):
    client = _client(two["me"])
    theirs = two["theirs"]
    dataset = theirs.datasets.get()
    urls = [
        reverse("admin:challenges_challenge_change", args=[theirs.pk]),
        reverse("admin:challenges_challenge_open", args=[theirs.pk]),
        reverse("admin:challenges_challenge_publish", args=[theirs.pk]),
        reverse("admin:datasets_dataset_change", args=[dataset.pk]),
    ]
    # (deleting is for superusers: 403 for this challenge and for one's own alike)
    assert (
        client.get(reverse("admin:challenges_challenge_delete", args=[theirs.pk])).status_code
        == 403
    )
    for url in urls:
        response = client.get(url)
        # the admin's "does not exist" redirect to its index, as for a missing id
        assert response.status_code == 302 and response.url == reverse("admin:index"), url
    # nor through an action on the list
    response = client.post(
        reverse("admin:challenges_challenge_changelist"),
        {"action": "open_challenges", "post": "yes", "_selected_action": [theirs.pk]},
    )
    theirs.refresh_from_db()
    assert theirs.is_draft
    # nor by moving a dataset of theirs into a challenge of mine, or one of mine into theirs
    form = dataset_admin_form(two["theirs"], dataset_files("gaze2", task="regression"))
    response = client.post(reverse("admin:datasets_dataset_add"), {**form, "name": "gaze2"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Dataset.objects.filter(name="gaze2").exists()


def test_an_organiser_changes_their_challenge_but_cannot_delete_it(two):
    client = _client(two["me"])
    mine = two["mine"]
    page = client.get(reverse("admin:challenges_challenge_change", args=[mine.pk]))
    assert page.status_code == 200
    assert client.get(reverse("admin:challenges_challenge_delete", args=[mine.pk])).status_code in (
        302,
        403,
    )
    assert Challenge.objects.filter(pk=mine.pk).exists()


def test_staff_without_a_challenge_see_no_console(two):
    client = _client(make_user("staff", is_staff=True))
    index = client.get(reverse("admin:index")).content.decode()
    assert "Challenges" not in index and "Datasets" not in index
    response = client.get(reverse("admin:challenges_challenge_change", args=[two["mine"].pk]))
    assert response.status_code in (302, 403)


@time_machine.travel(SETUP, tick=False)
def test_from_a_new_draft_to_an_open_challenge(db):
    """A member of staff allowed to add challenges starts one: a draft they organise,
    404 for everyone else, previewed on the site; "Open challenge…" lists what is
    missing, then opens it, recorded with their name."""
    founder = make_user("founder", is_staff=True)
    founder.user_permissions.add(Permission.objects.get(codename="add_challenge"))
    client = _client(founder)
    form = _challenge_form(**{"datasets-TOTAL_FORMS": "0"})
    response = client.post(reverse("admin:challenges_challenge_add"), form)
    assert response.status_code == 302, response.content.decode()
    challenge = Challenge.objects.get(slug="new")
    assert challenge.is_draft
    assert list(challenge.organisers.all()) == [founder]

    detail = reverse("challenge_detail", args=["new"])
    assert Client().get(detail).status_code == 404
    assert _client(make_user("someone")).get(detail).status_code == 404
    assert client.get(detail).status_code == 200  # the organiser previews it
    assert "new" not in Client().get(reverse("home")).content.decode().split("Challenges")[-1]

    # opening lists what is missing, and opens nothing
    open_url = reverse("admin:challenges_challenge_open", args=[challenge.pk])
    page = client.get(open_url).content.decode()
    assert "No dataset: add at least one, with its six files." in page
    assert "Yes, open it" not in page
    client.post(open_url, {"post": "yes"})
    challenge.refresh_from_db()
    assert challenge.is_draft

    # a dataset with its files, uploaded in the admin by the organiser
    files = dataset_files("gaze", task="regression")
    partial = dict(list(files.items())[:4])
    response = client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, partial)
    )
    assert response.status_code == 302, response.content.decode()
    page = client.get(open_url).content.decode()
    assert "Dataset gaze: no file for test inputs, test targets." in page
    dataset = challenge.datasets.get()
    response = client.post(
        reverse("admin:datasets_dataset_change", args=[dataset.pk]),
        dataset_admin_form(challenge, dict(list(files.items())[4:])),
    )
    assert response.status_code == 302, response.content.decode()
    page = client.get(open_url).content.decode()
    assert "Ready." in page and "Yes, open it" in page
    client.post(open_url, {"post": "yes"})
    challenge.refresh_from_db()
    assert challenge.opened_at == SETUP
    event = challenge.events.get(kind=EventKind.OPENED)
    assert (event.user, event.via, event.summary) == (founder, "admin", "Opened with gaze")
    assert Client().get(detail).status_code == 200


def test_what_is_missing_before_opening(db):
    challenge = make_challenge(slug="draft", opened_at=None)
    make_dataset(challenge, "gaze")
    with time_machine.travel(BEFORE_START, tick=False):
        assert missing_for_opening(challenge, now=BEFORE_START) == []
    late = datetime(2031, 1, 1, tzinfo=UTC)
    assert missing_for_opening(challenge, now=late) == [
        "The deadline (08 Feb 2030 23:59:59 UTC) has passed: nobody could submit."
    ]
    challenge.datasets.get().files.filter(split="val", kind="targets").delete()
    assert missing_for_opening(challenge, now=BEFORE_START) == [
        "Dataset gaze: no file for val targets."
    ]
    with pytest.raises(Exception, match="no file for val targets"):
        open_challenge(challenge, user=None, now=BEFORE_START)
    assert Challenge.objects.get(pk=challenge.pk).is_draft


def test_opening_twice_is_a_no_op(db):
    challenge = make_challenge(slug="draft", opened_at=None)
    make_dataset(challenge, "gaze")
    assert open_challenge(challenge, user=None, now=BEFORE_START) is True
    assert open_challenge(challenge, user=None, now=SETUP) is False
    assert Challenge.objects.get(pk=challenge.pk).opened_at == BEFORE_START
    assert challenge.events.filter(kind=EventKind.OPENED).count() == 1


def test_the_dataset_page_shows_the_options_of_its_task_and_log_bases_as_written(two):
    client = _client(two["me"])
    mine = two["mine"]
    regression = mine.datasets.get()
    classification = make_dataset(mine, "tiny", task="classification")
    page = client.get(reverse("admin:datasets_dataset_change", args=[classification.pk]))
    html = page.content.decode()
    assert 'name="nmse_normaliser"' not in html and 'name="allow_samples"' not in html
    assert 'name="log_base" value="e"' in html
    html = client.get(reverse("admin:datasets_dataset_change", args=[regression.pk])).content
    assert b'name="nmse_normaliser"' in html
    # the challenge page's inline has no regression-only column either
    html = client.get(reverse("admin:challenges_challenge_change", args=[mine.pk])).content
    assert b"nmse_normaliser" not in html and b"allow_samples" not in html

    from datasets.forms import LogBaseField

    field = LogBaseField()
    assert field.clean("e") == pytest.approx(2.718281828459045)
    assert (field.clean(" 2 "), field.clean("10"), field.clean("1.5")) == (2.0, 10.0, 1.5)
    for bad in ("1", "0", "-2", "nats", "inf", "nan"):
        with pytest.raises(Exception, match="Enter e, 2, 10"):
            field.clean(bad)


@time_machine.travel(SETUP, tick=False)
def test_dataset_files_are_uploaded_from_the_challenge_page(db):
    """A new challenge, its dataset and the dataset's six files in one form; the files
    are checked as on the dataset's page (a bad one stops the whole form)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    founder = make_user("founder", is_superuser=True)
    client = _client(founder)
    files = dataset_files("gaze", task="regression")

    def uploads(named):
        return [SimpleUploadedFile(name, data, "text/plain") for name, data in named.items()]

    bad = {**files, "gaze_val_targets.txt": b"1\nabc\n"}
    response = client.post(
        reverse("admin:challenges_challenge_add"),
        _challenge_form(**{"datasets-0-upload": uploads(bad)}),
    )
    assert response.status_code == 200
    assert "gaze_val_targets.txt:2" in response.content.decode()
    assert not Challenge.objects.exists()

    response = client.post(
        reverse("admin:challenges_challenge_add"),
        _challenge_form(**{"datasets-0-upload": uploads(files)}),
        follow=True,
    )
    assert "Stored gaze_" in response.content.decode()
    dataset = Dataset.objects.get(challenge__slug="new")
    assert dataset.files.count() == 6 and dataset.n_test == 5
    assert missing_for_opening(dataset.challenge, now=SETUP) == []


def test_co_organisers_are_added_by_their_exact_user_names(two):
    """The organisers field lists only the challenge's own organisers (and the user): no
    account of the site is named; others are added by exact user name, and get the
    staff status that opens the console."""
    mine = two["mine"]
    colleague = make_user("colleague")
    client = _client(two["me"])
    url = reverse("admin:challenges_challenge_change", args=[mine.pk])
    page = client.get(url).content.decode()
    assert ">colleague<" not in page and ">them<" not in page
    form = _challenge_form(slug="mine", title="Mine", **{"datasets-TOTAL_FORMS": "0"})
    form["organisers"] = [two["me"].pk]
    response = client.post(url, {**form, "add_organisers": "colleague nobody"})
    assert "No active account named nobody." in response.content.decode()
    response = client.post(url, {**form, "add_organisers": "colleague"})
    assert response.status_code == 302, response.content.decode()
    colleague.refresh_from_db()
    assert colleague.is_staff and set(mine.organisers.all()) == {two["me"], colleague}
    assert _client(colleague).get(url).status_code == 200
