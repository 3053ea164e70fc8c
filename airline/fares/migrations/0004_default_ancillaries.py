"""The default ancillary products of DESIGN.md §7 (data; edit them in the admin)."""

from django.db import migrations

PRODUCTS = [
    # code, name, category, ssr, rfisc, scope, price, taxable, requires, zone, pieces
    ("CB1", "First checked bag", "BAGGAGE", "XBAG", "0CC", "journey", "35.00", False, None, "", 1),
    ("CB2", "Second checked bag", "BAGGAGE", "XBAG", "0CD", "journey", "45.00", False, "CB1", "", 2),
    ("CB3", "Third checked bag", "BAGGAGE", "XBAG", "0CE", "journey", "150.00", False, "CB2", "", 3),
    ("COB", "Carry-on bag", "BAGGAGE", "CBAG", "0GO", "journey", "30.00", False, None, "", 0),
    ("PETC", "Pet in cabin", "PETS", "PETC", "0BS", "journey", "125.00", False, None, "", 0),
    ("PRIO", "Priority boarding", "PRIORITY", "PRIO", "0BX", "segment", "15.00", True, None, "", 0),
    ("STST", "Standard seat", "SEAT", "RQST", "0B5", "leg", "12.00", True, None, "standard", 0),
    ("STXL", "Extra legroom seat", "SEAT", "RQST", "0B5", "leg", "35.00", True, None, "extra_legroom", 0),
    ("STEX", "Exit row seat", "SEAT", "RQST", "0B5", "leg", "30.00", True, None, "exit_row", 0),
    ("STPR", "Premium cabin seat", "SEAT", "RQST", "0B5", "leg", "60.00", True, None, "premium", 0),
]


def create(apps, schema_editor):
    Ancillary = apps.get_model("fares", "Ancillary")
    made = {}
    for rank, (code, name, category, ssr, rfisc, scope, price, taxable, requires, zone, pieces) in (
        enumerate(PRODUCTS)
    ):
        made[code], _ = Ancillary.objects.update_or_create(
            code=code,
            defaults={
                "name": name,
                "category": category,
                "ssr_code": ssr,
                "fee_code": rfisc,
                "scope": scope,
                "price": price,
                "taxable": taxable,
                "requires": made.get(requires),
                "seat_zone": zone,
                "pieces": pieces,
                "rank": rank,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("fares", "0003_ancillary")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
