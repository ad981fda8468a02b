"""The results e-mail's ResultsDelivery rows move to the shared outbox (mailing.Delivery,
kind "results", mailing_id = the ResultsMailing's id); 0003 then drops the old table."""

from django.db import migrations

KIND = "results"  # notifications.results.KIND, written out: a migration stays as run
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
    Old = apps.get_model("notifications", "ResultsDelivery")
    New = apps.get_model("mailing", "Delivery")
    copy(
        Old.objects.order_by("id").values("mailing_id", *FIELDS),
        lambda row: New(kind=KIND, **row),
        New,
    )


def backwards(apps, schema_editor):
    ResultsMailing = apps.get_model("notifications", "ResultsMailing")
    Old = apps.get_model("notifications", "ResultsDelivery")
    New = apps.get_model("mailing", "Delivery")
    ours = New.objects.filter(kind=KIND)
    copy(
        ours.filter(mailing_id__in=ResultsMailing.objects.values("id"))
        .order_by("id")
        .values("mailing_id", *FIELDS),
        lambda row: Old(**row),
        Old,
    )
    ours.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("mailing", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
