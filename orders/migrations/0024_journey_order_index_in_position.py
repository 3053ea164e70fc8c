"""A journey's order has no index of its own: journey_by_order_position, which leads
with the order, serves every lookup by order, and OrderList's journey is found in it
without a sort (orders.models.itinerary.Journey).

Only the index is dropped: the foreign key stays as it is (AlterField alone would drop
the constraint and add it again, checking every journey under a lock that holds writes
to both tables). DROP INDEX takes a brief exclusive lock on the journeys; an operator of
a big, busy table may drop it first without one, `DROP INDEX CONCURRENTLY IF EXISTS
orders_journey_order_id_aba34081;`, and this migration then finds nothing to drop.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "orders_journey_order_id_aba34081"  # Django's name for it, the same on SQLite


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0023_books_audit"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="journey",
                    name="order",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="journeys",
                        to="orders.order",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {INDEX}",
                    reverse_sql=f"CREATE INDEX {INDEX} ON orders_journey (order_id)",
                ),
            ],
        ),
    ]
