"""An organiser of A posts admin actions and forms carrying B's ids."""

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse

from challenge_site.announcements.models import Announcement, EmailState
from challenge_site.challenges.models import Challenge, Participant
from challenge_site.submissions.models import Moderation
from datasets.models import DatasetFile
from tests.factories import AFTER

from .world import build, client_for


def _post_action(c, model, action, ids, **extra):
    return c.post(
        reverse(f"admin:{model}_changelist"),
        {"action": action, "_selected_action": ids, "post": "yes", "reason": "x", **extra},
    )


@pytest.mark.django_db
def test_actions_with_ids_of_b_change_nothing():
    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=False)
        c = client_for(w["me"])
        theirs = w["theirs"]
        _post_action(c, "challenges_challenge", "publish_results", [theirs.pk])
        _post_action(c, "challenges_challenge", "publish_results", [theirs.pk], select_across="1")
        theirs.refresh_from_db()
        assert not theirs.results_published
        for action in (
            "hide_selected",
            "disqualify_selected",
            "restore_selected",
            "rescore_selected",
        ):
            _post_action(c, "submissions_submission", action, [w["entry"].pk, w["hidden"].pk])
            _post_action(c, "submissions_submission", action, [w["entry"].pk], select_across="1")
        w["entry"].refresh_from_db()
        w["hidden"].refresh_from_db()
        assert w["entry"].moderation == Moderation.NONE
        assert w["hidden"].moderation == Moderation.HIDDEN
        p = Participant.objects.get(challenge=theirs)
        theirs.require_approval = True
        theirs.save()
        _post_action(c, "challenges_participant", "approve_selected", [p.pk])
        p.refresh_from_db()
        assert p.approved_at is None
        _post_action(c, "announcements_announcement", "email_participants", [w["ann"].pk])
        w["ann"].refresh_from_db()
        assert w["ann"].email_state == EmailState.NOT_SENT
        # moderate by URL
        c.post(
            reverse("admin:submissions_submission_moderate", args=[w["hidden"].pk, "restore"]),
            {"post": "yes", "reason": "x"},
        )
        w["hidden"].refresh_from_db()
        assert w["hidden"].moderation == Moderation.HIDDEN


@pytest.mark.django_db
def test_inline_formsets_cannot_adopt_or_delete_rows_of_b():
    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=True)
        c = client_for(w["me"])
        mine, secret = w["mine"], w["secret"]
        # A's challenge page, its dataset inline pointing at B's dataset
        data = {
            "slug": "mine",
            "title": "Mine",
            "description": "",
            "rules": "",
            "start_0": "2030-01-10",
            "start_1": "00:00:00",
            "test_start_0": "2030-02-01",
            "test_start_1": "00:00:00",
            "deadline_0": "2030-02-08",
            "deadline_1": "23:59:59",
            "test_inputs_release": "test_start",
            "test_targets_release": "never",
            "val_daily_limit": "",
            "test_daily_limit": "5",
            "test_total_limit": "",
            "organisers": [w["me"].pk],
            "datasets-TOTAL_FORMS": "1",
            "datasets-INITIAL_FORMS": "1",
            "datasets-MIN_NUM_FORMS": "0",
            "datasets-MAX_NUM_FORMS": "1000",
            "datasets-0-id": secret.pk,
            "datasets-0-challenge": mine.pk,
            "datasets-0-name": "stolen",
            "datasets-0-task": "regression",
            "datasets-0-position": "0",
            "datasets-0-log_base": "e",
            "datasets-0-ranking_loss": "",
            "datasets-0-DELETE": "",
        }
        r = c.post(reverse("admin:challenges_challenge_change", args=[mine.pk]), data)
        secret.refresh_from_db()
        assert secret.challenge_id == w["theirs"].pk and secret.name != "stolen", r.status_code
        # A's dataset page, its file inline deleting B's file
        gaze = w["gaze"]
        bfile = secret.files.first()
        data = {
            "challenge": mine.pk,
            "name": "gaze",
            "task": "regression",
            "description": "",
            "position": "0",
            "log_base": "e",
            "allow_samples": "on",
            "min_quantile_gap": "0",
            "nmse_normaliser": "evaluated",
            "ranking_loss": "",
            "files-TOTAL_FORMS": "1",
            "files-INITIAL_FORMS": "1",
            "files-MIN_NUM_FORMS": "0",
            "files-MAX_NUM_FORMS": "0",
            "files-0-id": bfile.pk,
            "files-0-dataset": gaze.pk,
            "files-0-DELETE": "on",
        }
        c.post(reverse("admin:datasets_dataset_change", args=[gaze.pk]), data)
        assert DatasetFile.objects.filter(pk=bfile.pk).exists()
        # Announcement moved to B / created for B
        a = Announcement.objects.create(challenge=mine, title="t", body="b")
        c.post(
            reverse("admin:announcements_announcement_change", args=[a.pk]),
            {
                "challenge": w["theirs"].pk,
                "title": "t",
                "body": "b",
                "published_at_0": "",
                "published_at_1": "",
            },
        )
        a.refresh_from_db()
        assert a.challenge_id == mine.pk
        c.post(
            reverse("admin:announcements_announcement_add"),
            {
                "challenge": w["theirs"].pk,
                "title": "inject",
                "body": "b",
                "published_at_0": "",
                "published_at_1": "",
            },
        )
        assert not Announcement.objects.filter(title="inject").exists()


@pytest.mark.django_db
def test_organiser_cannot_become_superuser_or_join_b():
    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=True)
        me = w["me"]
        group = Group.objects.create(name="b-team")
        w["theirs"].organiser_groups.add(group)
        c = client_for(me)
        c.post(
            reverse("admin:auth_user_change", args=[me.pk]),
            {
                "username": "me",
                "is_superuser": "on",
                "is_staff": "on",
                "is_active": "on",
                "groups": [group.pk],
            },
        )
        c.post(reverse("admin:auth_group_change", args=[group.pk]), {"name": "b-team"})
        me.refresh_from_db()
        assert not me.is_superuser and not me.groups.exists()
        assert not Challenge.objects.filter(pk=w["theirs"].pk, organisers=me).exists()
