"""The staff pages as a person uses them: headless Chromium against ``urnkit serve`` on SQLite
and PostgreSQL, with the keyboard alone (Tab to a control, type, Enter; never a click):
signing in with the one-time password of ``urnkit admin create-user`` and changing it,
signing out, creating and revoking an API token, an admin creating an account and disabling
it while that account is signed in in another browser. Every staff page passes the
accessibility audit in each of the five languages, chosen by ``?lang=`` and by
``Accept-Language``, with no English message left untranslated. Screenshots are kept under
``test-artifacts/screenshots/`` (``staff-…``)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from urllib.parse import quote, urlsplit

import pytest
from browser_support import audit, chromium, screenshot, untranslated
from resolver_support import Resolver, wait_for
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from staff_support import create_user
from test_browser import PAGE_SECONDS

from urnkit.resolver.web.languages import LANGUAGES

STAFF_PAGES = {
    "sign-in": "/staff/sign-in",
    "password": "/staff/password",
    "home": "/staff/",
    "tokens": "/staff/tokens",
    "accounts": "/staff/accounts",
}
# How many Tab presses may lead to a control: past the skip link, the navigation, the
# language links and a table of tokens of the shared server.
MOST_TABS = 400


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def shot(browser: Chrome, request: pytest.FixtureRequest) -> Callable[[str], None]:
    def save(what: str) -> None:
        screenshot(browser, f"staff-{request.node.name}-{what}")

    return save


def active(browser: Chrome) -> WebElement:
    return browser.switch_to.active_element


def tab_to(browser: Chrome, reached: Callable[[WebElement], bool]) -> WebElement:
    """Press Tab until the focused element is the one ``reached`` looks for."""
    for _ in range(MOST_TABS):
        if reached(active(browser)):
            return active(browser)
        active(browser).send_keys(Keys.TAB)
    raise AssertionError(f"Tab never reached the control on {browser.current_url}")


def by_id(name: str) -> Callable[[WebElement], bool]:
    return lambda element: element.get_attribute("id") == name


def by_text(text: str) -> Callable[[WebElement], bool]:
    return lambda element: text in (element.text, element.get_attribute("aria-label"))


def type_into(browser: Chrome, field: str, text: str) -> WebElement:
    """Tab to the field with id ``field`` and type ``text`` into it."""
    element = tab_to(browser, by_id(field))
    element.send_keys(text)
    return element


def press(browser: Chrome, text: str) -> None:
    """Tab to the link or button ``text`` (its text or its accessible name), press Enter."""
    tab_to(browser, by_text(text)).send_keys(Keys.ENTER)
    wait_for(
        lambda: browser.execute_script("return document.readyState") == "complete",
        "the page loaded",
        seconds=PAGE_SECONDS,
    )


def start_on(browser: Chrome, url: str) -> None:
    """Open ``url`` and move the keyboard's focus past the skip link to the content."""
    browser.get(url)
    active(browser).send_keys(Keys.TAB)  # the skip link, the first stop
    active(browser).send_keys(Keys.ENTER)
    assert active(browser).get_attribute("id") == "content"


def sign_in_by_keyboard(browser: Chrome, base_url: str, name: str, password: str) -> None:
    """Sign in afresh: the module's browser forgets any earlier session first."""
    browser.get(base_url + "/staff/sign-in")
    browser.delete_all_cookies()
    start_on(browser, base_url + "/staff/sign-in")
    type_into(browser, "username", name)
    type_into(browser, "password", password).send_keys(Keys.ENTER)
    wait_for(
        lambda: "/staff/sign-in" not in browser.current_url,
        "a page past signing in",
        seconds=PAGE_SECONDS,
    )


def change_password_by_keyboard(browser: Chrome, current: str, new: str) -> None:
    assert urlsplit(browser.current_url).path == "/staff/password"
    active(browser).send_keys(Keys.TAB)  # past the skip link
    active(browser).send_keys(Keys.ENTER)
    type_into(browser, "current", current)
    type_into(browser, "new", new).send_keys(Keys.ENTER)
    wait_for(
        lambda: urlsplit(browser.current_url).path == "/staff/",
        "the staff home page",
        seconds=PAGE_SECONDS,
    )


