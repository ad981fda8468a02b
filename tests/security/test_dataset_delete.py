"""Deleting a dataset of an open challenge is for superusers only (DatasetAdmin: organisers
only while the challenge is a draft, "nobody has its data yet"). The challenge page's
dataset inline lets any organiser do it anyway, with every submission and score."""

import pytest
import time_machine
from django.urls import reverse

from challenge_site.submissions.models import Score, Submission
from datasets.models import Dataset
from tests.factories import AFTER, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg

from .world import client_for


def _challenge_form(challenge, dataset, **extra):
    return {
        "slug": challenge.slug,
        "title": challenge.title,
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
        "datasets-TOTAL_FORMS": "1",
        "datasets-INITIAL_FORMS": "1",
        "datasets-MIN_NUM_FORMS": "0",
        "datasets-MAX_NUM_FORMS": "1000",
        "datasets-0-id": dataset.pk,
        "datasets-0-challenge": challenge.pk,
        "datasets-0-name": dataset.name,
        "datasets-0-task": dataset.task,
        "datasets-0-position": "0",
        "datasets-0-log_base": "e",
        "datasets-0-ranking_loss": "",
        **extra,
    }


@pytest.mark.django_db
def test_organiser_cannot_delete_a_dataset_of_an_open_challenge_through_the_inline():
    with time_machine.travel(AFTER, tick=False):
        challenge = make_challenge()  # open
        gaze = make_dataset(challenge, "gaze")
        add_entry(gaze, user=make_user("ann"), val=reg(0.5, 0.4), test=reg(0.25, 0.1))
        organiser = make_user("organiser", organiser_of=challenge)
        client = client_for(organiser)
        # the dataset's own page refuses (draft-only rule) ...
        assert (
            client.get(reverse("admin:datasets_dataset_delete", args=[gaze.pk])).status_code == 403
        )
        # ... but the challenge page's inline "Delete" box is offered and obeyed
        client.post(
            reverse("admin:challenges_challenge_change", args=[challenge.pk]),
            _challenge_form(challenge, gaze, **{"datasets-0-DELETE": "on"}),
        )
        assert Dataset.objects.filter(pk=gaze.pk).exists(), "dataset deleted by an organiser"
        assert Submission.objects.filter(dataset=gaze).exists()
        assert Score.objects.filter(dataset=gaze).exists()
