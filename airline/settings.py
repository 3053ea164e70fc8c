"""Settings of the Offer and Order Service, all read from the environment.

AIRLINE_ENV is `production` (the default), `development` or `test`. Outside production a
missing SECRET_KEY is replaced by one generated once under var/, so `make run` works on a
bare machine; in production a missing SECRET_KEY stops the process at start.
Storage: DATABASE_URL set -> that database (PostgreSQL), else SQLite under var/.
REDIS_URL (or REDIS_SENTINELS) set -> Redis for caches, offers and rate limits, else the
database cache (shared by all worker processes, unlike a per-process memory cache).

It is one module because Django reads one settings module, and every setting beside its
typed environment helper (which fails loudly on a missing secret) is what an operator
reads to learn what a variable does.
"""

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from airline.env import database_url_hosts, env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("AIRLINE_VAR_DIR", str(BASE_DIR / "var")))

AIRLINE_ENV = env_str("AIRLINE_ENV", "production")
if AIRLINE_ENV not in ("production", "development", "test"):
    raise ImproperlyConfigured(
        f"AIRLINE_ENV must be production, development or test, not {AIRLINE_ENV!r}"
    )
DEBUG = env_bool("DEBUG", False)
if DEBUG and AIRLINE_ENV == "production":
    # DEBUG pages show settings, SQL and stack frames to whoever causes an error.
    raise ImproperlyConfigured("DEBUG must never be set in production (AIRLINE_ENV=production)")
# Django's own check (security.W009) asks for at least this many characters: a shorter
# key signs tokens and sessions that can be forged by guessing it.
MIN_SECRET_KEY_LENGTH = 50


def _development_secret_key() -> str:
    """A key generated once per checkout, so tokens survive a restart of `make run`."""
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_str("SECRET_KEY")
if SECRET_KEY is None:
    if AIRLINE_ENV == "production":
        raise ImproperlyConfigured("SECRET_KEY is required in production (AIRLINE_ENV=production)")
    SECRET_KEY = _development_secret_key()
if AIRLINE_ENV == "production" and len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
    raise ImproperlyConfigured(
        f"SECRET_KEY must be at least {MIN_SECRET_KEY_LENGTH} characters in production "
        f"(it has {len(SECRET_KEY)}): python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "airline.api.views.csrf_failure"

# --- The airline ----------------------------------------------------------------------
AIRLINE_DESIGNATOR = env_str("AIRLINE_DESIGNATOR", "MX")

# --- Applications ---------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Its index expressions (OpClass: the booking search's trigram indexes); on SQLite it
    # registers nothing that is used.
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "airline.api",
    "airline.network",
    "airline.fares",
    "sellers",
    "offers",
    "orders",
    "ndc",
    "webhooks",
    "axes",
]

