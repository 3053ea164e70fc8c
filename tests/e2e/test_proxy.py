"""The shipped nginx configuration (deploy/nginx/airline.conf) in front of a real sync
gunicorn (issue 28 item 2): slow clients never reach a worker, whatever nginx refuses
itself answers in the API's shapes (JSON, or the NDC error document under /ndc), never
HTML, and x-request-id goes through.

Debian's nginx (`apt-get install nginx`; `.ci/run` installs it): without it these tests
skip, saying why; under CI (`CI` set) they fail instead, like the browser tests. Every
socket is on loopback and every wait is bounded.
"""

import http.client
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from lxml import etree

from deploy.nginx.render import TEMPLATE, render_standalone
from tests.e2e.servers import base_env, free_port, gunicorn, manage

pytestmark = pytest.mark.e2e

NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).is_file()), None
)
SLOW_CLIENTS = 100
HEALTH_WITHIN = 1.0  # seconds: issue 28's target behind the proxy
CONNECTIONS_PER_ADDRESS = 64  # limit_conn in airline.conf
REQUESTS_PER_ADDRESS = (100, 200)  # limit_req in airline.conf: a second, burst
# Where /health is probed from, as a balancer would: not the slow clients' address
# (127.0.0.1), whose requests in progress nginx limits (airline.conf).
PROBE_ADDRESS = "127.0.0.2"


def _required() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module", autouse=True)
def _nginx_present() -> None:
    if NGINX is None:
        reason = "nginx not found: apt-get install nginx"
        if _required():
            pytest.fail(f"{reason} (CI is set, so the proxy tests must run)", pytrace=False)
        pytest.skip(reason)


