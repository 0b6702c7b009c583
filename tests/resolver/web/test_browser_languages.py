"""The pages in each of their languages as a person sees them: headless Chromium against
``urnkit serve`` on SQLite and PostgreSQL, the accessibility audit the other browser tests run
on each page in each language, and a visitor switching language and staying in it. Screenshots
are kept under ``test-artifacts/screenshots/`` (``languages-…``)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest
from browser_support import audit, chromium, screenshot
from resolver_support import Resolver
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from urnkit.resolver.web.languages import LANGUAGES

# The landing page's URN is registered once per server by the ``landing`` fixture.
PAGES = {
    "home": "/",
    "search-urn": "/search?q=urn%3Anbn%3Afi%3Atest-1",
    "search-error": "/search?q=urn%3Anbn%3A",
    "search-title": "/search?q=Browsed&by=title",
    "prefixes": "/prefixes",
    "statistics": "/statistics",
    "not-found": "/urn:nbn:fi:test-not-registered",
    "landing": "/{landing}?s=I2C",
}


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


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_in_every_language_passes_the_accessibility_checks(
    browser: Chrome, resolver: Resolver, landing: str, language: str
) -> None:
    for name, path in PAGES.items():
        joiner = "&" if "?" in path else "?"
        browser.get(f"{resolver.base_url}{path.format(landing=landing)}{joiner}lang={language}")
        screenshot(browser, f"languages-{resolver.database_url.split(':')[0]}-{language}-{name}")
        assert browser.execute_script("return document.documentElement.lang") == language
        # WCAG 3.1.1 and 3.1.2: the page's language, and each language name's own.
        assert audit(browser) == [], f"{name} in {language}"
        if name == "statistics":  # its charts too: images named in the page's language
            charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart[role=img] title")
            assert charts, f"no chart in {language}"
            assert all(title.get_attribute("textContent") for title in charts)
        switch = browser.find_elements(By.CSS_SELECTOR, "nav.languages a")
        assert [a.get_attribute("hreflang") for a in switch] == list(LANGUAGES)
        assert [a.get_attribute("lang") for a in switch] == list(LANGUAGES)
        current = browser.find_element(By.CSS_SELECTOR, "nav.languages a[aria-current=page]")
        assert current.get_attribute("hreflang") == language
        # None needs JavaScript: a script element is at most a data block (HTML §4.12.1.1),
        # the landing page's schema.org JSON-LD.
        scripts = browser.find_elements(By.TAG_NAME, "script")
        assert {s.get_attribute("type") for s in scripts} <= {"application/ld+json"}


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
