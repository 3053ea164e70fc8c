"""The HTTP kernel: envelope, error registry, versions, request ids, health, access log
(SPEC.md §1 Conventions, §4.3, §7, §9; DESIGN.md §4)."""

import gc
import json
import logging
import re
import uuid

import pytest

from airline.api.errors import REGISTRY, Err
from airline.api.readiness import register_readiness_check, unregister_readiness_check
from tests.api.urls import PayloadProbe
from tests.conftest import bearer, token_for

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


@pytest.fixture
def token(api, partner_key):
    return token_for(api, partner_key.raw)


def assert_envelope_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"data", "error"}
    assert body["data"] is None
    error = body["error"]
    assert error["code"] == code
    assert error["title"] == REGISTRY[code].title
    assert error["description"]
    assert error["requestId"] == response["x-request-id"]
    return error


class TestEnvelope:
    def test_success_is_wrapped_with_a_null_error(self, api, token):
        body = api.get("/json/v1/whoami", **bearer(token)).json()

        assert set(body) == {"data", "error"}
        assert body["error"] is None

    def test_an_answer_is_freed_once_sent_without_waiting_for_the_collector(self, api, token):
        # DRF's response refers to itself and its view; its data used to live on until a
        # full collection (~25 ms with pages of 1000 orders piled up).
        PayloadProbe.sent.clear()
        gc.disable()
        try:
            response = api.get("/json/v1/probe/payload", **bearer(token))
            [sent] = PayloadProbe.sent
            freed = sent() is None
        finally:
            gc.enable()

        assert response.json()["data"] == {"rows": [{"n": 0}, {"n": 1}, {"n": 2}]}
        assert freed

    def test_an_unknown_route_is_enveloped(self, api, token):
        error = assert_envelope_error(
            api.get("/json/v1/no/such/thing", **bearer(token)), 404, "ERR-1000"
        )

        assert "path" not in error

    def test_a_wrong_method_is_enveloped(self, api, token):
        assert_envelope_error(api.delete("/json/v1/whoami", **bearer(token)), 405, "ERR-1001")

    def test_a_body_that_is_not_json_is_enveloped(self, api, token):
        response = api.post(
            "/json/v1/probe/validate", "passengers=1", content_type="text/plain", **bearer(token)
        )
        assert_envelope_error(response, 415, "ERR-1003")

    def test_malformed_json_is_a_validation_error(self, api, token):
        response = api.post(
            "/json/v1/probe/validate",
            '{"passengers": [',
            content_type="application/json",
            **bearer(token),
        )
        assert_envelope_error(response, 422, "ERR-1005")

    def test_a_body_over_one_mebibyte_is_refused(self, api, token):
        huge = json.dumps({"passengers": [{"type": "ADT"}], "pad": "x" * (1024 * 1024)})

        response = api.post(
            "/json/v1/probe/validate", huge, content_type="application/json", **bearer(token)
        )

        assert_envelope_error(response, 413, "ERR-1009")

    def test_an_unexpected_failure_is_enveloped_and_logged_with_its_request_id(
        self, api, token, caplog
    ):
        with caplog.at_level(logging.ERROR, logger="airline.errors"):
            response = api.get("/json/v1/probe/crash", **bearer(token))

        assert_envelope_error(response, 500, "ERR-9003")
        assert "something broke" not in response.content.decode()  # no internals leak
        assert any(r.exc_info and "something broke" in str(r.exc_info[1]) for r in caplog.records)

    def test_answers_are_json_whatever_the_client_accepts(self, api, token):
        response = api.get("/json/v1/whoami", HTTP_ACCEPT="text/html", **bearer(token))

        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"


class TestValidationErrors:
    def test_path_names_the_field_without_array_positions(self, api, token):
        body = {"passengers": [{"type": "ADT"}, {"type": "XYZ"}]}

        error = assert_envelope_error(
            api.post("/json/v1/probe/validate", body, format="json", **bearer(token)),
            422,
            "ERR-1005",
        )

        assert error["path"] == "passengers.type"
        assert error["fields"] == {"passengers.type": '"XYZ" is not a valid choice.'}

    def test_fields_lists_every_offending_field(self, api, token):
        body = {"passengers": [{"type": "XYZ", "paxId": ""}], "currency": ["USD"]}

        error = assert_envelope_error(
            api.post("/json/v1/probe/validate", body, format="json", **bearer(token)),
            422,
            "ERR-1005",
        )

        assert set(error["fields"]) == {"passengers.type", "passengers.paxId", "currency"}

    def test_a_missing_field_is_named(self, api, token):
        error = assert_envelope_error(
            api.post("/json/v1/probe/validate", {}, format="json", **bearer(token)), 422, "ERR-1005"
        )

        assert error["path"] == "passengers"

    def test_a_body_that_is_not_an_object_has_no_path(self, api, token):
        error = assert_envelope_error(
            api.post("/json/v1/probe/validate", [1, 2], format="json", **bearer(token)),
            422,
            "ERR-1005",
        )

        assert "path" not in error