MIDDLEWARE = [
    # First, so that every response (errors from later middleware included) carries
    # x-request-id and gets one access-log line.
    "airline.api.middleware.RequestIdMiddleware",
    # Right inside it: a request past REQUEST_DEADLINE_SECONDS still gets its answer
    # (503 ERR-9000), its x-request-id and its log line.
    "airline.api.middleware.RequestDeadlineMiddleware",
    # Before anything asks for the host: a foreign Host header is a 400 and one WARNING.
    "airline.api.middleware.HostCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "airline.api.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Sessions, the back office's users and their messages: not on API paths, which
    # take none of them (airline/api/middleware.py, SESSIONLESS_PREFIXES).
    "airline.api.middleware.BackOfficeSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF check: a wrong method on an API path is 405 JSON, never its page.
    "airline.api.middleware.MethodCheckMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "airline.api.middleware.BackOfficeAuthenticationMiddleware",
    "airline.api.middleware.BackOfficeMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A request that wrote marks its client for read-your-writes (airline/standby.py);
    # does nothing while standby reads are off.
    "airline.standby.WriteMarkerMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "airline.urls"
WSGI_APPLICATION = "airline.wsgi.application"
APPEND_SLASH = False  # API paths are exact; a redirect would drop a POST body.

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Storage --------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    # Persistent connections: reconnecting per request cost two thirds of the throughput
    # of a query endpoint (DESIGN.md §2).
    # libpq's multi-host form, postgres://user@host1:port1,host2:port2/db?target_session_attrs=
    # read-write, finds whichever server is the primary now (a promoted standby after a
    # failover, docs/operators/cluster.md "Cluster"); dj_database_url takes one host, so the
    # others are put
    # back into HOST and PORT, which libpq reads as comma-separated lists.
    _first_url, _hosts, _ports = database_url_hosts(DATABASE_URL)
    DATABASES = {
        "default": dj_database_url.parse(
            _first_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 300), conn_health_checks=True
        )
    }
    if _hosts:
        DATABASES["default"].update(HOST=",".join(_hosts), PORT=",".join(_ports))
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # No JIT compilation on the app's connections: PostgreSQL compiles a plan whose
        # estimated cost passes jit_above_cost, which the back office's counts over the
        # whole schedule do, and compiling cost the admin 12 s for a query that runs in
        # milliseconds. A pooler must pass it on: docs/operators/production.md.
        DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
    # Behind a pooler in transaction mode (PgBouncer pool_mode=transaction), each
    # transaction gets whichever server connection is free, so nothing may outlive one.
    # A server-side cursor does: .iterator() outside a transaction (the itinerary index
    # build) declares it WITH HOLD on one server connection and fetches it from another
    # ("cursor ... does not exist"). So does a prepared statement: Django's own are
    # unprepared (prepare_threshold None); those of airline/sql.py, a booking's hot
    # statements, are prepared only without a pooler. docs/operators/production.md.
    DB_TRANSACTION_POOLING = env_bool("DB_TRANSACTION_POOLING", False)
    if DB_TRANSACTION_POOLING:
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    # A booking's hot statements prepared once per connection (airline/sql.py, psycopg's
    # prepare_threshold): never behind a transaction pooler; DB_PREPARED_STATEMENTS=0 turns
    # them off anywhere (docs/operators/production.md "Framework shortcuts").
    DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True) and not DB_TRANSACTION_POOLING
    # The streaming standby, for reads that may be a moment old (airline/standby.py,
    # docs/operators/cluster.md "Reads on the standby"), used only while READ_FROM_STANDBY is
    # on. Its own libpq host list may name the primary too, with
    # target_session_attrs=prefer-standby: after a failover, the standby is the primary
    # and reads follow it.
    DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL")
    if DATABASE_REPLICA_URL:
        _first_url, _hosts, _ports = database_url_hosts(DATABASE_REPLICA_URL)
        _replica = dj_database_url.parse(
            _first_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 300), conn_health_checks=True
        )
        # The primary's settings (no JIT, no server-side cursors behind a pooler), with
        # the replica's own address and connection options.
        DATABASES["replica"] = {
            **DATABASES["default"],
            **_replica,
            "OPTIONS": {**DATABASES["default"].get("OPTIONS", {}), **_replica.get("OPTIONS", {})},
            "DISABLE_SERVER_SIDE_CURSORS": DB_TRANSACTION_POOLING,
        }
        if _hosts:
            DATABASES["replica"].update(HOST=",".join(_hosts), PORT=",".join(_ports))
    # Off by default: every commit waits for its WAL to reach the disk, money-moving ones
    # included. DB_COMMIT_WITHOUT_FLUSH=1 lets a card booking's confirmation return
    # before its flush (airline.sql.commit_without_flush), which a crash can then lose
    # (docs/operators/production.md "Commits without a flush" says exactly what); never with a
    # synchronous standby to fail over to.
    DB_COMMIT_WITHOUT_FLUSH = env_bool("DB_COMMIT_WITHOUT_FLUSH", False)
