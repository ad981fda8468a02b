"""Hidden and disqualified entries stay off every public list (regression guard)."""

import json

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from challenge_site.submissions import moderation
from challenge_site.submissions.models import Submission
from tests.factories import AFTER, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.mark.django_db
def test_moderated_entries_are_listed_nowhere():
    with time_machine.travel(AFTER, tick=False):
        challenge = make_challenge(results_published=True)
        gaze = make_dataset(challenge, "gaze")
        org = make_user("org", organiser_of=challenge)
        ann = make_user("ann")
        add_entry(gaze, user=ann, method="Fine-entry", val=reg(0.9, 0.9), test=reg(0.9, 0.9))
        hidden = add_entry(
            gaze, user=ann, method="Hidden-entry", val=reg(0.1, 0.1), test=reg(0.1, 0.1)
        )
        dq = add_entry(gaze, user=ann, method="DQ-entry", val=reg(0.2, 0.2), test=reg(0.2, 0.2))
        moderation.hide(
            submissions=Submission.objects.filter(pk=hidden.pk),
            reason="secret-why",
            user=org,
            now=AFTER,
        )
        moderation.disqualify(
            submissions=Submission.objects.filter(pk=dq.pk),
            reason="public-why",
            user=org,
            now=AFTER,
        )
        c = Client()
        for split in ("val", "test"):
            for view in ("all", "best"):
                q = f"?split={split}&view={view}"
                for name in ("leaderboard", "leaderboard_csv", "api_leaderboard"):
                    r = c.get(reverse(name, args=["demo", "gaze"]) + q)
                    body = b"".join(r.streaming_content) if r.streaming else r.content
                    text = body.decode()
                    assert "Fine-entry" in text, (name, q)
                    assert "Hidden-entry" not in text and "DQ-entry" not in text, (name, q)
        results = c.get(reverse("challenge_results", args=["demo"])).content.decode()
        assert "Fine-entry" in results and "Hidden-entry" not in results
        assert "DQ-entry" not in results
        assert c.get(reverse("submission_detail", args=[hidden.pk])).status_code == 404
        assert c.get(f"/api/v1/submissions/{hidden.pk}/").status_code == 404
        page = c.get(reverse("submission_detail", args=[dq.pk])).content.decode()
        assert "public-why" in page
        assert "secret-why" not in json.dumps(c.get(f"/api/v1/submissions/{dq.pk}/").json())
