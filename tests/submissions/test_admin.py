"""The submissions console in the admin: each organiser sees and moderates the submissions
of their own challenges only (superusers: all), with filters, search, the moderation
actions behind a page asking why, and the read-only moderation history."""

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from challenge_site.submissions.models import (
    Moderation,
    ModerationAction,
    ModerationEvent,
    Submission,
)
from tests.factories import AFTER, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, at, page_ids, reg
from tests.pages import page_text

CHANGELIST = reverse("admin:submissions_submission_changelist")
EVENTS = reverse("admin:submissions_moderationevent_changelist")


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(AFTER, tick=False):
        yield


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _change(submission) -> str:
    return reverse("admin:submissions_submission_change", args=[submission.pk])


def _moderate(submission, action) -> str:
    return reverse("admin:submissions_submission_moderate", args=[submission.pk, action])


def _rows(response) -> list[int]:
    """Submission ids of the changelist's rows."""
    return [int(pk) for pk in response.context["cl"].result_list.values_list("pk", flat=True)]


@pytest.fixture
def two(challenge, organiser):
    """``challenge`` (slug demo, dataset gaze) with its ``organiser``, and another
    challenge (a draft, dataset secret) with its own; entries in both."""
    gaze = make_dataset(challenge, "gaze")
    iris = make_dataset(challenge, "iris", task="classification")
    theirs = make_challenge(slug="theirs", title="Theirs", opened_at=None)
    secret = make_dataset(theirs, "secret")
    ada, grace = make_user("ada", display_name="Ada L."), make_user("grace")
    return {
        "me": organiser,
        "them": make_user("them", organiser_of=theirs),
        "theirs": theirs,
        "ada": ada,
        "grace": grace,
        "baseline": add_entry(gaze, baseline=True, created=at(-5), val=reg(2.0, 1.0)),
        "gp": add_entry(
            gaze, user=ada, created=at(0), val=reg(0.1, 0.5), method="Gaussian process"
        ),
        "trees": add_entry(
            gaze, user=grace, created=at(1), val=reg(0.2, 0.5), test=reg(0.2, 0.5), method="Trees"
        ),
        "svm": add_entry(iris, user=ada, created=at(2), method="SVM", status="invalid"),
        "secret": add_entry(secret, user=grace, created=at(3), val=reg(0.3, 0.5), method="Hush"),
    }


def _hidden_everywhere(client, submission):
    """Not in the list, not by URL (the admin's "does not exist" redirect), not by a
    moderation page, not by an action, and nothing of it in the events list."""
    assert submission.pk not in _rows(client.get(CHANGELIST))
    for url in (_change(submission), _moderate(submission, "hide")):
        response = client.get(url)
        assert response.status_code == 302 and response.url == reverse("admin:index"), url
    response = client.post(
        _moderate(submission, "disqualify"), {"post": "yes", "reason": "Mine now."}
    )
    assert response.status_code == 302 and response.url == reverse("admin:index")
    for action in ("hide_selected", "disqualify_selected", "rescore_selected"):
        client.post(
            CHANGELIST,
            {"action": action, "_selected_action": [submission.pk], "post": "yes", "reason": "X"},
        )
    submission.refresh_from_db()
    assert submission.moderation == Moderation.NONE
    assert not submission.moderation_events.exists()


def test_an_organiser_sees_and_moderates_only_their_challenges_submissions(two):
    client = _client(two["me"])
    response = client.get(CHANGELIST)
    assert response.status_code == 200
    mine = {two[k].pk for k in ("baseline", "gp", "trees", "svm")}
    assert set(_rows(response)) == mine
    page = response.content.decode()
    assert "Hush" not in page and "Theirs" not in page and "secret" not in page
    _hidden_everywhere(client, two["secret"])
    # the other organiser cannot reach this challenge's entries either
    _hidden_everywhere(_client(two["them"]), two["gp"])
    assert _rows(_client(two["them"]).get(CHANGELIST)) == [two["secret"].pk]


def test_the_events_of_another_challenge_are_not_shown(two):
    ModerationEvent.objects.create(
        submission=two["secret"],
        action=ModerationAction.HIDE,
        reason="Theirs.",
        previous="none",
        at=AFTER,
    )
    client = _client(two["me"])
    page = client.get(EVENTS)
    assert page.status_code == 200 and "Theirs." not in page.content.decode()
    event = ModerationEvent.objects.get()
    response = client.get(reverse("admin:submissions_moderationevent_change", args=[event.pk]))
    assert response.status_code == 302 and response.url == reverse("admin:index")
    assert "Theirs." in _client(two["them"]).get(EVENTS).content.decode()


