"""The admin's history of a challenge, with the values a change replaced: "Deadline:
8 Feb 2030, 23:59 UTC → 10 Feb 2030, 23:59 UTC" rather than Django's "Changed Deadline."

Django keeps a change as JSON that names the changed fields only; a message that is not
JSON is shown as it is (LogEntry.get_change_message), so the form's fields are written
out here with their old and new values, and the inline rows (datasets) as Django says them.
"""

import datetime
import json

from django.contrib.admin.models import LogEntry
from django.db.models import Model
from django.db.models.query import QuerySet

from challenge_site.challenges.models import format_utc

# A longer value (a description, the rules) is shown by its length, not its text.
SHOWN_CHARACTERS = 80
# Form fields that hold no value of the challenge (a confirmation box).
SKIPPED = {"confirm_new_organisers", "confirm_publication_time"}


def shown(value) -> str:
    """A field's value as the history shows it."""
    if value is None or value == "":
        return "(empty)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime.datetime):
        return format_utc(value)
    if isinstance(value, QuerySet | list | tuple | set):
        names = sorted(str(item) for item in value)
        return ", ".join(names) if names else "(none)"
    if isinstance(value, Model):
        return str(value)
    text = str(value)
    if len(text) > SHOWN_CHARACTERS or "\n" in text:
        return f"({len(text):,} characters)"
    return f"“{text}”"


def change_message(form, default: list) -> str | list:
    """The history line of a saved change form: each changed field of ``form`` with its
    old and new value, then what ``default`` (Django's JSON message) says of the inline
    rows. ``default`` as it is for an addition (nothing was replaced)."""
    if not form.changed_data or not form.instance.pk:
        return default
    parts = []
    for name in form.changed_data:
        if name in SKIPPED:
            continue
        field = form.fields[name]
        old = form.initial.get(name)
        if isinstance(old, list) and hasattr(field, "queryset"):
            old = field.queryset.model.objects.filter(pk__in=[getattr(o, "pk", o) for o in old])
        parts.append(f"{field.label}: {shown(old)} → {shown(form.cleaned_data.get(name))}")
    rest = [entry for entry in default if "changed" not in entry or "object" in entry["changed"]]
    text = "; ".join(parts) + "."
    if rest:
        text += " " + LogEntry(change_message=json.dumps(rest)).get_change_message()
    return text
