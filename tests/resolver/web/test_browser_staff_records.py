"""The registrants' staff pages as a person uses them: headless Chromium against ``urnkit serve`` on
SQLite and PostgreSQL, signed in through the forms, typing and pressing buttons and following
links with the keyboard: registering, editing, deactivating, reserving, the export, a record's
history, the upload's preview and commit, the broken links and their recheck. Each page is
audited for accessibility and kept as a screenshot under ``test-artifacts/screenshots/``. What
the pages did is read back through the API."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import audit, chromium, left, screenshot
from resolver_support import Resolver, mark_links
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from staff_support import create_user, site

from urnkit.resolver.store import Store
from urnkit.resolver.web.routes.staff.upload import LONG, STEPS

STAFF_COOKIE = "urnkit_staff"


@pytest.fixture(scope="module")
def browser(resolver: Resolver) -> Iterator[Chrome]:
    """One headless Chromium for the module, signed in as a new registrant of "Test Library"
    through the sign-in and password forms."""
    name, once = create_user(resolver, "Test Library", "registrant")
    with chromium() as driver:
        driver.get(resolver.base_url + "/staff/sign-in")
        type_into(driver, {"username": name, "password": once})
        press(driver, "Sign in")
        type_into(driver, {"current": once, "new": "a long enough staff password"})
        press(driver, "Change password")
        assert driver.current_url.endswith("/staff/"), driver.current_url
        yield driver


@pytest.fixture
def shot(browser: Chrome, request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Save a screenshot named after the test (and its database) and ``what``, after the
    accessibility audit of the page and with no script on it."""

    def save(what: str) -> None:
        screenshot(browser, f"{request.node.name}-{what}")
        assert audit(browser) == []
        assert browser.find_elements(By.TAG_NAME, "script") == []

    return save


def type_into(browser: Chrome, fields: dict[str, str]) -> None:
    for name, text in fields.items():
        field = browser.find_element(By.ID, name)
        field.clear()
        field.send_keys(text)


def press(browser: Chrome, label: str) -> None:
    """Press Enter on the button ``label`` (the keyboard alone) and wait for the page it
    leads to."""
    page = browser.find_element(By.TAG_NAME, "html")
    button = browser.find_element(By.XPATH, f"//button[normalize-space()={label!r}]")
    button.send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(left(page))


def enter(browser: Chrome, label: str) -> None:
    """Press Enter on the button labelled ``label`` (its aria-label): the keyboard alone."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.XPATH, f"//button[@aria-label={label!r}]").send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(left(page))


def follow(browser: Chrome, text: str) -> None:
    """Press Enter on the link ``text`` and wait for the page it leads to."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.LINK_TEXT, text).send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(left(page))


# A row's text as WebDriver gives an element's (its cells' rendered text, each line's runs of
# white space one space), every row in one call: a preview's table has 2,000.
ROWS = """
return [...document.querySelectorAll('tbody tr')].map((row) => row.innerText.split('\\n')
  .map((line) => line.replace(/\\s+/g, ' ').trim()).filter((line) => line).join('\\n'));
"""


def rows(browser: Chrome) -> list[str]:
    """The text of each row of the page's table bodies."""
    found: list[str] = browser.execute_script(ROWS)
    return found


def record(api: httpx.Client, urn: str) -> dict[str, Any]:
    found: dict[str, Any] = api.get(f"/api/v1/urns/{urn}").json()
    return found


def register(browser: Chrome, base_url: str, urn: str, title: str, url: str = "") -> None:
    browser.get(base_url + "/staff/records/new")
    type_into(browser, {"urn": urn, "title": title, "url": url})
    press(browser, "Register")


