"""console.history: the admin's history of a challenge says what each change replaced."""

from datetime import UTC, datetime

from django.contrib.admin.models import LogEntry
from django.urls import reverse

from challenge_site.console.history import shown
from tests.console.helpers import challenge_form, client_of, two_challenges


def test_values_are_shown_briefly():
    assert shown(datetime(2030, 2, 8, 23, 59, 59, tzinfo=UTC)) == "08 Feb 2030 23:59:59 UTC"
    assert shown(None) == shown("") == "(empty)"
    assert shown(True) == "yes" and shown(5) == "“5”"
    assert shown("x" * 200) == "(200 characters)"
    assert shown(["b", "a"]) == "a, b" and shown([]) == "(none)"


def test_a_changed_deadline_is_recorded_with_its_old_and_new_value(db):
    two = two_challenges()
    mine = two["mine"]
    client = client_of(two["me"])
    url = reverse("admin:challenges_challenge_change", args=[mine.pk])
    form = challenge_form(slug="mine", title="Mine", **{"datasets-TOTAL_FORMS": "0"})
    form["organisers"] = [two["me"].pk]
    client.post(url, form)  # brings every field to the form's values first
    LogEntry.objects.all().delete()
    form |= {"deadline_0": "2030-02-10", "title": "Mine, renamed"}
    response = client.post(url, form)
    assert response.status_code == 302, response.content.decode()
    (entry,) = LogEntry.objects.all()
    message = entry.get_change_message()
    assert "Deadline: 08 Feb 2030 23:59:59 UTC → 10 Feb 2030 23:59:59 UTC" in message
    assert "Title: “Mine” → “Mine, renamed”" in message
    history = client.get(reverse("admin:challenges_challenge_history", args=[mine.pk]))
    assert "08 Feb 2030 23:59:59 UTC → 10 Feb 2030 23:59:59 UTC" in history.content.decode()
