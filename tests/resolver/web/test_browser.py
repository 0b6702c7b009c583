"""The pages as a person uses them: headless Chromium against ``urnkit serve`` on SQLite and
PostgreSQL. Each test types and clicks (or only presses keys) as a visitor would, reads what the
page shows, and keeps a screenshot under ``test-artifacts/screenshots/``."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from browser_support import audit, chromium, screenshot
from resolver_support import Resolver, wait_for
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement

PAGE_SECONDS = 10  # the most a page may take to follow a click or a key


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    """One headless Chromium for the module (each test loads its own pages)."""
    with chromium() as driver:
        yield driver


@pytest.fixture
def shot(browser: Chrome, request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Save a screenshot named after the test (and its database) and ``what``."""

    def save(what: str) -> None:
        screenshot(browser, f"{request.node.name}-{what}")

    return save


def register(client: httpx.Client, urn: str, title: str, *urls: str) -> None:
    body = {"locations": [{"url": url} for url in urls], "metadata": {"title": title}}
    assert client.put(f"/api/v1/urns/{urn}", json=body).status_code == 201


def search(browser: Chrome, base_url: str, text: str, by_label: str | None = None) -> None:
    """Type ``text`` into the home page's search form, choose ``by_label``, press Search."""
    browser.get(base_url + "/")
    field = browser.find_element(By.ID, "q")
    field.clear()
    field.send_keys(text)
    if by_label is not None:
        browser.find_element(By.XPATH, f"//label[normalize-space()={by_label!r}]").click()
    browser.find_element(By.XPATH, "//button[normalize-space()='Search']").click()
    wait_for(lambda: "/search?" in browser.current_url, "the search results", seconds=PAGE_SECONDS)


def results(browser: Chrome) -> list[WebElement]:
    return browser.find_elements(By.CSS_SELECTOR, "main ol li a")


# --- searching ---------------------------------------------------------------------------------