else:
    DB_PREPARED_STATEMENTS = False  # SQLite keeps no statements between calls
    DB_COMMIT_WITHOUT_FLUSH = False
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "airline.sqlite3",
            "OPTIONS": {
                # IMMEDIATE takes the write lock at BEGIN, so two workers never deadlock
                # upgrading read locks; WAL lets readers run beside the one writer.
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A booking's rows written by one prepared INSERT per model built outside the ORM's
# compiler (orders/core/rows.py); DB_DIRECT_INSERT=0 writes them with bulk_create instead.
DB_DIRECT_INSERT = env_bool("DB_DIRECT_INSERT", True)
# An order's parts read for one order by statements built once per process
# (orders/reading/part_rows.py); DB_DIRECT_READS=0 reads them with prefetch_related.
DB_DIRECT_READS = env_bool("DB_DIRECT_READS", True)
# The legs, bookings and deliveries lists' rows written in one pass
# (airline.backoffice_lists.OnePassRows);
# ADMIN_ONE_PASS_ROWS=0 leaves every row to Django's admin.
ADMIN_ONE_PASS_ROWS = env_bool("ADMIN_ONE_PASS_ROWS", True)
# Allocations between two young collections of a serving process (airline/collector.py;
# CPython's own is 700).
GC_YOUNG_THRESHOLD = env_int("GC_YOUNG_THRESHOLD", 20_000)
# Writes always to the primary; stale-ok reads to the standby when READ_FROM_STANDBY is
# on and DATABASE_REPLICA_URL names it; a client's reads to the primary for
# READ_YOUR_WRITES_SECONDS after it wrote (airline/standby.py).
DATABASE_ROUTERS = ["airline.standby.StandbyRouter"]
READ_FROM_STANDBY = env_bool("READ_FROM_STANDBY", False)
READ_YOUR_WRITES_SECONDS = env_int("READ_YOUR_WRITES_SECONDS", 10)

# Redis: one server (REDIS_URL), or a master found through Sentinel (REDIS_SENTINELS,
# host:port of each sentinel, REDIS_SENTINEL_MASTER the monitored master's name): a
# failover then moves every client to the promoted replica. Reads go to the master too,
# never a replica: an offer stored by a search is priced a moment later, and a replica
# may not have it yet. Timeouts are short so that a dead Redis costs a request
# milliseconds: every use either does without it or answers 503 (docs/operators/production.md
# "When Redis is down").
REDIS_URL = env_str("REDIS_URL")
REDIS_SENTINELS = env_list("REDIS_SENTINELS", [])
REDIS_SENTINEL_MASTER = env_str("REDIS_SENTINEL_MASTER", "airline")
REDIS_SENTINEL_DB = env_int("REDIS_SENTINEL_DB", 0)
REDIS_CONNECT_TIMEOUT = env_int("REDIS_CONNECT_TIMEOUT_MS", 250) / 1000
REDIS_TIMEOUT = env_int("REDIS_TIMEOUT_MS", 500) / 1000
if REDIS_URL and REDIS_SENTINELS:
    raise ImproperlyConfigured("Set REDIS_URL or REDIS_SENTINELS, not both")


def _sentinel_address(item: str) -> tuple[str, int]:
    host, _, port = item.rpartition(":")
    if not host or not port.isdigit():
        raise ImproperlyConfigured(f"REDIS_SENTINELS takes host:port entries, not {item!r}")
    return host.strip("[]"), int(port)


REDIS_SENTINEL_ADDRESSES = [_sentinel_address(item) for item in REDIS_SENTINELS]
REDIS_ENABLED = bool(REDIS_URL or REDIS_SENTINELS)
_REDIS_TIMEOUTS = {"SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT, "SOCKET_TIMEOUT": REDIS_TIMEOUT}
if REDIS_SENTINELS:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            # A list of one: the master alone (django-redis reads a string as master
            # and replica, and reads from the replica).
            "LOCATION": [f"redis://{REDIS_SENTINEL_MASTER}/{REDIS_SENTINEL_DB}"],
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "airline"),
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.SentinelClient",
                "CONNECTION_FACTORY": "django_redis.pool.SentinelConnectionFactory",
                "SENTINELS": REDIS_SENTINEL_ADDRESSES,
                "SENTINEL_KWARGS": {
                    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
                    "socket_timeout": REDIS_TIMEOUT,
                },
                **_REDIS_TIMEOUTS,
            },
        }
    }
elif REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "airline"),
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", **_REDIS_TIMEOUTS},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "airline_cache",
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "airline"),
        }
    }
