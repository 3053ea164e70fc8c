"""Settings fail loudly where a default would be unsafe."""

import subprocess
import sys

import pytest

from tests.e2e.servers import REPO, base_env


def django_setup(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); "
            "from django.conf import settings; print(settings.DEBUG)",
        ],
        cwd=REPO,
        env=base_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    env = base_env(AIRLINE_ENV="production", AIRLINE_VAR_DIR=str(tmp_path))
    env.pop("SECRET_KEY", None)

    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode != 0
    assert "SECRET_KEY is required in production" in result.stderr


def test_debug_is_off_unless_asked(tmp_path):
    result = django_setup(
        AIRLINE_ENV="production", SECRET_KEY="x" * 50, AIRLINE_VAR_DIR=str(tmp_path)
    )

    assert result.stdout.strip() == "False", result.stderr


def test_an_unknown_environment_name_is_refused(tmp_path):
    result = django_setup(AIRLINE_ENV="staging", AIRLINE_VAR_DIR=str(tmp_path))

    assert "AIRLINE_ENV must be production, development or test" in result.stderr


def test_production_refuses_to_start_with_debug(tmp_path):
    result = django_setup(
        AIRLINE_ENV="production", DEBUG="1", SECRET_KEY="x" * 50, AIRLINE_VAR_DIR=str(tmp_path)
    )

    assert result.returncode != 0
    assert "DEBUG must never be set in production" in result.stderr


def test_debug_outside_production_still_starts(tmp_path):
    result = django_setup(AIRLINE_ENV="development", DEBUG="1", AIRLINE_VAR_DIR=str(tmp_path))

    assert result.stdout.strip() == "True", result.stderr


@pytest.mark.parametrize("name", ["SECRET_KEY", "JWT_SIGNING_KEY"])
def test_production_refuses_a_key_shorter_than_fifty_characters(tmp_path, name):
    env = {"SECRET_KEY": "x" * 50, name: "y" * 49}
    result = django_setup(AIRLINE_ENV="production", AIRLINE_VAR_DIR=str(tmp_path), **env)

    assert result.returncode != 0
    assert f"{name} must be at least 50 characters in production" in result.stderr
    assert "y" * 49 not in result.stderr  # the message never shows the key


def test_gunicorn_refuses_to_start_a_production_node_with_debug(tmp_path):
    """The same refusal stops the server itself, before it binds a port."""
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "airline.wsgi", "--bind", "127.0.0.1:0"],
        cwd=REPO,
        env=base_env(
            AIRLINE_ENV="production", DEBUG="1", SECRET_KEY="x" * 50, AIRLINE_VAR_DIR=str(tmp_path)
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode != 0
    assert "DEBUG must never be set in production" in result.stderr
