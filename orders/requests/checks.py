"""The rules a booking request must pass before anything is written (SPEC.md §2.5.1,
§4.7; DESIGN.md §8): passengers, names, ages, infants, contact details.

`check_*` functions validate and return clean values, or raise the documented error with
the offending field's path; they never touch the database.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

import phonenumbers
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from airline.api.errors import ApiError, Err, ErrorCollector
from offers.passengers import Pax, check_infant_carriers, check_party
from orders.reading.selectors import OrderSearch
from orders.requests.inputs import ContactData, PassengerData, PaymentData
from sellers.authentication import Principal

# Letters of any script, with the spaces, hyphens, apostrophes and periods real names
# carry ("O'Neil", "Smith-Jones", "St. John").
NAME = re.compile(r"^[^\W\d_](?:[^\W\d_]|[ '\-.])*$")
AGE_LIMITS = {"INF": (0, 1), "CHD": (2, 11), "ADT": (12, 130)}  # DESIGN.md §8, inclusive


@dataclass(frozen=True)
class PassengerIn:
    """A passenger who passed check_passengers, as the order stores them."""

    pax_id: str
    ptc: str
    given_name: str
    surname: str
    date_of_birth: date | None = None
    gender: str = ""
    nationality: str = ""
    residence_country: str = ""
    loyalty_program: dict[str, Any] | None = None
    travel_documents: list[dict[str, Any]] = field(default_factory=list)
    contacts: dict[str, str] | None = None
    infant_pax_id: str = ""


@dataclass(frozen=True)
class ContactIn:
    """The booking contact after check_contact: E.164 phone, the name filled in."""

    email: str
    phone: str
    given_name: str
    surname: str
    postal_address: dict[str, Any] | None = None


def check_passengers(
    passengers: Sequence[PassengerData], *, first_travel_date: date
) -> list[PassengerIn]:
    """Passengers as a booking needs them: the party rules of search (ids unique, an
    adult, infants not above adults), valid names, dates of birth that fit the passenger
    type on the first travel date, each infant carried by exactly one adult. Every
    passenger's field errors are reported together (one error, `errors` holding each);
    the party's shape is checked first, as the rest reads by it."""
    check_party([Pax(p.passenger_id, p.ptc) for p in passengers], id_field="passengerId")
    errors = ErrorCollector()
    checked = [_check_passenger(p, first_travel_date, errors) for p in passengers]
    errors.raise_any()
    _check_infants(checked)
    return checked


def check_party_matches(passengers: Sequence[PassengerIn], priced: Sequence[Mapping]) -> None:
    """The booked passengers are exactly the priced offer's (DESIGN.md §11: create
    order's passengerIds are the priced offer's paxIds)."""
    wanted = {p["paxId"]: p["ptc"] for p in priced}
    given = {p.pax_id: p.ptc for p in passengers}
    if given != wanted:
        listed = ", ".join(f"{pax_id} ({ptc})" for pax_id, ptc in wanted.items())
        raise ApiError(
            Err.ORDER_NOT_CREATED,
            f"The priced offer is for {listed}; the passengers must be exactly those",
            path="passengers.passengerId",
        )


def lead_of(passengers: Sequence[PassengerIn]) -> PassengerIn:
    """The lead passenger: the first adult (check_passengers requires one)."""
    return next(p for p in passengers if p.ptc == "ADT")


def check_contact(contact: ContactData, *, lead: PassengerIn | PassengerData) -> ContactIn:
    """The booking contact; its name defaults to the lead passenger's (SPEC.md §2.5.1).
    Every field error is reported together."""
    given_name = contact.given_name or lead.given_name
    surname = contact.surname or lead.surname
    errors = ErrorCollector()
    email = phone = ""
    with errors.check():
        _check_name(given_name, "contact.name.givenName")
    with errors.check():
        _check_name(surname, "contact.name.surname")
    with errors.check():
        email = check_email(contact.email, path="contact.emailAddress")
    with errors.check():
        phone = check_phone(contact.phone, path="contact.phoneNumber")
    errors.raise_any()
    return ContactIn(
        email=email,
        phone=phone,
        given_name=given_name,
        surname=surname,
        postal_address=None if contact.postal_address is None else contact.postal_address.wire(),
    )


def check_email(value: str, *, path: str) -> str:
    try:
        validate_email(value)
    except ValidationError:
        raise ApiError(Err.INVALID_VALUE, "Not a valid email address", path=path) from None
    return value


def check_phone(value: str | None, *, path: str) -> str:
    """The number in E.164 (`+14155550123`); numbers without a country code are read as
    North American. Empty stays empty.

    A number is taken when E.164 can write it (a known country code, at most 15 digits)
    and its country's length rules allow it (`is_possible_number`), not only when it is
    in a range the numbering plan has assigned (`is_valid_number`): the plans change
    faster than the library, and partners' test data (+66 12345960) is plausible but
    unassigned."""
    if not value:
        return ""
    try:
        number = phonenumbers.parse(value, "US")
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not _e164_possible(number):
        raise ApiError(
            Err.INVALID_VALUE, "The phone number cannot be written in E.164 form", path=path
        )
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _e164_possible(number: phonenumbers.PhoneNumber) -> bool:
    digits = len(str(number.country_code)) + len(str(number.national_number))
    reason = phonenumbers.is_possible_number_with_reason(number)
    return digits <= 15 and reason == phonenumbers.ValidationResult.IS_POSSIBLE


