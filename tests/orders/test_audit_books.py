"""The books audit (`manage.py audit_books`, orders.money.audit; docs/operators/support.md "Books
audit"): clean over orders made through the API (paid, cancelled with a refund, cancelled
into credit, exchanged, paid with the credit), on both gateways; each equation seen
failing on an order corrupted by hand, the exit code non-zero; the provider's books
against ours on the fake Stripe server; the worker's nightly run and its gauge."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from airline.worker import jobs
from orders.models import AirlineCredit, BooksAudit, Order, Payment, PaymentIntent
from tests.api.test_metrics import metrics_on, samples, value  # noqa: F401 (metrics_on)
from tests.orders.conftest import CARD
from tests.orders.test_cancel import quote_then_cancel_all
from tests.orders.test_exchange import accept, booked, itinerary, quote, reshop

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("card_gateway")]


def audit(*args: str) -> tuple[int, list[str]]:
    """`manage.py audit_books ARGS`: its exit code and its printed lines."""
    from io import StringIO

    out = StringIO()
    try:
        call_command("audit_books", *args, stdout=out)
        code = 0
    except CommandError as failed:
        code = failed.returncode
    return code, out.getvalue().splitlines()


@pytest.fixture
def books(api, auth, network, clock) -> dict[str, str]:
    """One order of each kind, made through the API; their order ids by kind."""
    day = network + timedelta(days=20)
    paid = booked(api, auth, day)
    refunded = booked(api, auth, day, bundle="Nicest", flight=501)
    credited = booked(api, auth, day, bundle="Nice", party=[{"type": "ADT"}, {"type": "ADT"}])
    exchanged = booked(api, auth, day)
    clock.advance(hours=25)  # past the 24-hour rule: each bundle's own terms
    quote_then_cancel_all(api, auth, refunded)
    _, after = quote_then_cancel_all(api, auth, credited)
    code = after["credits"][0]["creditCode"]
    order_id = exchanged["order"]["orderId"]
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=2))).json()["data"][
        "offers"
    ][0]
    quoted = quote(api, auth, order_id, offer)
    assert quoted.status_code == 200, quoted.content
    q = quoted.json()["data"]
    delta = Decimal(str(q["priceDifferential"]["balanceDelta"]["amount"]))
    changed = accept(api, auth, order_id, q["offer"], payment=CARD if delta > 0 else None)
    assert changed.status_code == 200, changed.content
    spender = booked(api, auth, day, payment={"type": "AirlineCredit", "creditCode": code})
    assert (
        AirlineCredit.objects.get(code=code).remaining < AirlineCredit.objects.get(code=code).amount
    )
    return {
        "paid": paid["order"]["orderId"],
        "refunded": refunded["order"]["orderId"],
        "credited": credited["order"]["orderId"],
        "exchanged": order_id,
        "spender": spender["order"]["orderId"],
    }


def test_it_runs_clean_over_orders_made_through_the_api(books, card_gateway):
    assert Payment.objects.filter(refunds__isnull=False).exists()  # a refund was made
    assert Order.objects.filter(status="CANCELLED", credited__gt=0).exists()

    code, lines = audit()

    assert code == 0, lines
    charges = PaymentIntent.objects.count()
    assert charges >= 4  # a card paid each but the spender
    assert lines == [f"5 orders, {charges} provider charges audited: 0 disagreements"]


@pytest.mark.books_rewritten
def test_a_hand_corrupted_order_is_printed_and_fails_the_run(books):
    paid = Order.objects.get(order_id=books["paid"])
    Order.objects.filter(pk=paid.pk).update(retained=Decimal("5.00"))
    credit = AirlineCredit.objects.get(source_order__order_id=books["credited"])
    AirlineCredit.objects.filter(pk=credit.pk).update(remaining=credit.remaining + 1)

    code, lines = audit("--no-provider")

    assert code == 1
    worth = paid.total + Decimal("5.00")
    assert lines == [
        f"{books['paid']} books: charged {paid.paid} - refunded 0.00 = {paid.paid}"
        f" != total {paid.total} + retained 5.00 + credited 0.00 - refundedOutside 0.00"
        f" = {worth}",
        f"{books['credited']} credit: credit {credit.code} issued {credit.amount}"
        f" != spent {credit.amount - credit.remaining} + remaining {credit.remaining + 1}"
        f" = {credit.amount + 1}",
        "5 orders, 0 provider charges audited: 2 disagreements",
    ]


@pytest.mark.books_rewritten
def test_since_leaves_out_orders_unchanged_since(books, clock):
    Order.objects.filter(order_id=books["paid"]).update(
        paid=0, updated_at=clock() - timedelta(days=3)
    )
    since = (clock() - timedelta(days=1)).date().isoformat()

    assert audit("--no-provider", "--since", since)[0] == 0
    code, lines = audit("--no-provider")
    assert code == 1
    assert [line.split()[:2] for line in lines[:-1]] == [[books["paid"], "paid:"]]


@pytest.mark.parametrize("card_gateway", ["stripe"], indirect=True)
@pytest.mark.books_rewritten
def test_the_providers_books_are_held_against_ours(books, stripe_server):
    code, lines = audit()
    assert code == 0, lines
    paid = Payment.objects.get(order__order_id=books["paid"], method="CreditCard")
    # Refunded in the provider's dashboard, its event not (yet) received: the provider
    # keeps 10.00 less than the order says.
    stripe_server.post("/v1/refunds", payment_intent=paid.gateway_reference, amount=1000)

    code, lines = audit()

    assert code == 1
    kept = paid.amount - paid.refunded
    assert lines[0] == (
        f"{books['paid']} provider: card payments kept {kept}"
        f" != provider captured - refunded {kept - 10}"
    )
    charges = PaymentIntent.objects.count()
    assert lines[1:] == [f"5 orders, {charges} provider charges audited: 1 disagreements"]


@pytest.mark.books_rewritten
def test_the_worker_audits_once_a_day_and_the_gauge_shows_the_last_run(
    api,
    books,
    clock,
    metrics_on,  # noqa: F811
):
    [job] = [job for job in jobs() if job.name == "audit_books"]
    assert ("airline_books_disagreements", ()) not in samples(api)  # no run yet
    assert job.run() == {"orders_audited": 5, "books_disagreements": 0}
    Order.objects.filter(order_id=books["paid"]).update(paid=0, updated_at=clock())
    clock.advance(hours=23)
    assert job.run() is None  # audited less than a day ago

    clock.advance(hours=1)
    assert job.run() == {"orders_audited": 5, "books_disagreements": 1}

    last = BooksAudit.objects.first()
    assert (last.orders, last.disagreements) == (5, 1)
    assert [line.split()[:2] for line in last.lines] == [[books["paid"], "paid:"]]
    assert value(api, "airline_books_disagreements") == 1