def test_the_search_form_finds_a_urn_and_links_its_landing_page(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    token = secrets.token_hex(5)
    register(api, f"urn:nbn:fi:test-{token}", f"Browsed {token}", "https://example.org/b")
    # RFC 8141 §3.1: a differently cased "URN:NBN:" is the same URN.
    search(browser, resolver.base_url, f"URN:NBN:FI:TEST-{token}")
    shot("results")
    [link] = results(browser)
    assert link.text == f"urn:nbn:fi:test-{token}"
    # RFC 2483 §4.1 (I2C): the landing page of the URN's record.
    assert link.get_attribute("href") == (f"{resolver.base_url}/urn:nbn:fi:test-{token}?s=I2C")
    assert f"Browsed {token}" in link.find_element(By.XPATH, "..").text
    search(browser, resolver.base_url, f"urn:nbn:fi:test-{token}-none")
    assert "is registered here" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text


def test_a_search_result_leads_to_the_landing_page_and_on_to_the_predecessor(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    token = secrets.token_hex(5)
    old, new = f"urn:nbn:fi:test-{token}-old", f"urn:nbn:fi:test-{token}-new"
    first, second = "https://example.org/first", "https://example.org/second"
    register(api, old, f"Landing {token} (old)", "https://example.org/old")
    register(api, new, f"Landing {token}", first, second)
    deactivated = api.post(f"/api/v1/urns/{old}/deactivate", json={"successors": [new]})
    assert deactivated.status_code == 200
    search(browser, resolver.base_url, new)
    [link] = results(browser)
    link.click()
    wait_for(
        lambda: browser.current_url.endswith(f"/{new}?s=I2C"),
        f"the page of {new}",
        seconds=PAGE_SECONDS,
    )
    shot("landing")
    # RFC 8458 §4.5 and issue 5: every location, the metadata, status, history, predecessors.
    # Issue 32: the answer first: the title, the URN and its status, then the rest.
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Landing {token}"
    assert browser.find_element(By.CSS_SELECTOR, ".answer .urn").text == new
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2, h3")]
    assert {"Predecessors", "Metadata", "Locations", "History"} <= set(headings)
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "main a")]
    assert hrefs.index(first) < hrefs.index(second)  # best first
    assert f"Landing {token}" in browser.find_element(By.TAG_NAME, "main").text
    assert audit(browser) == []
    # RFC 5829's predecessor-version, followed by hand: the old URN's page says it is gone.
    browser.find_element(By.PARTIAL_LINK_TEXT, old).click()
    wait_for(
        lambda: old in browser.find_element(By.CSS_SELECTOR, ".answer").text,
        f"the page of {old}",
        seconds=PAGE_SECONDS,
    )
    shot("predecessor")
    assert "Successors" in [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2, h3")]


def test_the_search_form_explains_where_a_text_stops_being_a_urn(
    browser: Chrome, resolver: Resolver, shot: Any
) -> None:
    search(browser, resolver.base_url, "urn:nbn:fi:a b")
    shot("explanation")
    alert = browser.find_element(By.CSS_SELECTOR, "[role=alert]")
    # RFC 8141 §2.2: a space is not allowed in the NSS; the caret stands under it.
    explanation = alert.find_element(By.TAG_NAME, "pre").text.splitlines()
    assert explanation[-2:] == ["  urn:nbn:fi:a b", " " * (2 + 12) + "^"]  # position 12


def test_the_search_form_looks_up_records_by_url_and_by_title(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    token = secrets.token_hex(5)
    url = f"https://example.org/{token}/paper.pdf"
    register(api, f"urn:nbn:fi:test-{token}a", f"Ruska {token} in Lapland", url)
    register(api, f"urn:nbn:fi:test-{token}b", f"Kaamos {token}", url)
    register(api, f"urn:nbn:fi:test-{token}c", f"RUSKA {token} again")
    search(browser, resolver.base_url, url)  # detected as a URL: a reverse lookup
    shot("by-url")
    assert [a.text for a in results(browser)] == [
        f"urn:nbn:fi:test-{token}a",
        f"urn:nbn:fi:test-{token}b",
    ]
    search(browser, resolver.base_url, f"ruska {token}", by_label="Title")
    shot("by-title")
    assert [a.text for a in results(browser)] == [
        f"urn:nbn:fi:test-{token}a",
        f"urn:nbn:fi:test-{token}c",
    ]
    assert browser.find_element(By.ID, "by-title").is_selected()  # the form remembers


def test_the_search_form_works_with_the_keyboard_alone(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    token = secrets.token_hex(5)
    register(api, f"urn:nbn:fi:test-{token}", f"Keyboard {token}")
    browser.get(resolver.base_url + "/")

    def active() -> WebElement:
        return browser.switch_to.active_element

    def outline(element: WebElement) -> str:
        return str(element.value_of_css_property("outline-style"))

    active().send_keys(Keys.TAB)
    skip = active()
    assert skip.text == "Skip to content"  # the first stop, shown when focused
    assert skip.is_displayed()
    assert outline(skip) != "none"
    skip.send_keys(Keys.ENTER)
    assert active().get_attribute("id") == "content"
    for _ in range(10):
        if active().get_attribute("id") == "q":
            break
        active().send_keys(Keys.TAB)
    assert active().get_attribute("id") == "q", "the search field is not reached by Tab"
    active().send_keys(f"keyboard {token}")
    active().send_keys(Keys.TAB)
    assert active().get_attribute("id") == "by-auto"  # the group's checked radio button
    for _ in range(3):  # arrows move the choice within the group: URN, URL, title
        active().send_keys(Keys.ARROW_DOWN)
    assert active().get_attribute("id") == "by-title"
    assert active().is_selected()
    active().send_keys(Keys.TAB)
    button = active()
    assert button.text == "Search"
    assert outline(button) != "none"
    shot("focused-button")
    button.send_keys(Keys.ENTER)
    wait_for(lambda: "/search?" in browser.current_url, "the search results", seconds=PAGE_SECONDS)
    shot("results")
    assert [a.text for a in results(browser)] == [f"urn:nbn:fi:test-{token}"]


def test_an_isbn_two_records_carry_lists_both_and_leads_to_each(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    # RFC 9110 §15.4.1 (300 Multiple Choices): the URNs carrying one ISBN, as a page.
    token = secrets.token_hex(5)
    urns = [f"urn:nbn:fi:test-{token}-print", f"urn:nbn:fi:test-{token}-online"]
    for number, urn in enumerate(urns):
        metadata = {"title": f"Edition {number} {token}", "identifiers": ["urn:isbn:3-16-148410-X"]}
        body = {"locations": [{"url": f"https://example.org/{number}"}], "metadata": metadata}
        assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    browser.get(f"{resolver.base_url}/urn:isbn:978-3-16-148410-0")  # the ISBN-13 of the same
    shot("choices")
    assert browser.find_element(By.TAG_NAME, "h1").text == "urn:isbn:978-3-16-148410-0"
    rows = browser.find_elements(By.CSS_SELECTOR, "main tbody tr")
    listed = [row.find_element(By.CSS_SELECTOR, "th a").text for row in rows]
    assert listed[-2:] == urns  # oldest first
    assert audit(browser) == []
    rows[-1].find_element(By.LINK_TEXT, "its page").click()
    wait_for(
        lambda: browser.current_url.endswith(f"/{urns[1]}?s=I2C"),
        f"the page of {urns[1]}",
        seconds=PAGE_SECONDS,
    )
    assert browser.find_element(By.CSS_SELECTOR, ".answer .urn").text == urns[1]


# --- the register and the statistics -----------------------------------------------------------


def test_the_register_of_prefixes_shows_each_prefix_and_its_organisation(
    browser: Chrome, resolver: Resolver, shot: Any
) -> None:
    # RFC 8458 §4.3: the register of delegated sub-namespaces is online.
    browser.get(resolver.base_url + "/")
    browser.find_element(By.LINK_TEXT, "Prefixes").click()
    wait_for(
        lambda: browser.current_url.endswith("/prefixes"),
        "the register of prefixes",
        seconds=PAGE_SECONDS,
    )
    shot("register")
    rows = {
        row.find_element(By.TAG_NAME, "th").text: [
            td.text for td in row.find_elements(By.TAG_NAME, "td")
        ]
        for row in browser.find_elements(By.CSS_SELECTOR, "table tbody tr")
    }
    assert rows["fi:test"][:2] == ["Test Library", "sequential"]
    assert rows["fi:other"][:2] == ["Other Library", "random"]
    assert all(cells[2].replace(",", "").isdigit() for cells in rows.values())  # 1,234
    json_link = browser.find_element(By.LINK_TEXT, "JSON")
    assert json_link.get_attribute("href") == resolver.base_url + "/api/v1/prefixes"


def test_the_statistics_page_shows_the_resolutions_of_today(
    browser: Chrome, resolver: Resolver, api: httpx.Client, admin: httpx.Client, shot: Any
) -> None:
    token = secrets.token_hex(4)
    prefix = f"fi:test:b{token}"
    body = {"prefix": prefix, "organisation": "Test Library"}
    assert admin.post("/api/v1/prefixes", json=body).status_code == 201
    urn = f"urn:nbn:{prefix}-1"
    register(api, urn, "Counted", "https://example.org/counted")
    for _ in range(3):
        assert api.get(f"/{urn}").status_code == 302

    def count_shown() -> str | None:
        browser.get(resolver.base_url + "/statistics")
        for fold in browser.find_elements(By.CSS_SELECTOR, "details#resolutions > summary"):
            fold.click()  # the table sits folded under the chart
        for row in browser.find_elements(By.CSS_SELECTOR, "table tbody tr"):
            if row.find_element(By.TAG_NAME, "th").text == prefix:
                return str(row.find_elements(By.TAG_NAME, "td")[-1].text)
        return None

    # The counts reach the database in periodic flushes: the page may show 1 or 2 before 3.
    wait_for(lambda: count_shown() == "3", "the statistics to show 3", seconds=PAGE_SECONDS)
    shot("statistics")
    caption = browser.find_element(By.CSS_SELECTOR, "table caption").text
    assert caption == "Resolutions per prefix per day, the newest day first"
    # Two charts above the tables, each an image named by its title, drawn to the page's width
    charts = browser.find_elements(By.CSS_SELECTOR, "figure svg.chart[role=img]")
    assert [c.get_attribute("aria-labelledby") for c in charts] == [
        "resolutions-chart-title resolutions-chart-desc",
        "statuses-chart-title statuses-chart-desc",
    ]
    assert all(c.size["width"] > 300 for c in charts)
    legend = [
        t.get_attribute("textContent")
        for t in charts[0].find_elements(By.CSS_SELECTOR, "text.legend")
    ]
    assert prefix in legend


# --- accessibility ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/search?q=urn%3Anbn%3Afi%3Atest-1",
        "/search?q=urn%3Anbn%3A",
        "/search?q=Browsed&by=title",
        "/prefixes",
        "/statistics",
        "/urn:nbn:fi:test-not-registered",
    ],
)
def test_every_page_passes_the_automated_accessibility_checks(
    browser: Chrome, resolver: Resolver, shot: Any, path: str
) -> None:
    browser.get(resolver.base_url + path)
    shot("page")
    assert audit(browser) == []
    # No function needs JavaScript: the pages have no script at all.
    assert browser.find_elements(By.TAG_NAME, "script") == []


def test_the_accessibility_checks_find_what_is_wrong(browser: Chrome) -> None:
    page = (
        "<html><body><h1>A</h1><h3>C</h3><input id=x><a href=/></a><img src=/i>"
        "<table><tr><th>H</th></tr></table><p style='color:#999'>faint</p>"
        "<nav aria-label=Main></nav><nav aria-label=Main></nav><p lang=fi_FI>x</p></body></html>"
    )
    browser.get("data:text/html;charset=utf-8," + quote(page))
    found = "\n".join(audit(browser))
    for problem in [
        "no lang",
        'H3 "C" follows h1',
        "not one <main>",
        'unlabelled <input id="x">',
        "img without alt",
        "a link or button without a name",
        "table without caption",
        'th "H" without scope',
        "not a working skip link",
        'contrast 2.85 of "faint"',
        "<nav> landmarks without names of their own",
        'lang="fi_FI" is no language tag',
    ]:
        assert problem in found