# Request volume per key is counted in Redis; while Redis cannot be reached a process
# admits requests uncounted for RATE_LIMIT_OPEN_SECONDS (a failover, a restart), then
# counts them in the database until Redis answers again (sellers/throttling.py).
RATE_LIMIT_OPEN_SECONDS = env_int("RATE_LIMIT_OPEN_SECONDS", 60)
# Request bodies per key per minute, beside the request count: a key that has sent this
# many bytes of bodies this minute gets 429 ERR-8003 for any further request with a
# body, so hostile megabyte bodies cannot buy the parsing time other sellers need.
# Requests without credentials that read a body (the Stripe webhook) are counted per
# client address against API_ADDRESS_BODY_BYTES_PER_MINUTE.
API_KEY_BODY_BYTES_PER_MINUTE = env_int("API_KEY_BODY_BYTES_PER_MINUTE", 16 * 1024 * 1024)
API_ADDRESS_BODY_BYTES_PER_MINUTE = env_int("API_ADDRESS_BODY_BYTES_PER_MINUTE", 4 * 1024 * 1024)
if min(API_KEY_BODY_BYTES_PER_MINUTE, API_ADDRESS_BODY_BYTES_PER_MINUTE) < 1024 * 1024:
    raise ImproperlyConfigured(
        "API_KEY_BODY_BYTES_PER_MINUTE and API_ADDRESS_BODY_BYTES_PER_MINUTE must be at "
        "least 1 MiB, the largest body a request may have"
    )

# --- Auth for the back office (the API has its own, see sellers/) ----------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if AIRLINE_ENV == "test":
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Back-office logins are throttled by django-axes (a kept library, not a hand-made
# counter): ADMIN_LOGIN_FAILURE_LIMIT wrong passwords for one username from one address
# lock that pair out for ADMIN_LOGIN_LOCKOUT_MINUTES, and ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT
# wrong passwords from one address, whatever the usernames, lock the address out
# (password spraying: airline/admin_login.py); every failure and lockout is
# logged and listed in the admin (Axes: access attempts). The API's keys and tokens
# never go through Django's authenticate(), so partners are not affected.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("ADMIN_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("ADMIN_LOGIN_LOCKOUT_MINUTES", 30))
ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT = env_int("ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT", 20)
AXES_HANDLER = "airline.admin_login.UserAndAddressLimits"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]  # admin_login reads both
AXES_RESET_ON_SUCCESS = True
AXES_IPWARE_PROXY_COUNT = 1 if env_bool("BEHIND_PROXY") else None  # the client's own address