def age_on(born: date, day: date) -> int:
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def check_amount_stated(payment: PaymentData | None, *, due: Decimal, currency: str) -> None:
    """ERR-6002 when the payment states an amount (NDC's PaymentProcessingDetails/Amount,
    JSON's `payment.amount`) other than what it must pay, `due` in `currency`: a client
    who believes it pays something else must not be charged. An amount left
    out is the amount due (SPEC.md §2.5.1 has none)."""
    stated = getattr(payment, "amount", None)
    if stated is None:
        return
    if stated.currency != currency or stated.amount != due:
        raise ApiError(
            Err.PAYMENT_REJECTED,
            f"The amount due is {due:.2f} {currency}; the payment states "
            f"{stated.amount:.2f} {stated.currency}",
            path="payment.amount",
        )


def _check_passenger(
    data: PassengerData, first_travel_date: date, errors: ErrorCollector
) -> PassengerIn:
    """One passenger checked, its field errors added to `errors` (each naming the
    passenger: `fields` has no array positions)."""
    with errors.check():
        _check_name(data.given_name, "passengers.name.givenName", who=data.passenger_id)
    with errors.check():
        _check_name(data.surname, "passengers.name.surname", who=data.passenger_id)
    with errors.check():
        _check_birth(data, first_travel_date)
    checked_contacts = {}
    with errors.check():
        if data.email:
            checked_contacts["emailAddress"] = check_email(
                data.email, path="passengers.contacts.emailAddress"
            )
    with errors.check():
        if data.phone:
            checked_contacts["phoneNumber"] = check_phone(
                data.phone, path="passengers.contacts.phoneNumber"
            )
    return PassengerIn(
        pax_id=data.passenger_id,
        ptc=data.ptc,
        given_name=data.given_name.strip(),
        surname=data.surname.strip(),
        date_of_birth=data.date_of_birth,
        gender=data.gender,
        nationality=data.nationality,
        residence_country=data.residence_country,
        loyalty_program=None if data.loyalty_program is None else data.loyalty_program.wire(),
        # Stored as JSON as they came, dates as ISO strings.
        travel_documents=[d.wire() for d in data.travel_documents],
        contacts=checked_contacts or None,
        infant_pax_id=data.infant_passenger_id,
    )


def _check_birth(data: PassengerData, first_travel_date: date) -> None:
    born = data.date_of_birth
    if born is not None:
        if born > first_travel_date:
            raise ApiError(
                Err.VALIDATION,
                f"{data.passenger_id}: dateOfBirth is after the first travel date",
                path="passengers.dateOfBirth",
            )
        low, high = AGE_LIMITS[data.ptc]
        age = age_on(born, first_travel_date)
        if not low <= age <= high:
            raise ApiError(
                Err.VALIDATION,
                f"{data.passenger_id} is {age} on {first_travel_date}; type {data.ptc} is for "
                f"ages {low} to {high}",
                path="passengers.dateOfBirth",
            )


def _check_name(value: str, path: str, *, who: str = "") -> None:
    if not NAME.match(value.strip()):
        whose = f"{who}: " if who else ""
        raise ApiError(
            Err.VALIDATION,
            f"{whose}Names are letters, with spaces, hyphens, apostrophes or periods between them",
            path=path,
        )


def _check_infants(passengers: Sequence[PassengerIn]) -> None:
    """Each infant rides on the lap of exactly one adult, who names it (DESIGN.md §11)."""
    check_infant_carriers(
        [(p.pax_id, p.ptc, p.infant_pax_id or "") for p in passengers],
        path="passengers.infantPassengerId",
        every_infant=True,
    )


def check_order_search(params: Mapping[str, Any], *, principal: Principal) -> OrderSearch:
    """OrderList's criteria from its validated query (SPEC.md §4.8): scoped to the acting
    seller and then the key's agency code, which organizationCode may only repeat
    (ERR-8001 otherwise)."""
    agency_code = principal.key.agency_code
    asked = params.get("organizationCode", "").upper()
    if asked and asked != agency_code.upper():
        raise ApiError(Err.FORBIDDEN, f"This API key cannot list orders of organization {asked}")
    flight = params.get("flightNumber", "").upper()
    flight_number = None
    if flight:
        carrier, number = ("", flight) if flight[:2].isdigit() else (flight[:2], flight[2:])
        if not number.isdigit():
            raise ApiError(
                Err.VALIDATION, "flightNumber must be like 123 or MX123", path="flightNumber"
            )
        # Another carrier's flight is never on our orders: a number no flight has.
        flight_number = int(number) if carrier in ("", settings.AIRLINE_DESIGNATOR) else -1
    return OrderSearch(
        seller_id=principal.seller.pk,
        agency_code=agency_code,
        first_name=params.get("firstName", "").strip(),
        last_name=params.get("lastName", "").strip(),
        departure_date=params.get("departureDate"),
        origin=params.get("origin", "").upper(),
        destination=params.get("destination", "").upper(),
        flight_number=flight_number,
        page_size=params["pageSize"],
        last_index=params["lastIndex"],
    )
