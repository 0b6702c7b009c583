"""The admins' staff pages as an admin uses them: headless Chromium against ``urnkit serve`` on
SQLite and PostgreSQL, signing in, typing into the forms and pressing their buttons (no page has
any script); each page passes the accessibility audit and leaves a screenshot under
``test-artifacts/screenshots/``."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from browser_support import audit, chromium, left, screenshot
from oai_support import PATTERN, Upstream
from resolver_support import Resolver
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from staff_support import create_user


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def shot(browser: Chrome, request: pytest.FixtureRequest) -> Callable[[str], None]:
    def save(what: str) -> None:
        screenshot(browser, f"{request.node.name}-{what}")

    return save


@pytest.fixture
def admin(browser: Chrome, resolver: Resolver) -> Chrome:
    """The browser signed in as a new admin of "Test Library", its password changed."""
    name, one_time = create_user(resolver, "Test Library", "admin")
    browser.delete_all_cookies()
    browser.get(resolver.base_url + "/staff/sign-in")
    fill(browser, username=name, password=one_time)
    press(browser, "Sign in")
    fill(browser, current=one_time, new=secrets.token_urlsafe(16))
    press(browser, "Change password")
    assert browser.current_url.endswith("/staff/")
    return browser


def fill(browser: Chrome, **fields: str) -> None:
    """Type each value into the field of that id (choose it, in a list)."""
    for name, value in fields.items():
        element = browser.find_element(By.ID, name)
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)


def press(browser: Chrome, label: str) -> None:
    """Press the button, and wait for the page the form's answer leads to."""
    click(browser, By.XPATH, f"//main//button[normalize-space()={label!r}]")


def click(browser: Chrome, by: str, what: str) -> None:
    """Click the element, and wait for the page that follows."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(by, what).click()
    wait = WebDriverWait(browser, 30)
    wait.until(left(page))
    wait.until(lambda _: browser.execute_script("return document.readyState") == "complete")


def checked(browser: Chrome, shot: Callable[[str], None], what: str) -> str:
    """The page's text, after its screenshot and the audit (and no script on it)."""
    shot(what)
    assert audit(browser) == []
    assert browser.find_elements(By.TAG_NAME, "script") == []
    return browser.find_element(By.TAG_NAME, "main").text


def _scalar(resolver: Resolver, query: str) -> Any:
    engine = sa.create_engine(resolver.database_url)
    try:
        with engine.connect() as connection:
            return connection.execute(sa.text(query)).scalar()
    finally:
        engine.dispose()


def test_an_admin_creates_an_organisation_and_delegates_it_a_prefix(
    admin: Chrome, resolver: Resolver, shot: Any
) -> None:
    name = f"Browser Library {secrets.token_hex(3)}"
    prefix = f"fi:b{secrets.token_hex(3)}"
    click(admin, By.LINK_TEXT, "Organisations")
    fill(admin, name=name)
    press(admin, "Create organisation")
    assert name in checked(admin, shot, "organisations")
    click(admin, By.XPATH, "//main//a[normalize-space()='Delegate a prefix']")
    fill(admin, organisation=name, prefix="fi-wrong", generator="random")
    press(admin, "Delegate prefix")
    # RFC 8458 §4.2: the refusal is beside the field, which says so to assistive technology
    error = admin.find_element(By.ID, "prefix-error")
    assert "not a URN:NBN prefix" in error.text
    assert admin.find_element(By.ID, "prefix").get_attribute("aria-invalid") == "true"
    checked(admin, shot, "refused")
    fill(admin, prefix=prefix)
    press(admin, "Delegate prefix")
    row = admin.find_element(By.XPATH, f"//tr[th/code[text()={prefix!r}]]").text
    assert name in row
    assert "random" in row
    checked(admin, shot, "delegated")


def test_an_admin_adds_and_removes_a_forwarding_row(
    admin: Chrome, resolver: Resolver, shot: Any
) -> None:
    click(admin, By.LINK_TEXT, "Forwarding")
    fill(admin, country="lu", url_template="https://lu.example/resolve/{urn}", note="test")
    press(admin, "Save")
    assert "https://lu.example/resolve/{urn}" in checked(admin, shot, "added")
    assert _scalar(resolver, "SELECT count(*) FROM forwarding WHERE country = 'lu'") == 1
    click(admin, By.XPATH, "//button[@aria-label='Remove the row of lu']")
    assert "lu.example" not in checked(admin, shot, "removed")
    assert _scalar(resolver, "SELECT count(*) FROM forwarding WHERE country = 'lu'") == 0


def test_an_admin_adds_a_source_harvests_it_now_and_sees_its_refusals(
    admin: Chrome, resolver: Resolver, upstream: Upstream, unique: str, shot: Any
) -> None:
    upstream.add(
        "oai:b:1",
        datetime(2024, 3, 1),
        identifier=[f"urn:nbn:fi:test-{unique}", "https://repo.example.org/items/7"],
    )
    upstream.add(
        "oai:b:2",
        datetime(2024, 3, 2),
        identifier=[f"urn:nbn:fi:test-{unique}b", "https://elsewhere.example/7"],
    )
    click(admin, By.LINK_TEXT, "Harvest sources")
    fill(
        admin,
        name=f"browser {unique}",
        organisation="Test Library",
        base_url=upstream.base_url,
        metadata_prefix="oai_dc",
        url_pattern=PATTERN,
    )
    press(admin, "Add source")
    assert "Not harvested yet." in checked(admin, shot, "added")
    press(admin, "Harvest now")
    text = checked(admin, shot, "harvested")
    assert re.search(r"2 created", text)
    refusals = admin.find_elements(By.CSS_SELECTOR, "ul.refusals li")
    assert len(refusals) == 1
    assert "https://elsewhere.example/7" in refusals[0].text


def test_the_overview_shows_the_databases_numbers(
    admin: Chrome, resolver: Resolver, shot: Any
) -> None:
    click(admin, By.LINK_TEXT, "Overview")
    checked(admin, shot, "overview")
    active = _scalar(resolver, "SELECT count(*) FROM records WHERE status = 'active'")
    shown = admin.find_element(By.ID, "status-active").text
    assert int(re.sub(r"\D", "", shown)) == active
