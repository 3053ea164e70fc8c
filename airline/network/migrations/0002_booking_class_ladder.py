"""The default nested booking-class ladder per cabin (data; edit it in the admin).

Rank 0 may sell the whole cabin; each lower class at most the given share of it."""

from django.db import migrations

LADDER = {
    "F": [("F", 100), ("A", 50)],
    "C": [("J", 100), ("C", 70), ("D", 40)],
    "W": [("W", 100), ("E", 50)],
    "Y": [("Y", 100), ("B", 90), ("M", 75), ("H", 60), ("K", 40), ("L", 20)],
}


def add_ladder(apps, schema_editor):
    BookingClass = apps.get_model("network", "BookingClass")
    BookingClass.objects.bulk_create(
        BookingClass(cabin=cabin, rbd=rbd, rank=rank, authorized_percent=percent)
        for cabin, classes in LADDER.items()
        for rank, (rbd, percent) in enumerate(classes)
    )


def remove_ladder(apps, schema_editor):
    apps.get_model("network", "BookingClass").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("network", "0001_initial")]
    operations = [migrations.RunPython(add_ladder, remove_ladder)]
