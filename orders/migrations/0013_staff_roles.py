"""Staff roles as Django groups (docs/operators/back-office.md): what each kind of
operations staff may see and do in the admin. Frozen here as migrations are; a later
app that belongs to a role (webhooks to Partner management) adds its own permissions to
the group in its own migration. Idempotent: it adds what is missing, and removes nothing
an administrator granted since."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEW, EDIT = ("view",), ("view", "add", "change")

ROLES = {
    # Partners, their sellers and API keys: issue and revoke keys, set their rights.
    "Partner management": {
        "sellers": {"partner": EDIT, "seller": EDIT, "apikey": EDIT},
    },
    # Bookings (read; cancel an unpaid hold), the schedule and inventory (read), and the
    # fleet's seat configurations and booking classes (edit).
    "Operations": {
        "orders": {
            "order": ("view", "cancel_hold"),
            "airlinecredit": VIEW,
            "refund": VIEW,
            "paymentintent": VIEW,
        },
        "network": {
            "station": VIEW,
            "aircrafttype": EDIT,
            "seatconfiguration": EDIT,
            "cabinlayout": (*EDIT, "delete"),
            "bookingclass": ("view", "change"),
            "scheduleload": VIEW,
            "scheduledleg": VIEW,
            "flightleg": VIEW,
            "leginventory": VIEW,
        },
    },
}
# Support reads everything the back office shows, and changes nothing.
SUPPORT_READS = ("sellers", "network", "fares", "orders")


def add_roles(apps, schema_editor):
    # Permissions are made after migrations (post_migrate); a fresh database has none
    # yet, so make them now, from the models as of this migration.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")

    for role, grants in ROLES.items():
        group, _ = Group.objects.get_or_create(name=role)
        for app_label, models in grants.items():
            for model, actions in models.items():
                group.permissions.add(
                    *Permission.objects.filter(
                        content_type__app_label=app_label,
                        content_type__model=model,
                        # "view" is view_<model>; "cancel_hold" is a permission's own name
                        codename__in=[a if "_" in a else f"{a}_{model}" for a in actions],
                    )
                )
    support, _ = Group.objects.get_or_create(name="Support")
    support.permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=SUPPORT_READS, codename__startswith="view_"
        )
    )


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=[*ROLES, "Support"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("fares", "0005_bundle_name_change_fee"),
        ("network", "0003_schedule_load_flights_and_labels"),
        ("sellers", "0001_initial"),
        ("orders", "0012_cancel_hold_permission"),
    ]

    operations = [migrations.RunPython(add_roles, remove_roles)]
