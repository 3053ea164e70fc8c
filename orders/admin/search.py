"""The bookings list's search box: each word read by the back office's one grammar
(airline.backoffice.search_words) and matched through an index where one serves."""

import re
from datetime import date

from django.db.models import (
    Exists,
    OuterRef,
    Q,
    QuerySet,
)

from airline.backoffice import (
    DayWord,
    FlightWord,
    OtherWord,
    RouteWord,
    search_words,
)
from orders.models import (
    Contact,
    Journey,
    Leg,
    Order,
    OrderStatus,
    Passenger,
    Segment,
    Service,
    Ticket,
)


def flight_on_date(number: int | None, day: date | None, carrier: str | None = None) -> Exists:
    """Some segment of the order flies flight `number` (its marketing number, of
    `carrier` when given) on the flight date `day` (the local date of the flight's first
    departure, SSIM's)."""
    legs = Leg.objects.filter(segment__order=OuterRef("pk"))
    if number is not None:
        legs = legs.filter(segment__flight_number=number)
    if carrier is not None:
        legs = legs.filter(segment__carrier=carrier)
    if day is not None:
        legs = legs.filter(flight_leg__flight_date=day)
    return Exists(legs)


TICKET = re.compile(r"^\d{3}-?\d{10}$")
STATION = re.compile(r"^[A-Z]{3}$")  # a word that may be an IATA station code


FEW = 1000  # bookings a search word may name and still be listed by their ids


def word_matches(term: str, flight: QuerySet[Leg] | None = None, using: str = "default") -> Q:
    """What any other search word may be: a locator, an order id, an agency, a status,
    part of a passenger's name, an email (when it has an @), a ticket or EMD number; or,
    given `flight` (the legs of a flight the word may also name), a booking on it. The
    ids are read from database `using`, the list's.

    Most words name a few bookings: their ids are read first, each kind of match through
    its own index (the names' through their trigram indexes), and the list is of those
    ids. Tested row by row, as an OR, every search scanned all the bookings.
    A word that names more (a status, a big agency, "ada") is the OR: the newest page of
    bookings is found early in that scan, and an index would not spare it."""
    upper = term.upper()
    found: list[QuerySet] = [
        Order.objects.filter(Q(record_locator=upper) | Q(order_id=term)).values_list("pk"),
        Order.objects.filter(agency_code=upper).values_list("pk"),
        Passenger.objects.filter(
            Q(surname__icontains=term) | Q(given_name__icontains=term)
        ).values_list("order_id"),
    ]
    if upper in OrderStatus.values:
        found.append(Order.objects.filter(status=upper).values_list("pk"))
    if "@" in term:
        found.append(Contact.objects.filter(email__icontains=term).values_list("order_id"))
    if TICKET.match(term):
        number = term.replace("-", "")
        found.append(Ticket.objects.filter(number=number).values_list("order_id"))
        found.append(Service.objects.filter(emd_number=number).values_list("order_id"))
    if flight is not None:
        found.append(flight.values_list("segment__order_id"))
    if STATION.match(upper):
        found.append(_at_station(upper).values_list("order_id"))
    found = [rows.order_by() for rows in found]
    # UNION ALL streams, so the LIMIT stops it early when the word names many.
    first = list(found[0].union(*found[1:], all=True).using(using)[: FEW + 1])
    if len(first) <= FEW:
        return Q(pk__in={pk for (pk,) in first})
    return word_tested(term, flight)


class Probed(Exists):
    """EXISTS written as a correlated lookup of one row, `(SELECT 1 ... LIMIT 1) IS NOT
    NULL`, which PostgreSQL runs for each booking it tests, as written: an EXISTS in an
    OR it may instead run once for every booking, hashing all the rows that match (all
    the passengers whose name holds the word), before testing the first booking."""

    template = "(%(subquery)s) IS NOT NULL"


def word_tested(term: str, flight: QuerySet[Leg] | None) -> Q:
    """word_matches as a test of each booking (the same kinds of match)."""
    upper = term.upper()
    found = Q(record_locator=upper) | Q(order_id=term) | Q(agency_code=upper)
    if upper in OrderStatus.values:
        found |= Q(status=upper)
    found |= Probed(
        Passenger.objects.filter(order=OuterRef("pk")).filter(
            Q(surname__icontains=term) | Q(given_name__icontains=term)
        )
    )
    if "@" in term:
        found |= Probed(Contact.objects.filter(order=OuterRef("pk"), email__icontains=term))
    if TICKET.match(term):
        number = term.replace("-", "")
        found |= Probed(Ticket.objects.filter(order=OuterRef("pk"), number=number))
        found |= Probed(Service.objects.filter(order=OuterRef("pk"), emd_number=number))
    if flight is not None:
        found |= Probed(flight.filter(segment__order=OuterRef("pk")))
    if STATION.match(upper):
        found |= Probed(_at_station(upper).filter(order=OuterRef("pk")))
    return found


def _at_station(code: str) -> QuerySet[Segment]:
    """Segments from or to a station: a booking's every stop, its journeys' ends among
    them (a word such as "PVD" names the bookings that fly there, beside any name)."""
    return Segment.objects.filter(Q(origin=code) | Q(destination=code))


def route_matches(origin: str, destination: str) -> Q:
    """Bookings with a journey or a segment from `origin` to `destination`: "PVD-MSY"
    finds a connection through CLT by its journey, "PVD-CLT" by its first segment."""
    return Exists(
        Segment.objects.filter(order=OuterRef("pk"), origin=origin, destination=destination)
    ) | Exists(Journey.objects.filter(order=OuterRef("pk"), origin=origin, destination=destination))


def flight_legs(number: int, carrier: str | None) -> QuerySet[Leg]:
    """The booked legs of flight `number` (its marketing number, of `carrier` when given)."""
    legs = Leg.objects.filter(segment__flight_number=number)
    return legs if carrier is None else legs.filter(segment__carrier=carrier)


def search_matches(search_term: str, using: str = "default") -> Q:
    """Every word must match (as Django's own search), read by the back office's one
    grammar (airline.backoffice.search_words): a flight with its date ("MX101
    2026-06-01") must be the same segment's; a city pair ("PVD-CHS") a journey's or a
    segment's; a bare station ("PVD") any stop of the booking."""
    found = Q()
    for word in search_words(search_term):
        match word:
            case FlightWord(number=number, carrier=carrier, day=None, text=text):
                # "AB1234" may be a record locator as much as a flight.
                found &= word_matches(text, flight=flight_legs(number, carrier), using=using)
            case FlightWord(number=number, carrier=carrier, day=day):
                found &= flight_on_date(number, day, carrier)
            case DayWord(day=day):
                found &= flight_on_date(None, day)
            case RouteWord(origin=origin, destination=destination):
                found &= route_matches(origin, destination)
            case OtherWord(text=text):
                found &= word_matches(text, using=using)
    return found
