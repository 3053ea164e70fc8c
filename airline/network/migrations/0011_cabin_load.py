from django.db import migrations, models

# The same SQL on PostgreSQL and SQLite (the embedded default). CAST before the division:
# a float percent, not PostgreSQL's slower numeric.
CABIN_LOAD_VIEW = """
CREATE VIEW network_cabinload AS
SELECT leg_id,
       SUM(authorized) AS seats,
       SUM(sold) AS sold,
       CAST(SUM(sold) AS DOUBLE PRECISION) * 100 / NULLIF(SUM(authorized), 0) AS load
FROM network_leginventory
WHERE rank = 0
GROUP BY leg_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("network", "0010_flightleg_leg_cancelled"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="leginventory",
            index=models.Index(
                condition=models.Q(("rank", 0)),
                fields=["leg"],
                include=("sold", "authorized"),
                name="cabin_rows",
            ),
        ),
        migrations.RunSQL(CABIN_LOAD_VIEW, "DROP VIEW network_cabinload"),
        migrations.CreateModel(
            name="CabinLoad",
            fields=[
                (
                    "leg",
                    models.OneToOneField(
                        db_column="leg_id",
                        on_delete=models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="cabin_load",
                        serialize=False,
                        to="network.flightleg",
                    ),
                ),
                ("seats", models.IntegerField()),
                ("sold", models.IntegerField()),
                ("load", models.FloatField(null=True)),
            ],
            options={"db_table": "network_cabinload", "managed": False},
        ),
    ]