@contextmanager
def nginx(prefix: Path, *, upstream: str, edit=lambda conf: conf) -> Iterator[str]:
    """nginx with the shipped configuration on a free loopback port, until the block
    ends; its base URL. `edit` changes the rendered text (a shorter timeout)."""
    port = free_port()
    conf = edit(render_standalone(listen=f"127.0.0.1:{port}", upstream=upstream, prefix=prefix))
    (prefix / "nginx.conf").write_text(conf)
    command = [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "stderr"]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    process = subprocess.Popen(
        [*command, "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def _wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited: {process.stderr.read().decode()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # polling a starting process, not timing behaviour
    raise AssertionError("nginx did not listen in 15 s")


@dataclass
class Stack:
    proxy: str  # nginx's base URL
    app: str  # gunicorn's, straight


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    """One sync gunicorn worker (the layout the proxy exists for) behind nginx, on the
    embedded development database: no data is needed, only answers. With no schedule
    loaded its /health says 503 `loading`, which is an answer of the worker all the same:
    what slow clients take away is the worker (`answered` below)."""
    var = tmp_path_factory.mktemp("proxy")
    env = base_env(AIRLINE_ENV="development", AIRLINE_VAR_DIR=str(var), BEHIND_PROXY="1")
    manage(env, "migrate", "--noinput")
    with ExitStack() as stack:
        app = stack.enter_context(gunicorn(env, var / "gunicorn.log", workers=1))
        upstream = app.url.removeprefix("http://")
        proxy = stack.enter_context(nginx(var / "nginx", upstream=upstream))
        yield Stack(proxy=proxy, app=app.url)


def raw(
    base: str, data: bytes, *, timeout: float = 10, source: str = "127.0.0.1"
) -> tuple[int, dict[str, str], bytes]:
    """Send `data` as it is on a new connection; the answer's status, headers and body.

    Read until the answer is whole (its Content-Length), not until nginx closes: after
    refusing a body it never got, nginx keeps the connection for its lingering_timeout
    (5 s) in case the body still comes."""
    host, port = base.removeprefix("http://").split(":")
    received = b""
    with socket.create_connection(
        (host, int(port)), timeout=timeout, source_address=(source, 0)
    ) as sock:
        sock.sendall(data)
        # nginx may reset a connection it refused a body on once it has answered: what
        # it sent before is the answer.
        with suppress(ConnectionResetError):
            while not _whole(received) and (chunk := sock.recv(65536)):
                received += chunk
    return _parsed(received)


def _parsed(received: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _whole(received: bytes) -> bool:
    if b"\r\n\r\n" not in received:
        return False
    _, headers, body = _parsed(received)
    return "content-length" in headers and len(body) >= int(headers["content-length"])


def request(path: str, *headers: str, method: str = "GET", body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def assert_json_error(status_headers_body, status: int, code: str) -> dict:
    status_seen, headers, body = status_headers_body
    assert status_seen == status, body
    assert headers["content-type"] == "application/json", headers
    assert b"<html" not in body.lower()
    envelope = json.loads(body)
    assert envelope["data"] is None
    assert envelope["error"]["code"] == code
    assert envelope["error"]["requestId"] == headers["x-request-id"]
    return envelope["error"]


def assert_ndc_error(status_headers_body, status: int, code: str, root: str) -> None:
    status_seen, headers, body = status_headers_body
    assert status_seen == status, body
    assert headers["content-type"].startswith("application/xml"), headers
    document = etree.fromstring(body)
    assert etree.QName(document).localname == root
    assert document.findtext(".//{*}Error/{*}Code") == code
    assert document.findtext(".//{*}PayloadAttributes/{*}TrxID") == headers["x-request-id"]


# --- what reaches the service -------------------------------------------------------------


def answered(status: int, body: bytes) -> bool:
    """Whether /health was answered by the service's worker (ok, or loading: no schedule)."""
    return (status, json.loads(body).get("status")) in ((200, "ok"), (503, "loading"))


def test_health_and_the_request_id_go_through(stack):
    response = requests.get(stack.proxy + "/health", headers={"x-request-id": "probe-1"}, timeout=5)
    assert answered(response.status_code, response.content), response.text
    assert response.headers["x-request-id"] == "probe-1"

    # An id the service would not take is replaced, by nginx, with one of its own.
    invented = requests.get(stack.proxy + "/health", headers={"x-request-id": "a b"}, timeout=5)
    assert re.fullmatch(r"[0-9a-f]{32}", invented.headers["x-request-id"])


def test_the_services_own_errors_pass_through_untouched(stack):
    response = requests.get(stack.proxy + "/json/v1/orders", timeout=5)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "ERR-8000"


# --- slow clients -------------------------------------------------------------------------


@contextmanager
def slow_clients(base: str, count: int, *, with_body: bool = False) -> Iterator[list]:
    """`count` connections that send a request a few bytes at a time and never finish it
    while the block runs: headers line by line (slowloris), or whole headers and then a
    body that never arrives in full."""
    host, port = base.removeprefix("http://").split(":")
    stop = threading.Event()
    sockets = []
    for n in range(count):
        sock = socket.create_connection((host, int(port)), timeout=5)
        if with_body:
            sock.sendall(request("/json/v1/offers", "Content-Length: 100000", method="POST"))
        else:
            sock.sendall(f"GET /health?slow={n} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
        sockets.append(sock)

    def trickle() -> None:
        while not stop.wait(0.5):  # a byte or a header line per connection every 0.5 s
            for sock in sockets:
                # A connection the server closed is what it should do, in time.
                with suppress(OSError):
                    sock.sendall(b"{" if with_body else b"X-Slow: 1\r\n")

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield sockets
    finally:
        stop.set()
        thread.join(timeout=5)
        for sock in sockets:
            sock.close()


def health_seconds(base: str, times: int = 5) -> list[float]:
    """How long /health took from PROBE_ADDRESS, `times` over; a probe that did not
    answer in 2 s counts 2."""
    host, port = base.removeprefix("http://").split(":")
    took = []
    for _ in range(times):
        started = time.monotonic()
        probe = http.client.HTTPConnection(
            host, int(port), timeout=2, source_address=(PROBE_ADDRESS, 0)
        )
        try:
            probe.request("GET", "/health")
            response = probe.getresponse()
            body = response.read()
            assert answered(response.status, body), body
            took.append(time.monotonic() - started)
        except TimeoutError:
            took.append(2.0)
        finally:
            probe.close()
    return took


@pytest.mark.parametrize("with_body", [False, True], ids=["slow-headers", "slow-body"])
def test_health_answers_within_a_second_under_a_hundred_slow_clients(stack, with_body):
    with slow_clients(stack.proxy, SLOW_CLIENTS, with_body=with_body):
        time.sleep(1)  # the slow clients under way: a few trickles each (load, not a wait)
        took = health_seconds(stack.proxy)

    assert max(took) < HEALTH_WITHIN, took


def test_the_same_probe_straight_at_gunicorn_takes_its_worker(stack):
    # Why the proxy is there: one slow client holds the only sync worker, and /health
    # no longer answers. (It is let go at the end of the block, before the worker timeout.)
    with slow_clients(stack.app, 2):
        took = health_seconds(stack.app, times=1)

    assert took == [2.0]
    assert max(health_seconds(stack.app, times=1)) < HEALTH_WITHIN  # free again


# --- one address --------------------------------------------------------------------------


def _answers(sockets: list[socket.socket], expected: int, within: float) -> list[tuple]:
    """The answers nginx sent on `sockets` (each read whole) once `expected` of them
    came, or `within` seconds passed."""
    received = {sock: b"" for sock in sockets}
    done: set[socket.socket] = set()
    deadline = time.monotonic() + within
    while len(done) < expected and (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([s for s in sockets if s not in done], [], [], left)
        for sock in readable:
            try:
                chunk = sock.recv(65536)
            except OSError:
                chunk = b""
            received[sock] += chunk
            if _whole(received[sock]) or not chunk:
                done.add(sock)
    return [_parsed(received[sock]) for sock in done if received[sock]]


def test_one_address_holds_only_its_share_of_connections(stack):
    # More slow bodies from one address than it may hold: the extra ones are refused at
    # once in the API's shape, and /health (from another address, as a balancer's)
    # still answers; so does that address's own next request, refused too.
    extra = 16
    with slow_clients(stack.proxy, CONNECTIONS_PER_ADDRESS + extra, with_body=True) as sockets:
        refused = _answers(sockets, extra, within=5)
        took = health_seconds(stack.proxy)
        json_answer = raw(stack.proxy, request("/json/v1/offers"))
        ndc_answer = raw(stack.proxy, request("/ndc/21.3/OrderList", method="POST"))

    assert len(refused) == extra
    for answer in refused:
        assert_json_error(answer, 429, "ERR-8003")
        assert answer[1]["retry-after"] == "1"
    assert max(took) < HEALTH_WITHIN, took
    assert_json_error(json_answer, 429, "ERR-8003")
    assert_ndc_error(ndc_answer, 429, "ERR-8003", "IATA_OrderListRS")


def test_one_address_makes_only_its_share_of_requests(tmp_path):
    # No upstream: what limit_req lets through is a 502 at once, so the count is nginx's.
    rate, burst = REQUESTS_PER_ADDRESS
    closed = f"127.0.0.1:{free_port()}"
    with nginx(tmp_path, upstream=closed) as proxy:
        started = time.monotonic()
        statuses = []
        while 429 not in statuses and len(statuses) < 5 * burst:
            statuses.append(raw(proxy, request("/json/v1/offers"), source="127.0.0.3")[0])
        elapsed = time.monotonic() - started
        refused = raw(proxy, request("/json/v1/offers"), source="127.0.0.3")
        other = raw(proxy, request("/json/v1/offers"), source="127.0.0.4")

    assert statuses[-1] == 429, statuses
    assert statuses.count(502) <= burst + 1 + rate * elapsed
    assert_json_error(refused, 429, "ERR-8003")
    assert refused[1]["retry-after"] == "1"
    assert_json_error(other, 502, "ERR-9000")  # another address is not limited


def test_workers_and_connections_are_sized_from_the_machine(tmp_path):
    conf = render_standalone(listen="127.0.0.1:1", upstream="127.0.0.1:2", prefix=tmp_path)
    files = int(re.search(r"worker_rlimit_nofile (\d+);", conf)[1])
    connections = int(re.search(r"worker_connections (\d+);", conf)[1])

    assert "worker_processes auto;" in conf
    assert connections < files <= resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert connections > 10 * CONNECTIONS_PER_ADDRESS


# --- what nginx refuses itself ------------------------------------------------------------

LONG = "x" * 10_000  # over large_client_header_buffers (8 KiB)


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        (request(f"/PATH?q={LONG}"), 414),  # the request line
        (request("/PATH", f"X-Long: {LONG}"), 431),  # one header
        (request("/PATH", *(f"X-Many-{n}: {'y' * 1000}" for n in range(40))), 431),  # many
        (request("/PATH", "Content-Length: 2000000", method="POST"), 413),  # the body
        (request("/PATH", "Bad Header Line"), 400),
        (request("/PATH", "Content-Length: 5", "Content-Length: 7", method="POST"), 400),
    ],
    ids=["request-line", "header", "headers", "body", "bad-header", "two-lengths"],
)
@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("/json/v1/offers", None),
        ("/auth/token", None),
        ("/ndc/21.3/AirShopping", "IATA_AirShoppingRS"),
        ("/ndc/21.3/OrderCreate", "IATA_OrderViewRS"),
        ("/ndc/99/Nothing", "IATA_AirShoppingRS"),
    ],
)
def test_what_nginx_refuses_answers_in_the_api_shapes(stack, sent, status, path, root):
    answer = raw(stack.proxy, sent.replace(b"/PATH", path.encode(), 1))

    code = {413: "ERR-1009"}.get(status, "ERR-1004")
    if root is None:
        assert_json_error(answer, status, code)
    else:
        assert_ndc_error(answer, status, code, root)


@pytest.mark.parametrize(
    ("sent", "status", "code"),
    [
        (request("/PATH").replace(b"HTTP/1.1", b"HTTP/2.0"), 505, "ERR-1004"),
        (request("/PATH").replace(b"HTTP/1.1", b"HTTP/3.0"), 505, "ERR-1004"),
        (request("/PATH").replace(b"HTTP/1.1", b"HTTP/9.9"), 505, "ERR-1004"),
        (
            request("/PATH", "Transfer-Encoding: gzip", method="POST", body=b"0\r\n\r\n"),
            501,
            "ERR-1004",
        ),
        (request("/PATH", method="TRACE"), 405, "ERR-1001"),
    ],
    ids=["http2", "http3", "http9", "transfer-encoding", "trace"],
)
@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("/json/v1/offers", None),
        ("/ndc/21.3/OrderRetrieve", "IATA_OrderViewRS"),
        ("/ndc/21.3/SeatAvailability?x=1", "IATA_SeatAvailabilityRS"),
    ],
)
def test_what_nginx_refuses_before_any_location_answers_in_the_api_shapes(
    stack, sent, status, code, path, root
):
    # nginx refuses these while reading the request, before it matches a location (the
    # version even before it takes the path): server-level error pages, the format from
    # the request line as sent.
    answer = raw(stack.proxy, sent.replace(b"/PATH", path.encode(), 1))

    if root is None:
        assert_json_error(answer, status, code)
    else:
        assert_ndc_error(answer, status, code, root)


