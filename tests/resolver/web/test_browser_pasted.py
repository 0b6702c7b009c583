"""A pasted URN as a reader meets it (issue 32, points 4 and 5): headless Chromium against
``urnkit serve`` on SQLite and PostgreSQL, the text given to the browser as copied from a PDF
(Chromium percent-encodes it as it sends it), typed into the search box, and a 404 page's
suggestion followed."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest
from browser_support import chromium, screenshot
from resolver_support import Resolver, register, wait_for
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

PAGE_SECONDS = 10  # the most a page may take to follow a redirect, a search or a click


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


def test_a_pasted_urn_reaches_its_record_in_chromium(
    browser: Chrome, resolver: Resolver, api: httpx.Client
) -> None:
    token = secrets.token_hex(5)
    urn = f"urn:nbn:fi:test-{token}-2019"
    register(api, urn, metadata={"title": f"Pasted {token}"})  # no location: its page
    record = f"{resolver.base_url}/{urn}"
    # From a PDF: a zero-width space, a soft hyphen, a typographic hyphen, the sentence's ".".
    pasted = f"\u200burn:nbn:fi:test-{token[:3]}\u00ad{token[3:]}\u20102019."
    browser.get(f"{resolver.base_url}/{pasted}")
    wait_for(
        lambda: browser.current_url == record,
        "the record from the pasted URN",
        seconds=PAGE_SECONDS,
    )
    assert f"Pasted {token}" in browser.find_element(By.TAG_NAME, "main").text
    screenshot(browser, f"pasted-{token}-record")
    # The search box, with what the copy brought around the URN.
    browser.get(resolver.base_url + "/")
    field = browser.find_element(By.ID, "q")
    field.send_keys(f" {urn}\u00a0) ")
    field.submit()
    wait_for(
        lambda: browser.current_url == record, "the record from the search", seconds=PAGE_SECONDS
    )
    # A URN one character off: the 404 page offers the record.
    browser.get(f"{resolver.base_url}/urn:nbn:fi:test-{token}-2018")
    assert browser.find_element(By.ID, "q").get_attribute("value") == (
        f"urn:nbn:fi:test-{token}-2018"
    )
    screenshot(browser, f"pasted-{token}-404")
    browser.find_element(By.LINK_TEXT, urn).click()
    wait_for(
        lambda: browser.current_url == record, "the record from the 404 page", seconds=PAGE_SECONDS
    )
