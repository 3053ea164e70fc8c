"""The API docs still work under their Content-Security-Policy (issue 28 item 7): Swagger
UI and Redoc render every operation in a real browser with scripts from this origin only,
and the policy blocked nothing they needed."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.conftest import WAIT_SECONDS

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Counts the policy's refusals on the page, read after it has rendered.
VIOLATIONS = "return window.__cspViolations || []"
LISTEN = (
    "window.__cspViolations = window.__cspViolations || [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def rendered(browser, css: str, least: int) -> list:
    WebDriverWait(browser.driver, WAIT_SECONDS).until(
        lambda driver: len(browser.find_all(css)) >= least
    )
    return browser.find_all(css)


def test_swagger_ui_renders_every_operation_under_the_policy(browser):
    browser.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LISTEN})
    browser.open("/json/v1/schema/swagger-ui", "swagger-ui")

    operations = rendered(browser, ".opblock", 20)
    browser.shot("rendered")

    assert any("createOrder" in op.get_attribute("id") for op in operations)
    assert browser.driver.execute_script(VIOLATIONS) == []


def test_redoc_renders_under_the_policy(browser):
    browser.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LISTEN})
    browser.open("/json/v1/schema/redoc", "redoc")

    rendered(browser, "[data-section-id^='operation/']", 20)
    browser.shot("rendered")

    # Only Redoc's "powered by" badge, an image on its makers' CDN, is refused: the docs
    # fetch nothing from a third party.
    refused = browser.driver.execute_script(VIOLATIONS)
    assert {v.split(" ", 1)[0] for v in refused} <= {"img-src"}, refused
    assert all("cdn.redoc.ly" in v for v in refused), refused
