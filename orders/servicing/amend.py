"""Correcting who travels and how to reach them (SPEC.md §4.10 UpdatePassenger,
UpdateContact and the top-level `passengers` of change order; §4.12 NameChange;
DESIGN.md §8 passenger rules, §11 UpdateContact).

A passenger's details are re-checked as create order checks them (names, the type's age
on the first travel date, e-mail and phone). Changing a ticketed passenger's name reissues
their ticket and costs the bundle's name-change fee per passenger (`Bundle.name_change_fee`,
the highest of the order's live flight items); reshop NameChange quotes that fee. An
unticketed hold's names change free of charge. Other details are free to change.
"""

from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from airline.api.errors import ApiError, Err
from airline.fares.money import ZERO, money_wire
from offers.ancillaries import bundle_terms
from orders.core import events
from orders.models import Contact, Order, OrderStatus, Passenger
from orders.money.fees import NAME_CHANGE, fee_charge
from orders.money.tickets import tickets_reissue
from orders.requests.checks import AGE_LIMITS, _check_name, age_on, check_email, check_phone
from orders.requests.inputs import PassengerPatch, UpdateContact, UpdatePassenger
from orders.servicing.plan import Plan
from orders.servicing.reshop_request import ReshopRequest

LIVE = "CONFIRMED"  # an order item's status while it flies


def name_change_fee(order: Order) -> Decimal:
    """What changing one passenger's name costs on this order now: nothing before
    tickets are issued, else the highest name-change fee of its live bundles."""
    if order.status != OrderStatus.CONFIRMED:
        return ZERO
    fees = [bundle_terms(i.bundle).name_change_fee for i in order.items.all() if i.status == LIVE]
    return max(fees, default=ZERO)


def _passenger(order: Order, ref: str | None, path: str) -> Passenger:
    """The order's passenger by PAX- id or by the client's own passengerId."""
    for p in order.passengers.all():
        if ref in (p.ref, p.offer_pax_id):
            return p
    raise ApiError(Err.VALIDATION, f"Passenger {ref} is not on this order", path=path)


def _is_rename(p: Passenger, given_name: str, surname: str) -> bool:
    return (given_name.upper(), surname.upper()) != (p.given_name.upper(), p.surname.upper())


def _first_travel_date(order: Order) -> date | None:
    live = {i.journey_id for i in order.items.all() if i.status == LIVE}
    days = [j.departure_date for j in order.journeys.all() if j.pk in live and j.departure_date]
    return min(days, default=None)


# --- change order: UpdatePassenger and top-level passengers ----------------------------


def check_update_passenger(plan: Plan, entries: Sequence[UpdatePassenger]) -> Any:
    """Each entry's patch checked against its passenger; the name-change fee of each
    rename goes into the plan (kept by the airline, due now on a ticketed order)."""
    order = plan.order
    updates: list[tuple[Passenger, dict[str, Any], bool]] = []
    seen: set[int] = set()
    fee = name_change_fee(order)
    for entry in entries:
        # A top-level `passengers` entry is its own patch: its errors point there.
        base = "passengers" if entry.top_level else "changes"
        passenger = _passenger(order, entry.passenger_id, f"{base}.passengerId")
        if passenger.pk in seen:
            raise ApiError(
                Err.VALIDATION,
                f"Passenger {passenger.ref} is changed twice in one request",
                path=f"{base}.passengerId",
            )
        seen.add(passenger.pk)
        where = base if entry.top_level else "changes.patch"
        fields, renamed = _patch_fields(order, passenger, entry.patch, where)
        if renamed:
            plan.retained += fee
        updates.append((passenger, fields, renamed))

    def do_update_passengers(plan: Plan, locked: Order) -> None:
        for passenger, fields, renamed in updates:
            passenger_update(plan, locked, passenger, fields, renamed=renamed, fee=fee)

    return do_update_passengers


def _patch_fields(
    order: Order, p: Passenger, patch: PassengerPatch, where: str
) -> tuple[dict[str, Any], bool]:
    """The Passenger fields a patch sets, checked; and whether it renames."""
    if patch.is_empty():
        raise ApiError(Err.VALIDATION, "The passenger patch is empty", path=where)
    fields: dict[str, Any] = {}
    renamed = False
    if patch.name is not None:
        if patch.name.given_name is None and patch.name.surname is None:
            raise ApiError(Err.VALIDATION, "The name patch is empty", path=f"{where}.name")
        given_name = (patch.name.given_name or p.given_name).strip()
        surname = (patch.name.surname or p.surname).strip()
        _check_name(given_name, f"{where}.name.givenName")
        _check_name(surname, f"{where}.name.surname")
        renamed = _is_rename(p, given_name, surname)
        fields.update(given_name=given_name, surname=surname)
    if patch.date_of_birth is not None:
        _check_age(order, p, patch.date_of_birth, f"{where}.dateOfBirth")
        fields["date_of_birth"] = patch.date_of_birth
    for member in ("gender", "nationality", "residence_country"):
        if getattr(patch, member) is not None:
            fields[member] = getattr(patch, member)
    if patch.loyalty_program is not None:
        fields["loyalty_program"] = patch.loyalty_program.wire()
    if patch.travel_documents is not None:
        fields["travel_documents"] = [d.wire() for d in patch.travel_documents]
    if patch.email is not None or patch.phone is not None:
        contacts = dict(p.contacts or {})
        if patch.email:
            contacts["emailAddress"] = check_email(
                patch.email, path=f"{where}.contacts.emailAddress"
            )
        if patch.phone:
            contacts["phoneNumber"] = check_phone(patch.phone, path=f"{where}.contacts.phoneNumber")
        fields["contacts"] = contacts or None
    return fields, renamed