SESSION_COOKIE_SECURE = AIRLINE_ENV == "production" and env_bool("HTTPS", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Behind the shipped proxy (deploy/nginx/airline.conf), which sets X-Forwarded-Proto and
# -Host itself, never passing on a client's, while gunicorn listens on loopback only:
# then, and only then, they are the proxy's word and may be believed.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_PROXY") else None
USE_X_FORWARDED_HOST = env_bool("BEHIND_PROXY")
BEHIND_PROXY = env_bool("BEHIND_PROXY")
# Production is served over HTTPS (HTTPS=1, the default there): browsers are told to keep
# to it for a year (HSTS, on every secure response). Plain-HTTP requests are not
# redirected: a redirect drops an API client's POST body; TLS is the proxy's job.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000) if SESSION_COOKIE_SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SESSION_COOKIE_SECURE
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SILENCED_SYSTEM_CHECKS = [
    "security.W008",  # no SSL redirect: said above why (the proxy redirects browsers)
    "security.W021",  # HSTS preload is the domain owner's call: SECURE_HSTS_PRELOAD=1
]

# --- Locale and time ------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve admin and Swagger UI assets from the app directories without collectstatic in
# development and tests; production runs collectstatic (make run does).
WHITENOISE_USE_FINDERS = AIRLINE_ENV != "production"
if WHITENOISE_USE_FINDERS:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns when it is missing

# --- Network ------------------------------------------------------------------------
# A /health call on a worker whose itinerary index is not warm starts warming it (gunicorn
# also starts it at worker boot, gunicorn.conf.py). The test suite turns this off so no
# warming thread outlives the test that started it.
NETWORK_WARM_ON_HEALTH_CHECK = env_bool("NETWORK_WARM_ON_HEALTH_CHECK", AIRLINE_ENV != "test")
# A worker whose index is behind the network version (a schedule load or a fleet edit,
# on any node) builds the new one in a background thread and keeps answering from the
# old one until it is swapped in. The test suite builds in the request instead: its data
# sits in the test's uncommitted transaction, which another thread's connection cannot
# see (tests that exercise the background build commit theirs).
NETWORK_REBUILD_IN_BACKGROUND = env_bool("NETWORK_REBUILD_IN_BACKGROUND", AIRLINE_ENV != "test")

# --- Fares (DESIGN.md §7) ----------------------------------------------------------------
# US taxes per passenger per one-way journey (airline/fares/taxes.py explains each key).
US_TAXES = {
    "US": {"description": "US Transportation Tax", "rate": "0.075"},
    "ZP": {"description": "US Flight Segment Tax", "per_segment": "5.30"},
    "AY": {
        "description": "September 11th Security Fee",
        "per_enplanement": "5.60",
        "max_per_one_way": "11.20",
    },
    "XF": {
        "description": "Passenger Facility Charge",
        "per_enplanement": "4.50",
        "max_enplanements_per_one_way": 2,
    },
}

# --- Offers (DESIGN.md §7) ---------------------------------------------------------------
OFFER_TTL_SECONDS = env_int("OFFER_TTL_SECONDS", 30 * 60)

# --- Orders (DESIGN.md §8) ---------------------------------------------------------------
# The airline's IATA accounting code: the first three digits of every ticket number.
AIRLINE_ACCOUNTING_CODE = env_str("AIRLINE_ACCOUNTING_CODE", "880")
# How long an unpaid hold lasts, and how close to departure no hold is allowed.
HOLD_HOURS = env_int("HOLD_HOURS", 24)
HOLD_CUTOFF_HOURS_BEFORE_DEPARTURE = env_int("HOLD_CUTOFF_HOURS_BEFORE_DEPARTURE", 24)
# How long airline credit from a cancellation or exchange can be spent (DESIGN.md §11).
CREDIT_VALIDITY_DAYS = env_int("CREDIT_VALIDITY_DAYS", 365)
# The payment gateway class (orders/money/payments.py). The test-mode gateway approves and
# declines the documented test cards and never moves money.
PAYMENT_GATEWAY = env_str("PAYMENT_GATEWAY", "orders.money.payments.TestGateway")
# DESIGN.md §11 names the gateways orders.payments.TestGateway and StripeGateway, and
# deployments are configured so: those names keep meaning the classes, wherever the
# module lives.
if PAYMENT_GATEWAY.startswith("orders.payments."):
    PAYMENT_GATEWAY = "orders.money.payments." + PAYMENT_GATEWAY.removeprefix("orders.payments.")
# The test gateway's time per charge, as a real gateway's (the crash test widens it).
TEST_GATEWAY_LATENCY_MS = env_int("TEST_GATEWAY_LATENCY_MS", 0)
# Stripe (orders.money.payments.StripeGateway; docs/operators/production.md): the secret
# API key, the signing secret of the webhook endpoint registered with Stripe, the API's
# address (a fake Stripe server in tests) and how long one call to it may take before the
# payment is answered ERR-6005 and left to the reconciler.
STRIPE_API_KEY = env_str("STRIPE_API_KEY", "")
STRIPE_WEBHOOK_SECRET = env_str("STRIPE_WEBHOOK_SECRET", "")
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "https://api.stripe.com")
STRIPE_TIMEOUT_SECONDS = env_int("STRIPE_TIMEOUT_SECONDS", 10)
# When Stripe takes the money (orders.money.payments.StripeGateway;
# docs/operators/production.md):
# "automatic" at the confirm call (one round trip fewer per booking; a booking that fails
# after it is refunded), "manual" at ticketing (a booking that fails is voided instead).
STRIPE_CAPTURE = env_str("STRIPE_CAPTURE", "automatic")
if STRIPE_CAPTURE not in ("automatic", "manual"):
    raise ImproperlyConfigured("STRIPE_CAPTURE must be automatic or manual")
if PAYMENT_GATEWAY.endswith("StripeGateway") and not (STRIPE_API_KEY and STRIPE_WEBHOOK_SECRET):
    raise ImproperlyConfigured(
        "PAYMENT_GATEWAY=orders.money.payments.StripeGateway needs STRIPE_API_KEY and "
        "STRIPE_WEBHOOK_SECRET"
    )
