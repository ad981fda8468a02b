from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("announcements", "0002_copy_deliveries_to_mailing"),
    ]

    operations = [
        migrations.DeleteModel(name="Delivery"),
    ]
