"""Order views: journeys exchanged for other flights are marked as such (from
the `itinerary_exchanged` events that replaced their items), a segment id is unique within
its order (a flight exchanged and exchanged back had its first id again: the later
segment gets a fresh one, with its legs), and the airline-change snapshots name a
segment's state `operationalStatus`, as the order view does (SPEC.md §2.2 keeps
`statusCode` for WAITLISTED)."""

import secrets

from django.db import migrations, models


def _new_ref(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4).upper()}"


def mark_exchanged(apps, schema_editor):
    OrderEvent = apps.get_model("orders", "OrderEvent")
    OrderItem = apps.get_model("orders", "OrderItem")
    Journey = apps.get_model("orders", "Journey")
    for order_id, detail in OrderEvent.objects.filter(kind="itinerary_exchanged").values_list(
        "order_id", "detail"
    ):
        journeys = OrderItem.objects.filter(
            order_id=order_id, ref__in=detail.get("replaced", [])
        ).values("journey_id")
        Journey.objects.filter(pk__in=journeys, is_cancelled=True).update(exchanged=True)


def unique_segment_refs(apps, schema_editor):
    Segment = apps.get_model("orders", "Segment")
    Leg = apps.get_model("orders", "Leg")
    duplicates = (
        Segment.objects.values("order_id", "ref")
        .annotate(n=models.Count("id"))
        .filter(n__gt=1)
        .values_list("order_id", "ref")
    )
    for order_id, ref in list(duplicates):
        later = Segment.objects.filter(order_id=order_id, ref=ref).order_by("pk")[1:]
        for segment in later:
            Segment.objects.filter(pk=segment.pk).update(ref=_new_ref("SEG"))
            for leg in Leg.objects.filter(segment_id=segment.pk):
                Leg.objects.filter(pk=leg.pk).update(ref=_new_ref("LEG"))


def operational_status_in_snapshots(apps, schema_editor):
    AirlineChange = apps.get_model("orders", "AirlineChange")
    for change in AirlineChange.objects.all().only("pk", "added"):
        added = change.added or []
        touched = False
        for journey in added:
            for segment in journey.get("segments", []):
                if "statusCode" in segment:
                    segment["operationalStatus"] = segment.pop("statusCode")
                    touched = True
        if touched:
            AirlineChange.objects.filter(pk=change.pk).update(added=added)


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0015_order_fees"),
    ]

    operations = [
        migrations.AddField(
            model_name="journey",
            name="exchanged",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="Cancelled because it was exchanged for other flights "
                "(AcceptReshopOffer)",
            ),
        ),
        migrations.RunPython(mark_exchanged, migrations.RunPython.noop),
        migrations.RunPython(unique_segment_refs, migrations.RunPython.noop),
        migrations.RunPython(operational_status_in_snapshots, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="segment",
            constraint=models.UniqueConstraint(
                fields=("order", "ref"), name="one_segment_ref_per_order"
            ),
        ),
    ]