# How long a payment intent may stay PENDING before the reconciler settles it: longer than
# any request can take (gunicorn's timeout), so it never races a request still running.
PAYMENT_INTENT_GRACE_SECONDS = env_int("PAYMENT_INTENT_GRACE_SECONDS", 120)
# Stripe forgets an idempotency key after 24 hours: a refund of ours still PENDING for
# longer than this is sent again only once the provider's refunds of its charge show none
# under its reference (orders.money.refunds.refunds_retry); a younger one also when they
# cannot be listed, its key making a repeat give back once.
REFUND_KEY_SAFE_HOURS = env_int("REFUND_KEY_SAFE_HOURS", 23)
# The background worker (airline/worker.py, manage.py run_worker): how often each job runs.
WORKER_HOLD_SWEEP_SECONDS = env_int("WORKER_HOLD_SWEEP_SECONDS", 5)
WORKER_RECONCILE_SECONDS = env_int("WORKER_RECONCILE_SECONDS", 60)
# The books audit (orders.money.audit): once a day, over the orders changed in the last
# BOOKS_AUDIT_DAYS (0: every order; `manage.py audit_books` audits any range by hand).
WORKER_BOOKS_AUDIT_SECONDS = env_int("WORKER_BOOKS_AUDIT_SECONDS", 86400)
BOOKS_AUDIT_DAYS = env_int("BOOKS_AUDIT_DAYS", 2)
IDEMPOTENCY_TTL_HOURS = 24  # DESIGN.md §4
# A request still marked in progress after this long is taken to have died with its
# worker; the key can then be used again.
IDEMPOTENCY_LEASE_SECONDS = env_int("IDEMPOTENCY_LEASE_SECONDS", 120)

# How long a request waits for a row another transaction holds locked, on PostgreSQL:
# a flight-date leg it sells on, the seat configuration of a seat it sells, an order it
# changes (airline.sql.lock_wait_bounded). A schedule load, a back-office edit or a
# batch of airline changes holds those rows while it writes, maybe for many seconds; a
# request that waits longer than this is answered 503 ERR-9000 with Retry-After, and
# nothing of it is written. Other requests hold them for milliseconds. 0: no bound.
# gunicorn's timeout (gunicorn.conf.py) counts this wait among a request's longest.
LOCK_WAIT_TIMEOUT_MS = env_int("LOCK_WAIT_TIMEOUT_MS", 2000)

# How long a request may run before the service answers it 503 ERR-9000 with Retry-After
# itself (airline.api.middleware.RequestDeadlineMiddleware), in JSON or NDC: below
# gunicorn's `timeout` (gunicorn.conf.py, GUNICORN_TIMEOUT), whose kill answers the client
# nothing, or HTML. The 20 s between the two are for what the cut-short request still
# does on its way out (giving back a charge it made: two gateway calls). 0: no deadline.
REQUEST_DEADLINE_SECONDS = env_int(
    "REQUEST_DEADLINE_SECONDS", max(1, env_int("GUNICORN_TIMEOUT", 75) - 20)
)
# Tests only: every /json/ and /ndc/ request first waits this long in the database (a
# stalled worker, for the deadline's test against a real gunicorn).
TEST_REQUEST_STALL_SECONDS = (
    env_int("TEST_REQUEST_STALL_SECONDS", 0) if AIRLINE_ENV == "test" else 0
)

# --- Webhooks (DESIGN.md §10, webhooks/) -----------------------------------------------
# http://127.0.0.1 and other loopback URLs admitted, for tests and development only.
WEBHOOK_ALLOW_LOOPBACK = env_bool("WEBHOOK_ALLOW_LOOPBACK", False)
if WEBHOOK_ALLOW_LOOPBACK and AIRLINE_ENV == "production":
    raise ImproperlyConfigured("WEBHOOK_ALLOW_LOOPBACK must never be set in production")
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 5)  # per attempt
# A claimed delivery whose worker has not reported back after this long is sent again:
# longer than a timeout plus recording it.
WEBHOOK_LEASE_SECONDS = env_int("WEBHOOK_LEASE_SECONDS", 60)
WEBHOOK_RETRY_HOURS = env_int("WEBHOOK_RETRY_HOURS", 72)  # then FAILED; endpoint disabled
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", 10)  # doubled per attempt
WEBHOOK_THREADS = env_int("WEBHOOK_THREADS", 8)  # endpoints sent to at once per worker
WEBHOOK_BATCH_SIZE = env_int("WEBHOOK_BATCH_SIZE", 100)  # deliveries claimed per round
WEBHOOK_PER_ENDPOINT = env_int("WEBHOOK_PER_ENDPOINT", 4)  # of them, per endpoint
WEBHOOK_API_VERSION = "v1"  # the payload's apiVersion: versions are identical (§4)
WORKER_WEBHOOK_SECONDS = env_int("WORKER_WEBHOOK_SECONDS", 1)
# A schedule upload that writes more flight-date legs than this is loaded by the worker,
# with its progress in the back office (airline/network/jobs.py); smaller ones inline.
SCHEDULE_INLINE_LEGS = env_int("SCHEDULE_INLINE_LEGS", 5000)
WORKER_SCHEDULE_SECONDS = env_int("WORKER_SCHEDULE_SECONDS", 2)