def test_the_filters_offer_only_the_organisers_challenges_and_datasets(two):
    client = _client(two["me"])
    page = client.get(CHANGELIST).content.decode()
    assert f"?challenge={two['theirs'].pk}" not in page
    assert f"?challenge={two['gp'].dataset.challenge_id}" in page
    assert f"?dataset={two['secret'].dataset_id}" not in page
    assert (
        f"?dataset={two['gp'].dataset_id}" in page and f"?dataset={two['svm'].dataset_id}" in page
    )
    # a superuser is offered both challenges, and their datasets labelled by challenge
    page = _client(make_user("root", is_superuser=True)).get(CHANGELIST).content.decode()
    assert f"?challenge={two['theirs'].pk}" in page and "theirs · secret" in page
    # asking for another challenge by hand finds nothing
    response = client.get(f"{CHANGELIST}?challenge={two['theirs'].pk}")
    assert _rows(response) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("dataset={iris}", ["svm"]),
        ("split=test", ["trees"]),
        ("split=val", ["trees", "gp", "baseline"]),
        ("split=nope", []),
        ("status=invalid", ["svm"]),
        ("phase=validation", ["svm", "trees", "gp", "baseline"]),
        ("is_baseline__exact=1", ["baseline"]),
        ("participant={ada}", ["svm", "gp"]),
        ("participant=999999", []),
        ("participant=nope", []),
        ("q=grace", ["trees"]),
        ("q=Ada+L.", ["svm", "gp"]),
        ("q=iris", ["svm"]),
        ("q=gaussian", ["gp"]),
        ("created__year=2030&created__month=1", ["svm", "trees", "gp", "baseline"]),
        ("created__year=2029", []),
    ],
)
def test_filters_and_search(two, query, expected):
    query = query.format(iris=two["svm"].dataset_id, ada=two["ada"].pk)
    response = _client(two["me"]).get(f"{CHANGELIST}?{query}")
    assert response.status_code == 200
    assert _rows(response) == [two[name].pk for name in expected]


def test_the_moderation_filter_and_the_participant_link(two):
    client = _client(two["me"])
    two["gp"].moderation, two["gp"].moderation_reason = Moderation.HIDDEN, "Duplicate."
    two["gp"].save()
    assert _rows(client.get(f"{CHANGELIST}?moderation__exact=hidden")) == [two["gp"].pk]
    assert _rows(client.get(f"{CHANGELIST}?moderation__exact=disqualified")) == []
    page = client.get(CHANGELIST).content.decode()
    assert f'href="?participant={two["ada"].pk}"' in page and "Ada L. (ada)" in page
    assert "<strong>Hidden</strong>: Duplicate." in page
    # chosen, the participant shows in the filter list by name
    page = page_text(client.get(f"{CHANGELIST}?participant={two['ada'].pk}"))
    assert "By participant" in page and "ada" in page


def test_hiding_asks_for_a_reason_then_records_it(two):
    client = _client(two["me"])
    gp, trees, baseline = two["gp"], two["trees"], two["baseline"]
    selection = {"action": "hide_selected", "_selected_action": [gp.pk, baseline.pk]}
    page = client.post(CHANGELIST, selection)
    assert page.status_code == 200
    text = page_text(page)
    assert "Hide from the leaderboards 1 entry?" in text
    assert "Reason (required)" in text and "Gaussian process" in text
    assert f"#{baseline.pk}" in text and "baselines are never moderated" in text
    # no reason: the page again, with the error, and nothing changed
    for reason in ("", "   "):
        page = client.post(CHANGELIST, {**selection, "post": "yes", "reason": reason})
        assert page.status_code == 200
        assert "A reason is required to hide an entry" in page_text(page)
    gp.refresh_from_db()
    assert gp.moderation == Moderation.NONE and not ModerationEvent.objects.exists()

    response = client.post(CHANGELIST, {**selection, "post": "yes", "reason": "Duplicate of #3."})
    assert response.status_code == 302
    gp.refresh_from_db()
    assert (gp.moderation, gp.moderation_reason, gp.moderated_at) == (
        Moderation.HIDDEN,
        "Duplicate of #3.",
        AFTER,
    )
    event = ModerationEvent.objects.get()
    assert (event.submission, event.action, event.reason, event.user, event.username, event.at) == (
        gp,
        ModerationAction.HIDE,
        "Duplicate of #3.",
        two["me"],
        "organiser",
        AFTER,
    )
    baseline.refresh_from_db()
    assert baseline.moderation == Moderation.NONE
    assert gp.pk not in page_ids(Client().get("/challenges/demo/datasets/gaze/leaderboard/"))
    assert trees.pk in page_ids(Client().get("/challenges/demo/datasets/gaze/leaderboard/"))