def test_a_request_line_nginx_cannot_read_at_all_answers_json(stack):
    assert_json_error(raw(stack.proxy, b"GARBAGE\r\n\r\n"), 400, "ERR-1004")


def test_a_body_of_the_services_limit_reaches_it(stack):
    # 1 MiB is the service's own limit (SPEC.md §8); nginx lets it through to the service,
    # whose answer (unauthenticated here) is its own.
    response = requests.post(
        stack.proxy + "/json/v1/offers",
        data=b"{" + b" " * (1024 * 1024 - 2) + b"}",
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 401, response.text


# --- no application server ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "root"), [("/json/v1/offers", None), ("/ndc/21.3/OfferPrice", "IATA_OfferPriceRS")]
)
def test_a_dead_upstream_is_a_502_in_the_api_shapes(tmp_path, path, root):
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    with nginx(tmp_path, upstream=closed) as proxy:
        answer = raw(proxy, request(path, method="POST", body=b""))

    assert answer[1]["retry-after"] == "1"
    if root is None:
        assert_json_error(answer, 502, "ERR-9000")
    else:
        assert_ndc_error(answer, 502, "ERR-9000", root)


@pytest.mark.parametrize(
    ("path", "root"), [("/json/v1/offers", None), ("/ndc/21.3/ServiceList", "IATA_ServiceListRS")]
)
def test_an_upstream_that_never_answers_is_a_504_in_the_api_shapes(tmp_path, path, root):
    def short_timeout(conf: str) -> str:
        assert "proxy_read_timeout 80s;" in conf
        return conf.replace("proxy_read_timeout 80s;", "proxy_read_timeout 1s;")

    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        upstream = f"127.0.0.1:{silent.getsockname()[1]}"
        with nginx(tmp_path, upstream=upstream, edit=short_timeout) as proxy:
            answer = raw(proxy, request(path))

    if root is None:
        assert_json_error(answer, 504, "ERR-9000")
    else:
        assert_ndc_error(answer, 504, "ERR-9000", root)


def test_the_ndc_roots_nginx_names_are_the_services():
    """nginx's map of NDC paths to RS roots (airline.conf) says what ndc/errors.py says."""
    from ndc.endpoints import ENDPOINTS

    mapped = dict(
        re.findall(r'"~\^/ndc/\[\^/\?\]\+/(\w+)\(\?:\[\?\]\|\$\)" (\w+);', TEMPLATE.read_text())
    )
    assert mapped == {name: e.response_root for name, e in ENDPOINTS.items()}
