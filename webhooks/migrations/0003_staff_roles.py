"""What the staff roles (orders/migrations/0013_staff_roles.py, docs/operators/back-office.md)
may do with webhooks: Partner management registers, disables and deletes endpoints;
Operations reads them and resends failed deliveries; Support reads. Adds only."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = {
    "Partner management": [
        "view_webhookendpoint",
        "add_webhookendpoint",
        "change_webhookendpoint",
        "delete_webhookendpoint",
        "view_webhookdelivery",
        "resend_webhookdelivery",
    ],
    "Operations": ["view_webhookendpoint", "view_webhookdelivery", "resend_webhookdelivery"],
    "Support": ["view_webhookendpoint", "view_webhookdelivery"],
}


def grant(apps, schema_editor):
    # Permissions are made after migrations (post_migrate): make this app's now.
    app_config = apps.get_app_config("webhooks")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, codenames in ROLES.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label="webhooks", codename__in=codenames)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0013_staff_roles"),
        ("webhooks", "0002_resend_permission"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
