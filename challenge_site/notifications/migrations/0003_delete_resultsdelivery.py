from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0002_copy_results_deliveries_to_mailing"),
    ]

    operations = [
        migrations.DeleteModel(name="ResultsDelivery"),
    ]