def _check_age(order: Order, p: Passenger, born: date, path: str) -> None:
    """A date of birth must fit the passenger's type on the first travel date
    (DESIGN.md §8): the type itself never changes after booking."""
    day = _first_travel_date(order)
    if day is None:
        return
    if born > day:
        raise ApiError(Err.VALIDATION, "dateOfBirth is after the first travel date", path=path)
    low, high = AGE_LIMITS[p.ptc]
    age = age_on(born, day)
    if not low <= age <= high:
        raise ApiError(
            Err.VALIDATION,
            f"{p.ref} would be {age} on {day}; type {p.ptc} is for ages {low} to {high}",
            path=path,
        )


def passenger_update(
    plan: Plan,
    order: Order,
    p: Passenger,
    fields: Mapping[str, Any],
    *,
    renamed: bool,
    fee: Decimal,
) -> None:
    """Under the order's lock: the passenger's row, the order's lead name (OrderList
    shows it), and on a ticketed order a renamed passenger's ticket reissued."""
    Passenger.objects.filter(pk=p.pk).update(**fields)
    lead = next((x for x in order.passengers.all() if x.ptc == "ADT"), None)
    if renamed and lead is not None and lead.pk == p.pk:
        Order.objects.filter(pk=order.pk).update(
            lead_given_name=fields["given_name"], lead_surname=fields["surname"]
        )
    charged = ZERO
    if renamed and order.status == OrderStatus.CONFIRMED:
        # The ticket carries the name: the old one's open coupons are exchanged for a new
        # ticket in the new name (its flown ones stay USED).
        p.refresh_from_db()
        tickets_reissue(order, now=plan.now, passengers=[p])
        charged = fee
        fee_charge(order, NAME_CHANGE, fee, now=plan.now, passenger=p)
    events.passenger_updated(
        order, actor=plan.actor, now=plan.now, passenger=p.ref, fields=sorted(fields), fee=charged
    )


# --- change order: UpdateContact -------------------------------------------------------


def check_update_contact(plan: Plan, entries: Sequence[UpdateContact]) -> Any:
    """The new primary contact, checked as create order checks it; its name required
    (DESIGN.md §11 UpdateContact)."""
    if len(entries) != 1:
        raise ApiError(Err.VALIDATION, "Send one UpdateContact per request", path="changes")
    contact = entries[0].contact
    if not contact.given_name or not contact.surname:
        raise ApiError(
            Err.VALIDATION,
            "UpdateContact needs the contact's givenName and surname",
            path="changes.contact.name",
        )
    _check_name(contact.given_name, "changes.contact.name.givenName")
    _check_name(contact.surname, "changes.contact.name.surname")
    fields = {
        "email": check_email(contact.email, path="changes.contact.emailAddress"),
        "phone": check_phone(contact.phone, path="changes.contact.phoneNumber"),
        "given_name": contact.given_name.strip(),
        "surname": contact.surname.strip(),
        "postal_address": contact.postal_address.wire() if contact.postal_address else None,
    }

    def do_update_contact(plan: Plan, locked: Order) -> None:
        updated = Contact.objects.filter(order=locked, type_code="P").update(**fields)
        if not updated:  # an imported booking may have come without one
            Contact.objects.create(order=locked, ref="CTC-1", type_code="P", **fields)
        events.contact_updated(locked, actor=plan.actor, now=plan.now)

    return do_update_contact


# --- reshop: NameChange ----------------------------------------------------------------


def reshop_name_change(request: ReshopRequest) -> dict[str, Any]:
    """`nameChange`: the fee of renaming one passenger (SPEC.md §2.7); commit with
    UpdatePassenger."""
    instruction, order = request.instruction, request.order
    surname = instruction.get("surname")
    for member in ("paxRefId", "surname"):
        if not instruction.get(member):
            raise ApiError(
                Err.VALIDATION, f"NameChange needs {member}", path=f"instruction.{member}"
            )
    passenger = _passenger(order, instruction["paxRefId"], "instruction.paxRefId")
    given_name = (instruction.get("givenName") or passenger.given_name).strip()
    _check_name(given_name, "instruction.givenName")
    _check_name(surname, "instruction.surname")
    fee = name_change_fee(order) if _is_rename(passenger, given_name, surname.strip()) else ZERO
    return {"nameChange": {"paxRefId": passenger.ref, "fee": money_wire(fee)}}


# Registered when the app is ready (orders.apps): change order and reshop look them up.