# --- Monitoring (docs/operators/monitoring.md, airline/api/metrics.py) --------------
# GET /metrics is a 404 unless METRICS_ENABLED; then it answers only requests from
# METRICS_ALLOWED_CIDRS (the client address itself, never X-Forwarded-For) that send
# `Authorization: Bearer <METRICS_TOKEN>`. Enabled without a token, the process refuses
# to start: metrics name routes, volumes and failures, which are nobody else's business.
METRICS_ENABLED = env_bool("METRICS_ENABLED", False)
METRICS_TOKEN = env_str("METRICS_TOKEN")
if METRICS_ENABLED and not METRICS_TOKEN:
    raise ImproperlyConfigured("METRICS_ENABLED needs METRICS_TOKEN (the scraper's bearer token)")
METRICS_ALLOWED_CIDRS = env_list("METRICS_ALLOWED_CIDRS", ["127.0.0.1/32", "::1/128"])
for _cidr in METRICS_ALLOWED_CIDRS:
    try:
        ipaddress.ip_network(_cidr, strict=False)
    except ValueError as exc:
        raise ImproperlyConfigured(f"METRICS_ALLOWED_CIDRS: {exc}") from None
if METRICS_ENABLED:
    # gunicorn's workers each count in their own memory; prometheus_client's multiprocess
    # mode keeps each process's values in a file here and a scrape adds them up. It must
    # be set before prometheus_client is first imported, which no settings module does.
    METRICS_DIR = Path(env_str("PROMETHEUS_MULTIPROC_DIR") or str(VAR_DIR / "metrics"))
    METRICS_DIR.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)