def test_disqualifying_and_restoring_from_the_submissions_page(two):
    client = _client(two["me"])
    trees = two["trees"]
    page = client.get(_change(trees)).content.decode()
    assert _moderate(trees, "hide") in page and _moderate(trees, "disqualify") in page
    assert _moderate(trees, "restore") not in page
    page = client.get(_moderate(trees, "disqualify"))
    assert "Reason (required): shown publicly" in page_text(page)
    page = client.post(_moderate(trees, "disqualify"), {"post": "yes", "reason": ""})
    assert "A reason is required to disqualify an entry" in page_text(page)
    response = client.post(
        _moderate(trees, "disqualify"), {"post": "yes", "reason": "Submitted from two accounts."}
    )
    assert response.status_code == 302 and response.url == _change(trees)
    public = page_text(Client().get(f"/submissions/{trees.pk}/"))
    assert "Disqualified: Submitted from two accounts." in public

    page = client.get(_change(trees))
    text = page_text(page)
    assert _moderate(trees, "restore") in page.content.decode()
    assert _moderate(trees, "disqualify") not in page.content.decode()
    assert "Submitted from two accounts." in text and "Disqualified" in text  # the history

    # restoring needs no reason
    response = client.post(_moderate(trees, "restore"), {"post": "yes", "reason": ""})
    assert response.status_code == 302
    trees.refresh_from_db()
    assert (trees.moderation, trees.moderation_reason) == (Moderation.NONE, "")
    assert list(trees.moderation_events.values_list("action", "reason", "username")) == [
        (ModerationAction.RESTORE, "", "organiser"),
        (ModerationAction.DISQUALIFY, "Submitted from two accounts.", "organiser"),
    ]
    assert client.get(_moderate(trees, "nope")).status_code == 404
    # a baseline's page offers no moderation
    assert (
        _moderate(two["baseline"], "hide")
        not in client.get(_change(two["baseline"])).content.decode()
    )


def test_a_superuser_moderates_every_challenge(two):
    root = make_user("root", is_superuser=True)
    client = _client(root)
    assert set(_rows(client.get(CHANGELIST))) == {
        two[k].pk for k in ("baseline", "gp", "trees", "svm", "secret")
    }
    selection = {
        "action": "disqualify_selected",
        "_selected_action": [two["secret"].pk, two["gp"].pk],
    }
    client.post(CHANGELIST, {**selection, "post": "yes", "reason": "Cheating."})
    assert set(
        Submission.objects.filter(moderation=Moderation.DISQUALIFIED).values_list("pk", flat=True)
    ) == {two["secret"].pk, two["gp"].pk}
    assert set(ModerationEvent.objects.values_list("username", flat=True)) == {"root"}
    response = client.post(
        CHANGELIST,
        {"action": "restore_selected", "_selected_action": [two["secret"].pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert Submission.objects.get(pk=two["secret"].pk).moderation == Moderation.NONE


def test_rescoring_from_the_list_is_recorded(two, django_capture_on_commit_callbacks):
    """An event for each submission queued: the baseline, not the entry without a zip."""
    client = _client(two["me"])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            CHANGELIST,
            {"action": "rescore_selected", "_selected_action": [two["gp"].pk, two["baseline"].pk]},
            follow=True,
        )
    assert "Queued 1 submission(s) for rescoring." in page_text(response)
    assert len(callbacks) == 1  # the scoring task, sent on commit
    event = ModerationEvent.objects.get()
    assert (event.submission, event.action, event.user, event.at, event.reason) == (
        two["baseline"],
        ModerationAction.RESCORE,
        two["me"],
        AFTER,
        "",
    )


def test_the_events_list_is_read_only_and_filtered(two):
    client = _client(two["me"])
    client.post(
        CHANGELIST,
        {
            "action": "hide_selected",
            "_selected_action": [two["gp"].pk],
            "post": "yes",
            "reason": "Dup.",
        },
    )
    page = client.get(EVENTS)
    assert page.status_code == 200
    text = page_text(page)
    assert "Dup." in text and "organiser" in text and "Gaussian process" in text
    assert f"?challenge={two['theirs'].pk}" not in page.content.decode()
    assert _rows(client.get(f"{EVENTS}?action__exact=hide")) == [ModerationEvent.objects.get().pk]
    assert client.get(reverse("admin:submissions_moderationevent_add")).status_code == 403
    event = ModerationEvent.objects.get()
    change = reverse("admin:submissions_moderationevent_change", args=[event.pk])
    assert client.get(change).status_code == 200
    client.post(change, {"reason": "Edited."})
    event.refresh_from_db()
    assert event.reason == "Dup."
    delete = reverse("admin:submissions_moderationevent_delete", args=[event.pk])
    assert client.get(delete).status_code == 403
