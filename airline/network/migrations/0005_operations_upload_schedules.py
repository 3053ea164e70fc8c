"""Operations loads schedules (docs/operators/back-office.md): the role gets
`network.add_scheduleload`, the permission of the admin's schedule upload. Adds only."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def grant(apps, schema_editor):
    # Permissions are made after migrations (post_migrate): make this app's now.
    app_config = apps.get_app_config("network")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Operations")
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="network", codename="add_scheduleload")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0013_staff_roles"),
        ("network", "0004_network_version"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
