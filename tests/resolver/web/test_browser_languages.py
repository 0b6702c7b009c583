"""A visitor switching language and staying in it, as a person does it: headless Chromium
against ``urnkit serve`` on SQLite and PostgreSQL. (Every page in every language, audited, is
test_browser_pages.py's.) Screenshots are kept under ``test-artifacts/screenshots/``
(``languages-…``)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest
from browser_support import chromium, screenshot
from resolver_support import Resolver
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def landing(api: httpx.Client) -> str:
    """A URN with a location, metadata and a history, for its landing page."""
    urn = f"urn:nbn:fi:test-{secrets.token_hex(5)}"
    body = {"locations": [{"url": "https://example.org/kieli"}], "metadata": {"title": "Kieli"}}
    assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    return urn


def test_a_visitor_switches_to_finnish_and_stays_in_it(
    browser: Chrome, resolver: Resolver, landing: str
) -> None:
    browser.get(resolver.base_url + "/")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    browser.find_element(By.CSS_SELECTOR, "nav.languages a[hreflang=fi]").click()
    assert browser.current_url == resolver.base_url + "/?lang=fi"
    assert browser.find_element(By.TAG_NAME, "button").text == "Haku"
    browser.find_element(By.LINK_TEXT, "Tilastot").click()
    assert browser.current_url == resolver.base_url + "/statistics?lang=fi"
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading == "Resolvoinnit etuliitteittäin päivittäin"
    browser.find_element(By.LINK_TEXT, "Haku").click()
    field = browser.find_element(By.ID, "q")
    field.send_keys(landing)
    browser.find_element(By.TAG_NAME, "button").click()
    assert "lang=fi" in browser.current_url  # the form sends the language on
    screenshot(browser, f"languages-{resolver.database_url.split(':')[0]}-switched-results")
    results = browser.find_element(By.ID, "results").text
    assert results.startswith("Tulokset URN-tunnukselle")
    assert landing in results
    browser.find_element(By.PARTIAL_LINK_TEXT, landing).click()
    assert browser.current_url.endswith(f"/{landing}?s=I2C&lang=fi")
    assert "Sijainnit" in [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    # And on to Swedish from the landing page: the same page, the other language.
    browser.find_element(By.CSS_SELECTOR, "nav.languages a[hreflang=sv]").click()
    assert browser.current_url.endswith(f"/{landing}?s=I2C&lang=sv")
    assert "Platser" in [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    screenshot(browser, f"languages-{resolver.database_url.split(':')[0]}-switched-swedish")