def new_account(browser: Chrome, resolver: Resolver, organisation: str, role: str) -> str:
    """Sign in as a new account (``urnkit admin create-user``) and change its password."""
    name, one_time = create_user(resolver, organisation, role)
    sign_in_by_keyboard(browser, resolver.base_url, name, one_time)
    change_password_by_keyboard(browser, one_time, secrets.token_urlsafe(16))
    return name


def heading(browser: Chrome) -> str:
    return str(browser.find_element(By.TAG_NAME, "h1").text)


# --- signing in and out -------------------------------------------------------------------


def test_the_one_time_password_signs_in_to_its_change_by_keyboard(
    browser: Chrome, resolver: Resolver, shot: Callable[[str], None]
) -> None:
    name, one_time = create_user(resolver, "Test Library", "registrant")
    sign_in_by_keyboard(browser, resolver.base_url, name.upper(), one_time)
    # The one-time password leads to its change, and nowhere else until it is changed.
    assert browser.current_url == resolver.base_url + "/staff/password"
    shot("must-change")
    assert "one-time password" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    browser.get(resolver.base_url + "/staff/tokens")
    assert browser.current_url == resolver.base_url + "/staff/password"
    # Too short a new password: said beside the field, which the keyboard reaches again.
    active(browser).send_keys(Keys.TAB)
    active(browser).send_keys(Keys.ENTER)
    type_into(browser, "current", one_time)
    type_into(browser, "new", "short").send_keys(Keys.ENTER)
    wait_for(
        lambda: browser.find_elements(By.ID, "new-error"),
        "the new password's error",
        seconds=PAGE_SECONDS,
    )
    shot("too-short")
    field = browser.find_element(By.ID, "new")
    assert field.get_attribute("aria-describedby") == "new-error"
    assert field.get_attribute("aria-invalid") == "true"
    assert "12 to 256 characters" in browser.find_element(By.ID, "new-error").text
    assert audit(browser) == []
    password = secrets.token_urlsafe(16)
    change_password_by_keyboard(browser, one_time, password)
    shot("home")
    assert heading(browser) == "Staff pages"
    assert f"Signed in as {name}" in browser.find_element(By.CSS_SELECTOR, "nav").text


def test_signing_out_by_keyboard_ends_the_session(
    browser: Chrome, resolver: Resolver, shot: Callable[[str], None]
) -> None:
    new_account(browser, resolver, "Test Library", "registrant")
    start_on(browser, resolver.base_url + "/staff/")
    active(browser).send_keys(Keys.SHIFT, Keys.TAB)  # back from the content to the navigation
    press(browser, "Sign out")
    wait_for(
        lambda: "/staff/sign-in" in browser.current_url, "the sign-in page", seconds=PAGE_SECONDS
    )
    shot("signed-out")
    assert browser.get_cookie("urnkit_staff") is None
    browser.get(resolver.base_url + "/staff/tokens")
    assert "/staff/sign-in?next=%2Fstaff%2Ftokens" in browser.current_url


# --- tokens ---------------------------------------------------------------------------------


def test_a_token_is_created_and_revoked_by_keyboard(
    browser: Chrome, resolver: Resolver, shot: Callable[[str], None]
) -> None:
    new_account(browser, resolver, "Test Library", "registrant")
    start_on(browser, resolver.base_url + "/staff/")
    press(browser, "API tokens")
    assert browser.current_url == resolver.base_url + "/staff/tokens"
    label = f"browser {secrets.token_hex(4)}"
    type_into(browser, "label", label)
    press(browser, "Create token")
    shot("created")
    token = browser.find_element(By.CSS_SELECTOR, ".shown-once code").text
    urn = f"urn:nbn:fi:test-{secrets.token_hex(5)}"
    body = {"locations": [{"url": "https://example.org/t"}], "metadata": {}}
    with resolver.client(token) as api:
        assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    [row] = [row for row in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if label in row.text]
    token_id = row.find_element(By.TAG_NAME, "td").text
    press(browser, f"Revoke token {token_id}")
    wait_for(
        lambda: browser.current_url == resolver.base_url + "/staff/tokens",
        "the tokens page",
        seconds=PAGE_SECONDS,
    )
    shot("revoked")
    [row] = [r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if label in r.text]
    assert row.find_elements(By.TAG_NAME, "td")[-1].text == "revoked"
    with resolver.client(token) as api:
        assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 401


