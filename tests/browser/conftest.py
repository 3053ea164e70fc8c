"""The back office in a real browser: Debian's Chromium driven through Selenium against
pytest-django's live server on the test database (README "Back office").

Without Chromium these tests skip, saying why; under CI (`CI` set, as `.ci/run` does)
they fail instead, so a CI machine that lost its browser cannot pass unseen. Every page
a test looks at is kept as a screenshot under var/screenshots/<test>/."""

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # said by the `chromium` fixture, where it matters
    webdriver = None

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "var" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
PASSWORD = "staff-browser-password"
WAIT_SECONDS = 10
# Headless Chromium on a machine without a display or GPU, and without the background
# services (updates, sync, safe browsing) whose connections this network refuses.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)
WINDOW = (1400, 1000)
SHOT_MAX_HEIGHT = 8000  # pixels: long lists are cut there


def _required() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _unavailable(reason: str) -> None:
    if _required():
        pytest.fail(f"{reason} (CI is set, so the browser tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> Iterator:
    """One Chromium for the session, on a fresh profile directory removed at the end."""
    if webdriver is None:
        _unavailable("selenium is not installed: pip install -r requirements/dev.txt")
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).is_file()]
    if missing:
        _unavailable(
            f"{' and '.join(missing)} not found: apt-get install chromium chromium-driver "
            "(or set CHROMIUM and CHROMEDRIVER)"
        )
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def gone(element) -> bool:
    """Whether `element`'s page has been replaced. Selenium's staleness_of knows only
    StaleElementReferenceException; while Chromium swaps the document, ChromeDriver may
    say the same as an unknown error instead (seen failing CI rehearsals)."""
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False


class Browser:
    """The shared Chromium, for one test: pages by path on the live server, a screenshot
    of each page looked at, and the few gestures the tests use."""

    def __init__(self, driver, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.shots = shots
        self.taken = 0

    def open(self, path: str, step: str) -> None:
        self.driver.get(self.base_url + path)
        self.shot(step)

    def shot(self, step: str) -> Path:
        """The whole page as a PNG (the window stretched to the page, up to a limit)."""
        self.taken += 1
        target = self.shots / f"{self.taken:02d}-{step}.png"
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(WINDOW[0], min(max(height, WINDOW[1]), SHOT_MAX_HEIGHT))
        try:
            assert self.driver.save_screenshot(str(target)), target
        finally:
            self.driver.set_window_size(*WINDOW)
        return target

    @property
    def html(self) -> str:
        return self.driver.page_source

    @property
    def path(self) -> str:
        return self.driver.current_url.removeprefix(self.base_url)

    def find(self, css: str):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        return self.find(css).text

    def submit(self, css: str, step: str) -> None:
        """Click a button that posts a form, and wait for the next page to load."""
        button = self.find(css)
        button.click()
        wait = WebDriverWait(self.driver, WAIT_SECONDS)
        wait.until(lambda _driver: gone(button))
        wait.until(lambda driver: driver.execute_script("return document.readyState") == "complete")
        self.shot(step)

    def fill(self, values: dict[str, str]) -> None:
        """Type into fields by name; a <select> takes the option with that visible text."""
        for name, value in values.items():
            field = self.find(f'[name="{name}"]')
            if field.tag_name == "select":
                Select(field).select_by_visible_text(value)
            else:
                field.clear()
                field.send_keys(value)

    def sign_in(self, username: str) -> None:
        self.open("/admin/login/?next=/admin/", "sign-in")
        self.fill({"username": username, "password": PASSWORD})
        self.submit('input[type="submit"]', "signed-in")
        assert self.path == "/admin/", self.text(".errornote")

    def sign_out(self) -> None:
        self.submit("#logout-form button", "signed-out")

    def run_action(self, action: str, rows: list[int], step: str) -> None:
        """Tick the rows with these primary keys on a changelist and run an action."""
        for pk in rows:
            self.find(f'input[name="_selected_action"][value="{pk}"]').click()
        self.fill_select("action", action)
        self.submit('button[name="index"]', step)

    def fill_select(self, name: str, value: str) -> None:
        Select(self.find(f'select[name="{name}"]')).select_by_value(value)

    def messages(self) -> list[str]:
        return [m.text for m in self.find_all("ul.messagelist li")]


@pytest.fixture
def browser(chromium, live_server, request, monkeypatch) -> Iterator[Browser]:
    """The shared Chromium, signed out, and this test's screenshot folder, emptied."""
    # The live server answers each of Chromium's keep-alive connections in a thread of
    # its own that outlives the test; a persistent database connection in such a thread
    # would keep a session open on the test database and block its teardown.
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    shots = SCREENSHOTS / re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    chromium.delete_all_cookies()
    yield Browser(chromium, live_server.url, shots)
    chromium.delete_all_cookies()


def staff_member(role: str | None, username: str | None = None):
    """A staff user in one of the roles the migration made (None: a superuser), whose
    password the browser types."""
    username = username or (role or "admin").lower().replace(" ", "-")
    user = get_user_model().objects.create_user(
        username, password=PASSWORD, is_staff=True, is_superuser=role is None
    )
    if role is not None:
        user.groups.add(Group.objects.get(name=role))
    return user
