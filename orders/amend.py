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
from orders import events
from orders.changes import ACTIONS, TOP_LEVEL_PASSENGERS, Action, Entry, Plan
from orders.checks import AGE_LIMITS, _check_name, age_on, check_email, check_phone
from orders.models import Contact, Coupon, Order, OrderStatus, Passenger
from orders.reshop import INSTRUCTIONS, ReshopRequest
from orders.tickets import tickets_issue

LIVE = "CONFIRMED"  # an order item's status while it flies

# Patch member -> Passenger field, for the members stored as they come.
PLAIN_FIELDS = {
    "gender": "gender",
    "nationality": "nationality",
    "residenceCountry": "residence_country",
    "loyaltyProgram": "loyalty_program",
}


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


def check_update_passenger(plan: Plan, entries: Sequence[Entry]) -> Any:
    """Each entry's patch checked against its passenger; the name-change fee of each
    rename goes into the plan (kept by the airline, due now on a ticketed order)."""
    order = plan.order
    updates: list[tuple[Passenger, dict[str, Any], bool]] = []
    seen: set[int] = set()
    fee = name_change_fee(order)
    for entry in entries:
        top_level = entry.get("via") == TOP_LEVEL_PASSENGERS
        base = TOP_LEVEL_PASSENGERS if top_level else "changes"
        passenger = _passenger(order, entry.get("passengerId"), f"{base}.passengerId")
        if passenger.pk in seen:
            raise ApiError(
                Err.VALIDATION,
                f"Passenger {passenger.ref} is changed twice in one request",
                path=f"{base}.passengerId",
            )
        seen.add(passenger.pk)
        where = base if top_level else "changes.patch"
        fields, renamed = _patch_fields(order, passenger, entry.get("patch") or {}, where)
        if renamed:
            plan.retained += fee
        updates.append((passenger, fields, renamed))

    def do_update_passengers(plan: Plan, locked: Order) -> None:
        for passenger, fields, renamed in updates:
            passenger_update(plan, locked, passenger, fields, renamed=renamed, fee=fee)

    return do_update_passengers


def _patch_fields(
    order: Order, p: Passenger, patch: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], bool]:
    """The Passenger fields a patch sets, checked; and whether it renames."""
    if not patch:
        raise ApiError(Err.VALIDATION, "The passenger patch is empty", path=where)
    fields: dict[str, Any] = {}
    renamed = False
    if "name" in patch:
        name = patch["name"] or {}
        if not name:
            raise ApiError(Err.VALIDATION, "The name patch is empty", path=f"{where}.name")
        given_name = (name.get("givenName") or p.given_name).strip()
        surname = (name.get("surname") or p.surname).strip()
        _check_name(given_name, f"{where}.name.givenName")
        _check_name(surname, f"{where}.name.surname")
        renamed = _is_rename(p, given_name, surname)
        fields.update(given_name=given_name, surname=surname)
    if "dateOfBirth" in patch:
        born = patch["dateOfBirth"]
        _check_age(order, p, born, f"{where}.dateOfBirth")
        fields["date_of_birth"] = born
    for member, column in PLAIN_FIELDS.items():
        if member in patch:
            fields[column] = patch[member] if patch[member] is not None else ""
    if "travelDocuments" in patch:
        fields["travel_documents"] = [
            {k: (v.isoformat() if isinstance(v, date) else v) for k, v in doc.items()}
            for doc in patch["travelDocuments"] or []
        ]
    if "contacts" in patch:
        contacts = dict(p.contacts or {})
        for member, check in (("emailAddress", check_email), ("phoneNumber", check_phone)):
            value = (patch["contacts"] or {}).get(member)
            if value:
                contacts[member] = check(value, path=f"{where}.contacts.{member}")
        fields["contacts"] = contacts or None
    if "loyalty_program" in fields and fields["loyalty_program"] == "":
        fields["loyalty_program"] = None
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
        # ticket in the new name.
        Coupon.objects.filter(ticket__passenger=p, status=Coupon.Status.OPEN).update(
            status=Coupon.Status.EXCHANGED
        )
        p.refresh_from_db()
        tickets_issue(order, now=plan.now, passengers=[p])
        charged = fee
    events.passenger_updated(
        order, actor=plan.actor, now=plan.now, passenger=p.ref, fields=sorted(fields), fee=charged
    )


# --- change order: UpdateContact -------------------------------------------------------


def check_update_contact(plan: Plan, entries: Sequence[Entry]) -> Any:
    """The new primary contact, checked as create order checks it; its name required
    (DESIGN.md §11 UpdateContact)."""
    if len(entries) != 1:
        raise ApiError(Err.VALIDATION, "Send one UpdateContact per request", path="changes")
    contact = entries[0].get("contact")
    if not contact:
        raise ApiError(Err.VALIDATION, "UpdateContact needs a contact", path="changes.contact")
    name = contact.get("name") or {}
    if not name.get("givenName") or not name.get("surname"):
        raise ApiError(
            Err.VALIDATION,
            "UpdateContact needs the contact's givenName and surname",
            path="changes.contact.name",
        )
    _check_name(name["givenName"], "changes.contact.name.givenName")
    _check_name(name["surname"], "changes.contact.name.surname")
    fields = {
        "email": check_email(contact["emailAddress"], path="changes.contact.emailAddress"),
        "phone": check_phone(contact.get("phoneNumber"), path="changes.contact.phoneNumber"),
        "given_name": name["givenName"].strip(),
        "surname": name["surname"].strip(),
        "postal_address": contact.get("postalAddress"),
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
ACTIONS["UpdatePassenger"] = Action(check_update_passenger)
ACTIONS["UpdateContact"] = Action(check_update_contact)
INSTRUCTIONS["NameChange"] = reshop_name_change
