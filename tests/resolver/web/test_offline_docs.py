"""``/docs`` and the pages in headless Chromium against ``urnkit serve`` on SQLite and
PostgreSQL, under the pages' Content-Security-Policy: Swagger UI renders the API's operations
from files the server serves (no CDN, no other network), and no page breaks the policy (the
browser's console says so when one does)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from browser_support import chromium, console, screenshot
from resolver_support import Resolver, wait_for
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

# Every resource the page loaded, as the browser's Resource Timing lists them.
RESOURCES = "return performance.getEntriesByType('resource').map(entry => entry.name)"


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


def complaints(browser: Chrome) -> list[str]:
    """The console's warnings and errors but for the favicon Chromium asks for by itself."""
    return [
        message
        for message in console(browser)
        if not message.startswith("INFO") and "/favicon.ico" not in message
    ]


def test_docs_renders_the_operations_from_the_server_alone(
    browser: Chrome, resolver: Resolver
) -> None:
    console(browser)  # what earlier pages left
    browser.get(resolver.base_url + "/docs")
    operations = wait_for(
        lambda: browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path"),
        "Swagger UI's operations",
        seconds=20,
    )
    paths = {operation.text.replace("\u200b", "") for operation in operations}
    assert "/api/v1/urns/{urn}" in paths
    assert "/healthz" in paths
    screenshot(browser, f"docs-{resolver.database_url.split(':')[0]}")
    loaded = browser.execute_script(RESOURCES)
    assert any(url.endswith("/static/swagger-ui/swagger-ui-bundle.js") for url in loaded)
    assert any(url.endswith("/openapi.json") for url in loaded)
    assert [url for url in loaded if not url.startswith(resolver.base_url + "/")] == []
    # No CSP violation ("Refused to ..."), failed load or script error.
    assert complaints(browser) == []


def test_docs_tries_an_operation_within_the_policy(browser: Chrome, resolver: Resolver) -> None:
    console(browser)
    browser.get(resolver.base_url + "/docs")
    healthz = wait_for(
        lambda: browser.find_elements(By.CSS_SELECTOR, "[data-path='/healthz']"),
        "the /healthz operation",
        seconds=20,
    )
    healthz[0].click()
    browser.find_element(By.CSS_SELECTOR, ".opblock.is-open .try-out__btn").click()
    browser.find_element(By.CSS_SELECTOR, ".opblock.is-open .execute").click()
    answer = wait_for(
        lambda: browser.find_elements(By.CSS_SELECTOR, ".opblock.is-open .live-responses-table"),
        "the operation's response",
        seconds=20,
    )
    assert '"status": "ok"' in answer[0].text  # fetched from the server (connect-src 'self')
    assert complaints(browser) == []


@pytest.mark.parametrize("path", ["/", "/search?q=urn:nbn:fi:test-x", "/prefixes", "/statistics"])
def test_pages_are_styled_within_the_policy(browser: Chrome, resolver: Resolver, path: str) -> None:
    console(browser)
    browser.get(resolver.base_url + path)
    # The stylesheet, a file of its own, is applied: the page column is site.css's 56rem.
    width = browser.execute_script(
        "return getComputedStyle(document.querySelector('main')).maxWidth"
    )
    assert width == "896px"
    assert complaints(browser) == []


def test_a_problem_page_is_styled_within_the_policy(browser: Chrome, resolver: Resolver) -> None:
    console(browser)
    browser.get(resolver.base_url + "/urn:nbn:fi:test-never-registered")
    assert "404" in browser.title
    width = browser.execute_script(
        "return getComputedStyle(document.querySelector('main')).maxWidth"
    )
    assert width == "896px"
    # The page's own 404 is the one failed load the console may report.
    assert [message for message in complaints(browser) if "status of 404" not in message] == []


def test_an_inline_script_is_refused_on_a_page(browser: Chrome, resolver: Resolver) -> None:
    """The policy is in force, not only sent: a script put into a page does not run."""
    browser.get(resolver.base_url + "/")
    console(browser)
    ran = browser.execute_script(
        "const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
        "document.body.append(s); return window.ran === 1"
    )
    assert ran is False
    assert any("Content Security Policy" in message for message in console(browser))


def test_docs_assets_come_from_the_package(resolver: Resolver) -> None:
    with httpx.Client(base_url=resolver.base_url) as client:
        page = client.get("/docs")
        assert "cdn" not in page.text.lower()
        for asset in ("/static/swagger-ui/swagger-ui-bundle.js", "/static/docs.js"):
            answer = client.get(asset)
            assert answer.status_code == 200
            assert answer.headers["content-type"].startswith("text/javascript")
