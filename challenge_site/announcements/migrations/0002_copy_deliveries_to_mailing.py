"""The announcements' Delivery rows move to the shared outbox (mailing.Delivery, kind
"announcement", mailing_id = the announcement's id); 0003 then drops the old table."""

from django.db import migrations

KIND = "announcement"  # announcements.services.KIND, written out: a migration stays as run
FIELDS = ("user_id", "email", "status", "claimed_at", "sent_at", "error")
CHUNK = 2000


def copy(rows, make, model) -> None:
    """Write ``make(row)`` for each row, CHUNK rows per INSERT (a site may hold many)."""
    batch = []
    for row in rows.iterator(chunk_size=CHUNK):
        batch.append(make(row))
        if len(batch) == CHUNK:
            model.objects.bulk_create(batch)
            batch = []
    model.objects.bulk_create(batch)


def forwards(apps, schema_editor):
    Old = apps.get_model("announcements", "Delivery")
    New = apps.get_model("mailing", "Delivery")
    copy(
        Old.objects.order_by("id").values("announcement_id", *FIELDS),
        lambda row: New(kind=KIND, mailing_id=row.pop("announcement_id"), **row),
        New,
    )


def backwards(apps, schema_editor):
    Announcement = apps.get_model("announcements", "Announcement")
    Old = apps.get_model("announcements", "Delivery")
    New = apps.get_model("mailing", "Delivery")
    ours = New.objects.filter(kind=KIND)
    copy(
        ours.filter(mailing_id__in=Announcement.objects.values("id"))
        .order_by("id")
        .values("mailing_id", *FIELDS),
        lambda row: Old(announcement_id=row.pop("mailing_id"), **row),
        Old,
    )
    ours.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("announcements", "0001_initial"),
        ("mailing", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