# --- Tracing and error reports (airline/telemetry.py, docs/operators/monitoring.md) --
# OpenTelemetry traces of requests, SQL and outbound calls, exported over OTLP/HTTP to
# the collector the standard OTEL_* variables name: on when TRACING_ENABLED is, which by
# default it is as soon as an OTLP endpoint is set. OTEL_SDK_DISABLED=true turns it off.
TRACING_ENABLED = env_bool(
    "TRACING_ENABLED",
    bool(env_str("OTEL_EXPORTER_OTLP_ENDPOINT") or env_str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
) and not env_bool("OTEL_SDK_DISABLED", False)
TRACING_SERVICE_NAME = "airline-offer-order"  # unless OTEL_SERVICE_NAME names another
# Unhandled errors and ERROR log lines to Sentry, when a DSN is given.
SENTRY_DSN = env_str("SENTRY_DSN")
SENTRY_ENVIRONMENT = env_str("SENTRY_ENVIRONMENT", AIRLINE_ENV)

# --- API ------------------------------------------------------------------------------
API_VERSIONS = ("v0", "v1", "v2")  # identical; DESIGN.md §4
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024  # 1 MiB, SPEC.md §8

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["sellers.authentication.SellerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["sellers.permissions.IsSeller"],
    "DEFAULT_THROTTLE_CLASSES": ["sellers.throttling.ApiKeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["airline.api.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["airline.api.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "airline.api.renderers.AlwaysJSON",
    "DEFAULT_VERSIONING_CLASS": "rest_framework.versioning.URLPathVersioning",
    "ALLOWED_VERSIONS": API_VERSIONS,
    "EXCEPTION_HANDLER": "airline.api.exceptions.handle_exception",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # No OPTIONS self-description: it would answer outside the {data, error} envelope;
    # OPTIONS is 405 with `Allow` (airline/api/middleware.py), the OpenAPI document is
    # the description.
    "DEFAULT_METADATA_CLASS": None,
    # Money is served as JSON numbers (SPEC.md §1 MonetaryAmount.amount is a number): the
    # OpenAPI description of Decimal fields must say so.
    "COERCE_DECIMAL_TO_STRING": False,
    "UNAUTHENTICATED_USER": None,
    "UNAUTHENTICATED_TOKEN": None,
}

# --- NDC/XML (DESIGN.md §9) ----------------------------------------------------------
# IATA's 21.3 schemas are reference data kept beside the project, not in it
# (../shared/ndc-21.3/README.md). Requests are validated against them; read lazily, once
# per process. NDC_XSD_DIR is the name that README gives; NDC_SCHEMA_DIR wins.
NDC_SCHEMA_DIR = Path(
    env_str("NDC_SCHEMA_DIR")
    or env_str("NDC_XSD_DIR")
    or str(BASE_DIR.parent / "shared" / "ndc-21.3")
)

API_TOKEN_LIFETIME_SECONDS = env_int("API_TOKEN_LIFETIME_SECONDS", 3600)
API_KEY_DEFAULT_RATE_PER_MINUTE = 600
JWT_SIGNING_KEY = env_str("JWT_SIGNING_KEY", SECRET_KEY)
if AIRLINE_ENV == "production" and len(JWT_SIGNING_KEY) < MIN_SECRET_KEY_LENGTH:
    raise ImproperlyConfigured(
        f"JWT_SIGNING_KEY must be at least {MIN_SECRET_KEY_LENGTH} characters in production"
    )
SIMPLE_JWT = {
    "ALGORITHM": "HS256",
    "SIGNING_KEY": JWT_SIGNING_KEY,
    "ISSUER": f"{AIRLINE_DESIGNATOR.lower()}-offer-order",
    "LEEWAY": 0,
    "ACCESS_TOKEN_LIFETIME": timedelta(seconds=API_TOKEN_LIFETIME_SECONDS),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Offer and Order Service",
    "DESCRIPTION": (
        "Shop, price, book and service the airline's flights over JSON. Every `/json/...` "
        "response is wrapped as `{data, error}`. Authenticate with `POST /auth/token` "
        "(header `x-api-key`), then send `Authorization: Bearer <token>`. Versions v0, v1 "
        "and v2 are identical. Order events are pushed to the seller's registered webhooks "
        "(`/webhooks`): JSON `{id, type, createdAt, apiVersion, sequence, data}` signed with "
        '`Webhook-Signature: v1=<hex HMAC-SHA256(secret, Webhook-Timestamp + "." + '
        "body)>`, retried for 72 h, each order's events in sequence."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/json/v[0-9]+",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The default enum hook, then a `servers` entry naming the host that served it.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "airline.api.openapi.add_servers",
    ],
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
        }
    },
    "ENUM_NAME_OVERRIDES": {
        "PassengerTypeCode": ["ADT", "CHD", "INF"],
        # Our own operationalStatus of an order's journeys and segments
        # (orders/openapi/order_view.py).
        "OperationalStatus": [
            "CONFIRMED",
            "SCHEDULE_CHANGED",
            "AIRLINE_CANCELLED",
            "CANCELLED",
            "EXCHANGED",
        ],
        "CabinTypeCode": ["Y", "W", "C", "F"],
        "FeeType": [
            "Tax",
            "Surcharge",
            "ServiceFee",
            "PenaltyFee",
            "SeatFee",
            "BaggageFee",
            "PaymentFee",
        ],
        # The `type` the card beside an airline credit may carry
        # (orders.requests.serializers.CardIn).
        "CardPaymentType": ["CreditCard"],
    },
}

# --- Logging: one JSON line per request on stdout (airline.api.middleware) -------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "airline.api.logging.JsonFormatter"}},
    "handlers": {"stdout": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["stdout"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Our access line replaces Django's per-request warnings for 4xx.
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "ERROR"},
        "axes.apps": {"level": "WARNING"},  # its start-up banner, on every command
        # Stripe's SDK logs two INFO lines per call (request, response): a booking's own
        # lines (orders.money.payments) say what a payment did; these would only double them.
        "stripe": {"level": "WARNING"},
    },
}
