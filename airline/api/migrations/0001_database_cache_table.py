"""Create the database cache table when the database cache is configured (no REDIS_URL),
so that `migrate` alone prepares the embedded default."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = []
    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
