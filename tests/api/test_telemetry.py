"""What an error report keeps of a request and its texts (airline/telemetry.py): the
rules, on events as Sentry's SDK builds them; a real report end to end is
tests/e2e/test_telemetry.py's."""

from airline.telemetry import FILTERED, error_report_scrub, tracing_start

CARD_NUMBER = "4111111111111111"


def an_event(**overrides) -> dict:
    event = {
        "event_id": "0123456789012345678901234567890a",
        "level": "error",
        "request": {
            "method": "POST",
            "url": "http://api.example/json/v1/orders",
            "query_string": "lastName=Lovelace",
            "data": {"payment": {"cardNumber": CARD_NUMBER, "securityCode": "737"}},
            "cookies": {"sessionid": "s3cret"},
            "headers": {
                "Content-Type": "application/json",
                "X-Api-Key": "live_0123456789",
                "X-Request-Id": "req-1",
                "User-Agent": "partner/1.0",
            },
            "env": {"REMOTE_ADDR": "192.0.2.7"},
        },
        "exception": {
            "values": [
                {
                    "type": "ValueError",
                    "value": f"bad card {CARD_NUMBER[:4]} {CARD_NUMBER[4:8]} "
                    f"{CARD_NUMBER[8:12]} {CARD_NUMBER[12:]} for order 12",
                }
            ]
        },
        "breadcrumbs": {
            "values": [
                {"message": f"'surname': 'Lovelace', 'cardNumber': '{CARD_NUMBER}'"},
                {"data": {"securityCode": "737", "rows": 3}},
            ]
        },
        "contexts": {"trace": {"trace_id": "12345678901234567890123456789012"}},
    }
    event.update(overrides)
    return event


def test_it_keeps_of_a_request_its_method_path_and_harmless_headers():
    scrubbed = error_report_scrub(an_event())

    assert scrubbed["request"] == {
        "method": "POST",
        "url": "http://api.example/json/v1/orders",
        "headers": {
            "Content-Type": "application/json",
            "X-Request-Id": "req-1",
            "User-Agent": "partner/1.0",
        },
    }
    assert scrubbed["tags"] == {"request_id": "req-1"}


def test_it_filters_card_numbers_and_secret_keys_wherever_they_are():
    scrubbed = error_report_scrub(an_event())

    assert CARD_NUMBER not in str(scrubbed)
    assert "Lovelace" not in str(scrubbed)
    assert "737" not in str(scrubbed)
    assert scrubbed["exception"]["values"][0]["value"] == f"bad card {FILTERED} for order 12"
    assert scrubbed["breadcrumbs"]["values"][1]["data"] == {"securityCode": FILTERED, "rows": 3}


def test_it_leaves_ids_that_are_digits_as_they_are():
    scrubbed = error_report_scrub(an_event())

    assert scrubbed["event_id"] == "0123456789012345678901234567890a"
    assert scrubbed["contexts"]["trace"]["trace_id"] == "12345678901234567890123456789012"


def test_tracing_is_not_started_unless_configured(settings):
    settings.TRACING_ENABLED = False

    assert tracing_start(role="web") is None