def test_a_typed_in_urn_is_registered(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-browser{unique}"
    browser.get(resolver.base_url + "/staff/records/new")
    shot("form")
    type_into(browser, {"urn": urn, "title": "Typed in", "url": "https://example.org/typed"})
    type_into(browser, {"creators": "Ann Author", "media_type": "text/html"})
    press(browser, "Register")
    assert browser.current_url == f"{resolver.base_url}/staff/records/{urn}"
    shot("registered")
    registered = record(api, urn)
    assert registered["metadata"] == {"title": "Typed in", "creators": ["Ann Author"]}
    assert registered["locations"][0]["media_type"] == "text/html"


def test_a_refusal_is_shown_beside_its_field(
    browser: Chrome, resolver: Resolver, shot: Any, unique: str
) -> None:
    register(browser, resolver.base_url, "urn:nbn:fi:test-", "No NSS")
    field = browser.find_element(By.ID, "urn")
    assert field.get_attribute("aria-invalid") == "true"
    assert browser.find_element(By.ID, "urn-error").text
    shot("refused")


def test_the_next_urn_of_a_prefix_is_generated(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    browser.get(resolver.base_url + "/staff/records/new")
    browser.find_element(By.ID, "how-generated").click()
    Select(browser.find_element(By.ID, "prefix")).select_by_visible_text("fi:test")
    type_into(browser, {"title": "Generated in the browser"})
    press(browser, "Register")
    urn = browser.current_url.removeprefix(resolver.base_url + "/staff/records/")
    assert urn.startswith("urn:nbn:fi:test-")
    assert record(api, urn)["metadata"] == {"title": "Generated in the browser"}
    shot("generated")


def test_metadata_is_edited_and_locations_added_moved_and_removed(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-browsed{unique}"
    first, second = "https://example.org/first", "https://example.org/second"
    register(browser, resolver.base_url, urn, "Before", first)
    type_into(browser, {"title": "After", "date": "2026"})
    press(browser, "Save metadata")
    assert record(api, urn)["metadata"] == {"title": "After", "date": "2026"}
    type_into(browser, {"url": second, "label": "Second copy"})
    press(browser, "Add location")
    shot("two-locations")
    enter(browser, f"Move {second} up")
    assert [x["url"] for x in record(api, urn)["locations"]] == [second, first]
    enter(browser, f"Remove {first}")
    assert [x["url"] for x in record(api, urn)["locations"]] == [second]
    shot("moved-and-removed")


def test_a_record_is_deactivated_naming_a_successor_found_by_title(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str
) -> None:
    old, new = f"urn:nbn:fi:test-first{unique}", f"urn:nbn:fi:test-second{unique}"
    register(browser, resolver.base_url, new, f"Second edition {unique}")
    register(browser, resolver.base_url, old, f"First edition {unique}")
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.LINK_TEXT, "Deactivate this URN, naming its successors").click()
    WebDriverWait(browser, 10).until(left(page))
    type_into(browser, {"q": f"second edition {unique}"})
    press(browser, "Find")
    found = browser.find_element(By.XPATH, f"//label[contains(., '{new}')]")
    shot("found")
    found.click()  # its label ticks the checkbox
    type_into(browser, {"note": "A second edition replaces it"})
    press(browser, "Deactivate")
    deactivated = record(api, old)
    assert (deactivated["status"], deactivated["successors"]) == ("deactivated", [new])
    shot("deactivated")


def test_three_urns_are_reserved_and_one_filled_in(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any
) -> None:
    browser.get(resolver.base_url + "/staff/records/new")
    type_into(browser, {"count": "3"})
    press(browser, "Reserve")
    links = browser.find_elements(By.CSS_SELECTOR, "main table a")[:3]
    shot("reserved")
    urns = [link.text for link in links]
    assert all(record(api, urn)["status"] == "reserved" for urn in urns)
    page = browser.find_element(By.TAG_NAME, "html")
    links[0].click()
    WebDriverWait(browser, 10).until(left(page))
    type_into(browser, {"url": "https://example.org/filled", "title": "Filled in"})
    shot("fill")
    press(browser, "Fill in and activate")
    filled = record(api, urns[0])
    assert (filled["status"], filled["metadata"]) == ("active", {"title": "Filled in"})
    assert record(api, urns[1])["status"] == "reserved"


def test_the_records_are_exported(
    browser: Chrome, resolver: Resolver, shot: Any, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-export{unique}"
    register(browser, resolver.base_url, urn, "Exported")
    browser.get(resolver.base_url + "/staff/records")
    shot("records")
    link = browser.find_element(By.LINK_TEXT, "NDJSON").get_attribute("href")
    assert link is not None
    cookie = browser.get_cookie(STAFF_COOKIE)
    assert cookie is not None
    download = httpx.get(link, cookies={STAFF_COOKIE: cookie["value"]}, timeout=30)
    assert download.headers["content-disposition"].startswith("attachment")
    exported = [json.loads(line)["urn"] for line in download.text.splitlines()]
    assert urn in exported


def test_the_history_shows_what_each_change_changed(
    browser: Chrome, resolver: Resolver, shot: Any, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-history{unique}"
    register(browser, resolver.base_url, urn, "First title")
    type_into(browser, {"title": "Second title"})
    press(browser, "Save metadata")
    follow(browser, "Its history")
    shot("history")
    assert browser.find_element(By.TAG_NAME, "h1").text == f"History of {urn}"
    assert "metadata title changed First title Second title" in rows(browser)
    changes = browser.find_elements(By.CSS_SELECTOR, "section h2")
    assert [change.text.split(": ")[-1] for change in changes] == ["patched", "created"]


def test_an_upload_is_previewed_then_written(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str, tmp_path: Path
) -> None:
    good, refused = f"urn:nbn:fi:test-upload{unique}", f"urn:nbn:fi:other-upload{unique}"
    upload = tmp_path / "records.csv"
    upload.write_text(f"urn,url\n{good},https://example.org/{unique}\n{refused},https://e.org/\n")
    browser.get(resolver.base_url + "/staff/upload")
    browser.find_element(By.ID, "file").send_keys(str(upload))
    press(browser, "Preview")
    shot("preview")
    previewed = rows(browser)
    assert previewed[0] == f"2 {good} created none"
    assert previewed[1].startswith(f"3 {refused} refused (not written)")
    assert api.get(f"/api/v1/urns/{good}").status_code == 404  # the preview wrote nothing
    press(browser, "Write the 1 accepted row")
    assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text == "1 row written."
    shot("written")
    assert [x["url"] for x in record(api, good)["locations"]] == [f"https://example.org/{unique}"]
    assert api.get(f"/api/v1/urns/{refused}").status_code == 404


# What the browser shows of the stream is the database's no more than the page is: on SQLite;
# test_staff_pages.py reads the stream itself on both databases.
@pytest.mark.parametrize("resolver", ["sqlite"], indirect=True)
def test_a_long_uploads_preview_shows_its_progress_then_the_preview(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str, tmp_path: Path
) -> None:
    urns = [f"urn:nbn:fi:test-long{unique}-{n}" for n in range(LONG)]
    upload = tmp_path / "records.csv"
    upload.write_text("urn\n" + "\n".join(urns) + "\n")
    browser.get(resolver.base_url + "/staff/upload")
    browser.find_element(By.ID, "file").send_keys(str(upload))
    press(browser, "Preview")
    WebDriverWait(browser, 60).until(lambda _: browser.find_elements(By.TAG_NAME, "caption"))
    shot("preview")
    steps = browser.find_elements(By.CSS_SELECTOR, "[role=status] .progress-step")
    assert len(steps) == STEPS + 1  # the first row and each twentieth of the file
    assert [step.is_displayed() for step in steps] == [False] * STEPS + [True]  # the latest
    assert steps[-1].text == f"{LONG:,} of {LONG:,} rows checked"
    bar = steps[-1].find_element(By.TAG_NAME, "progress")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == (str(LONG), str(LONG))
    previewed = rows(browser)
    assert len(previewed) == LONG
    assert previewed[0] == f"2 {urns[0]} created none"
    assert api.get(f"/api/v1/urns/{urns[0]}").status_code == 404  # the preview wrote nothing


def test_a_broken_link_is_listed_and_rechecked(
    browser: Chrome, resolver: Resolver, server_database: Store, shot: Any, unique: str
) -> None:
    with site() as answering:
        url = answering.url + unique
        urn = f"urn:nbn:fi:test-link{unique}"
        register(browser, resolver.base_url, urn, "Linked", url)
        mark_links(server_database, "broken", url)
        browser.get(resolver.base_url + "/staff/links")
        assert any(row.startswith(f"{url} {urn} broken") for row in rows(browser))
        shot("broken")
        enter(browser, f"Recheck {url} now")  # the site answers 404
        checked = browser.find_element(By.CSS_SELECTOR, "[role=status]").text
        assert checked.startswith(f"Checked now\n{url}: broken (HTTP 404)")
        answering.status = 200
        enter(browser, f"Recheck {url} now")
        shot("working")
        checked = browser.find_element(By.CSS_SELECTOR, "[role=status]").text
        assert checked.startswith(f"Checked now\n{url}: working (HTTP 200)")
        assert not any(row.startswith(url) for row in rows(browser))


def test_every_registrant_page_passes_the_accessibility_checks_in_every_language(
    browser: Chrome, resolver: Resolver, api: httpx.Client, shot: Any, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-audited{unique}"
    register(browser, resolver.base_url, urn, "Audited", "https://example.org/audited")
    record_page = f"/staff/records/{urn}"
    paths = ["/staff/records", "/staff/records/new", record_page, record_page + "/history"]
    paths += [record_page + "/deactivate?q=Audited", "/staff/upload", "/staff/links"]
    for language in ("en", "fi", "sv", "de", "cs"):
        for path in paths:
            browser.get(f"{resolver.base_url}{path}{'&' if '?' in path else '?'}lang={language}")
            assert browser.execute_script("return document.documentElement.lang") == language
            shot(f"{language}-{path.rsplit('/', 1)[-1].split('?')[0] or 'records'}")