class TestVersions:
    @pytest.mark.parametrize("version", ["v0", "v1", "v2"])
    def test_v0_v1_and_v2_are_accepted_and_identical(self, api, token, version):
        response = api.get(f"/json/{version}/whoami", **bearer(token))

        assert response.status_code == 200
        assert response.json() == api.get("/json/v1/whoami", **bearer(token)).json()

    @pytest.mark.parametrize("version", ["v3", "V1", "1", "v01", "latest"])
    def test_any_other_version_is_err_1002(self, api, token, version):
        error = assert_envelope_error(
            api.get(f"/json/{version}/whoami", **bearer(token)), 404, "ERR-1002"
        )

        assert error["path"] == "version"

    def test_an_unsupported_version_wins_over_an_unknown_route(self, api):
        assert_envelope_error(api.post("/json/v9/offers"), 404, "ERR-1002")


class TestRequestId:
    def test_a_valid_incoming_id_is_echoed(self, api, token):
        response = api.get("/json/v1/whoami", HTTP_X_REQUEST_ID="trace-42.a_B", **bearer(token))

        assert response["x-request-id"] == "trace-42.a_B"

    @pytest.mark.parametrize("incoming", ["", "x" * 65, "has space", "semi;colon", "new\nline"])
    def test_an_invalid_incoming_id_is_replaced_by_a_uuid(self, api, incoming):
        response = api.get("/json/v1/nope", HTTP_X_REQUEST_ID=incoming)

        assert response["x-request-id"] != incoming
        assert uuid.UUID(response["x-request-id"]).version == 4
        assert response.json()["error"]["requestId"] == response["x-request-id"]

    @pytest.mark.parametrize(
        "path", ["/health", "/auth/token", "/json/v1/whoami", "/admin/login/", "/"]
    )
    def test_every_response_carries_one(self, api, path):
        assert uuid.UUID(api.get(path)["x-request-id"])

    def test_auth_errors_carry_it_in_the_body(self, api):
        response = api.post("/auth/token", HTTP_X_REQUEST_ID="abc-123")

        assert response.json()["requestId"] == "abc-123" == response["x-request-id"]


@pytest.mark.usefixtures("without_readiness_checks")
class TestHealth:
    def test_it_is_ok_with_a_millisecond_utc_timestamp(self, api, clock):
        clock.at = clock.at.replace(second=7, microsecond=123456)

        response = api.get("/health")

        assert response.status_code == 200
        assert response.json() == {
            "status": "ok",
            "timestamp": clock.at.strftime("%Y-%m-%dT%H:%M:07.123Z"),
            "degraded": False,
            "dependencies": {"redis": "up"},
        }
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", response.json()["timestamp"])

    def test_it_needs_no_credentials_and_ignores_bad_ones(self, api):
        assert api.get("/health", HTTP_AUTHORIZATION="Bearer garbage").status_code == 200

    def test_it_is_loading_until_every_readiness_check_passes(self, api):
        ready = {"schedule": False}
        register_readiness_check("test-schedule", lambda: ready["schedule"])
        try:
            loading = api.get("/health")
            ready["schedule"] = True
            after = api.get("/health")
        finally:
            unregister_readiness_check("test-schedule")

        assert loading.status_code == 503
        assert loading.json() == {"status": "loading"}
        assert after.status_code == 200

    def test_it_allows_only_get(self, api):
        assert api.post("/health").status_code == 405


class TestAccessLog:
    def test_one_structured_line_per_request(self, api, token, partner_key, caplog):
        with caplog.at_level(logging.INFO, logger="airline.request"):
            response = api.get("/json/v1/whoami", HTTP_X_REQUEST_ID="log-me", **bearer(token))

        lines = [r for r in caplog.records if r.name == "airline.request"]
        assert len(lines) == 1
        fields = lines[0].fields
        assert fields["request_id"] == "log-me"
        assert fields["route"] == "json/<version:version>/whoami"
        assert fields["status"] == response.status_code == 200
        assert fields["seller"] == "ACME1"
        assert fields["api_key"] == partner_key.key.prefix
        assert fields["duration_ms"] >= 0


def test_every_registered_code_is_unique_and_well_formed():
    specs = [v for v in vars(Err).values() if hasattr(v, "code")]

    assert len({s.code for s in specs}) == len(specs) == len(REGISTRY)
    assert all(re.fullmatch(r"ERR-\d{4}", s.code) and 400 <= s.status < 600 for s in specs)


@pytest.mark.parametrize(
    ("caches", "closed_per_request"),
    [
        ({"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://x"}}, False),
        ({"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache"}}, False),
        (
            {
                "default": {
                    "BACKEND": "django_redis.cache.RedisCache",
                    "OPTIONS": {"CLOSE_CONNECTION": True},
                }
            },
            True,
        ),
        ({"default": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache"}}, True),
    ],
)
def test_caches_are_closed_after_each_request_only_when_a_backend_needs_it(
    settings, caches, closed_per_request
):
    from django.core.cache import close_caches
    from django.core.signals import request_finished

    from airline.api.apps import _close_caches_only_if_needed

    def connected() -> bool:
        return any(receiver() is close_caches for _, receiver, *_ in request_finished.receivers)

    before = connected()
    request_finished.connect(close_caches)
    try:
        settings.CACHES = caches
        _close_caches_only_if_needed()
        after = connected()
    finally:
        if not before:
            request_finished.disconnect(close_caches)
    assert after is closed_per_request
