from django.db import migrations, models


def first_version(apps, schema_editor):
    """Start where the old version (the newest schedule load's id) was."""
    ScheduleLoad = apps.get_model("network", "ScheduleLoad")
    NetworkVersion = apps.get_model("network", "NetworkVersion")
    newest = ScheduleLoad.objects.order_by("-id").values_list("id", flat=True).first() or 0
    NetworkVersion.objects.create(pk=1, number=newest)


class Migration(migrations.Migration):
    dependencies = [("network", "0003_schedule_load_flights_and_labels")]

    operations = [
        migrations.CreateModel(
            name="NetworkVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveBigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(first_version, migrations.RunPython.noop),
    ]