# --- accounts -------------------------------------------------------------------------------


def test_an_admin_creates_an_account_and_disabling_it_ends_its_open_session(
    browser: Chrome, resolver: Resolver, shot: Callable[[str], None]
) -> None:
    new_account(browser, resolver, "Test Library", "admin")
    start_on(browser, resolver.base_url + "/staff/")
    press(browser, "Accounts")
    assert browser.current_url == resolver.base_url + "/staff/accounts"
    name = f"made-{secrets.token_hex(4)}@library.example"
    type_into(browser, "username", name)
    press(browser, "Create account")
    shot("created")
    one_time = browser.find_element(By.CSS_SELECTOR, ".shown-once code").text
    assert name in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    with chromium() as other:  # a second browser, its own cookies: the new account's
        sign_in_by_keyboard(other, resolver.base_url, name, one_time)
        change_password_by_keyboard(other, one_time, secrets.token_urlsafe(16))
        other.get(resolver.base_url + "/staff/tokens")
        assert other.current_url == resolver.base_url + "/staff/tokens"
        browser.refresh()  # the admin's page, with the account listed
        start_on(browser, resolver.base_url + "/staff/accounts")
        press(browser, f"Disable {name}")
        wait_for(
            lambda: browser.current_url.endswith("/staff/accounts"),
            "the accounts page",
            seconds=PAGE_SECONDS,
        )
        shot("disabled")
        [row] = [r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if name in r.text]
        assert row.find_elements(By.TAG_NAME, "td")[-1].text.startswith("disabled")
        # Its open session is refused on its very next request.
        other.refresh()
        assert "/staff/sign-in?next=%2Fstaff%2Ftokens" in other.current_url
        screenshot(other, f"staff-{resolver.database_url.split(':')[0]}-disabled-refused")


# --- every page in every language ---------------------------------------------------------


def test_the_staff_pages_speak_the_language_the_browser_asks_for(
    browser: Chrome, resolver: Resolver
) -> None:
    # Chosen by ?lang=, every staff page in every language is checked by test_browser_pages.py
    # (widths, axe-core, English left on the page); here the language comes from the header
    # (RFC 9110 §12.5.4): the sign-in page in each, and in one language the pages that list
    # leaves out, the first change of password and an admin's page refused to a registrant.
    database = resolver.database_url.split(":")[0]
    left_in_english: dict[str, list[str]] = {}

    def visit(name: str, path: str, language: str) -> None:
        browser.execute_cdp_cmd("Network.enable", {})
        headers = {"headers": {"Accept-Language": f"{language}, en;q=0.1"}}
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", headers)
        browser.get(resolver.base_url + path)
        screenshot(browser, f"staff-{database}-accept-language-{language}-{name}")
        # WCAG 3.1.1: the page says the language it is in, the one chosen.
        assert browser.execute_script("return document.documentElement.lang") == language
        assert audit(browser) == [], f"{name} in {language}"
        assert browser.find_elements(By.TAG_NAME, "script") == []  # nothing needs JavaScript
        left_in_english[f"{name} in {language}"] = untranslated(browser, language)

    try:
        for language in LANGUAGES:
            browser.delete_all_cookies()
            visit("sign-in", STAFF_PAGES["sign-in"], language)
        name, one_time = create_user(resolver, "Test Library", "admin")
        sign_in_by_keyboard(browser, resolver.base_url, name, one_time)
        visit("password-first", STAFF_PAGES["password"], "de")
        change_password_by_keyboard(browser, one_time, secrets.token_urlsafe(16))
        visit("tokens", STAFF_PAGES["tokens"], "de")
        browser.delete_all_cookies()
        new_account(browser, resolver, "Test Library", "registrant")
        visit("forbidden", STAFF_PAGES["accounts"], "de")  # admins only
        assert heading(browser).startswith("403")
    finally:
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
    assert {page: found for page, found in left_in_english.items() if found} == {}


def test_the_check_for_english_left_in_a_page_finds_it(browser: Chrome) -> None:
    page = '<html lang="fi"><body><p>Change password</p><p lang="en">Sign out</p></body></html>'
    browser.get("data:text/html;charset=utf-8," + quote(page))
    found = untranslated(browser, "fi")
    assert "Change password" in found
    assert "Sign out" not in found  # marked as English
