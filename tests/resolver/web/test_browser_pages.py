"""Every own page, public and staff, on every screen and in every language, as headless
Chromium shows it against ``urnkit serve`` on SQLite and PostgreSQL: no page scrolls sideways
at 320, 390, 768 or 1280 CSS pixels (its ``scrollWidth`` against the viewport); axe-core
(from npm, tests/resolver/axe/) finds no violation of WCAG 2.2 A and AA or of its best
practices at a phone's and a desktop's width; and no English message of the catalogues reaches
a page in Finnish, Swedish, German or Czech (URNs, URLs and stored titles aside). One browser
visits every page of a language, once a language: each width is the same page laid out again.

The API documentation (``/docs``) is left out: it is Swagger UI's page, in English, and needs
its scripts (docs/languages.md says why)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser_support import at_width, axe, chromium, overflow, untranslated
from resolver_support import Resolver, deactivate, mark_links, register
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from staff_support import create_user

from urnkit.resolver.store import Store
from urnkit.resolver.web.languages import LANGUAGES

WIDTHS = (1280, 768, 390, 320)  # CSS pixels: a desktop, a tablet, a phone, a small phone
AUDITED = (1280, 390)  # the widths axe audits at
LD_JSON = "application/ld+json"  # a data block
LONG = "a-long-name-without-any-space-" * 4  # wraps or it overflows a phone


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def records(resolver: Resolver) -> dict[str, str]:
    """URNs of each kind of record page, made once a server: active with metadata and a long
    location URL, reserved, deactivated with a successor (410), every link broken."""
    tag = secrets.token_hex(4)
    urns = {
        kind: f"urn:nbn:fi:test-{tag}-{n}" for n, kind in enumerate(("active", "gone", "broken"))
    }
    urns["active"] += "-" + LONG.strip("-")
    first = f"https://example.org/{LONG}/{LONG}.pdf?download=true&session={LONG}"
    broken = f"https://broken.example/{tag}"
    metadata = {
        "title": "Kieli ja mieli",
        "creators": ["Virtanen, Anna", {"name": "Demo University", "kind": "organisation"}],
        "type": "doctoralThesis",
        "language": "fi",
        "date": "2026",
        "identifiers": ["urn:isbn:978-951-45-9693-3"],
    }
    with resolver.client(resolver.registrant_token) as api:
        locations: list[dict[str, Any]] = [
            {"url": first, "label": "Full text", "media_type": "application/pdf"},
            {"url": "https://mirror.example/kieli", "priority": 2},
        ]
        register(api, urns["active"], locations, metadata)
        register(api, urns["gone"], [{"url": "https://example.org/old"}], {"title": "Vanha"})
        deactivate(api, urns["gone"], [urns["active"]], "Replaced by the revised edition.")
        register(api, urns["broken"], [{"url": broken}], {"title": "Rikki"})
        reserved = api.post("/api/v1/prefixes/fi:test/urns?count=1")
        assert reserved.status_code == 201, reserved.text
        urns["reserved"] = reserved.json()["urn"]
    store = Store(resolver.database_url)
    try:
        mark_links(store, "broken", broken)
    finally:
        store.close()
    return urns


def public_pages(urns: dict[str, str]) -> dict[str, str]:
    """The public pages by name: a path each."""
    return {
        "home": "/",
        "search-urn": f"/search?q={urns['active']}",
        "search-title": "/search?q=Kieli&by=title",
        "search-error": "/search?q=urn%3Anbn%3A",
        "prefixes": "/prefixes",
        "statistics": "/statistics",
        "not-found": "/urn:nbn:fi:test-not-registered",
        "not-a-urn": "/urn:nbn:",
        **{f"record-{kind}": f"/{urn}?s=I2C" for kind, urn in urns.items()},
        "gone": f"/{urns['gone']}",
    }


def staff_pages(urns: dict[str, str]) -> dict[str, str]:
    """The staff pages by name, for an admin: a path each."""
    record = f"/staff/records/{urns['active']}"
    return {
        "staff-home": "/staff/",
        "staff-records": "/staff/records",
        "staff-register": "/staff/records/new",
        "staff-record": record,
        "staff-history": record + "/history",
        "staff-deactivate": record + "/deactivate?q=Kieli",
        "staff-upload": "/staff/upload",
        "staff-links": "/staff/links",
        "staff-tokens": "/staff/tokens",
        "staff-password": "/staff/password",
        "staff-accounts": "/staff/accounts",
        **{
            f"admin-{name}": f"/staff/admin/{name}"
            for name in (
                "",
                "broken-links",
                "organisations",
                "networks",
                "prefixes",
                "forwarding",
                "harvest",
            )
        },
    }


def at_path(path: str) -> Callable[[Chrome], bool]:
    """A wait's condition: the browser shows the page at ``path``."""
    return lambda browser: urlsplit(browser.current_url).path == path


def sign_in(browser: Chrome, resolver: Resolver) -> None:
    """Sign the browser in as a new admin of "Test Library", its password changed."""
    name, one_time = create_user(resolver, "Test Library", "admin")
    browser.delete_all_cookies()
    browser.get(resolver.base_url + "/staff/sign-in")
    for fields, then in (
        ({"username": name, "password": one_time}, "/staff/password"),
        ({"current": one_time, "new": secrets.token_urlsafe(16)}, "/staff/"),
    ):
        for field, value in fields.items():
            browser.find_element(By.ID, field).send_keys(value)
        browser.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
        WebDriverWait(browser, 30).until(at_path(then))


# The language links' hreflang, lang and aria-current, and the types of the page's scripts,
# read in one call: each WebDriver call is a round trip.
PAGE_FACTS = """
const links = [...document.querySelectorAll('nav.languages a')];
return {
  hreflang: links.map((a) => a.getAttribute('hreflang')),
  lang: links.map((a) => a.getAttribute('lang')),
  current: links.filter((a) => a.getAttribute('aria-current') === 'page')
    .map((a) => a.getAttribute('hreflang')),
  scripts: [...document.scripts].map((s) => s.getAttribute('type')),
  charts: [...document.querySelectorAll('svg.chart[role=img] title')]
    .map((t) => t.textContent),
};
"""


def language_links(facts: dict[str, list[str]], language: str) -> list[str]:
    """What is wrong with the page's choice of languages (``facts`` of :data:`PAGE_FACTS`): a
    link per language, each named in its own (WCAG 3.1.2), the page's own marked current."""
    found = []
    if facts["hreflang"] != list(LANGUAGES):
        found.append("the language links are not one per language, in order")
    if facts["lang"] != list(LANGUAGES):
        found.append("a language's name is not marked in its own language")
    if facts["current"] != [language]:
        found.append(f"the current language is not marked as {language}")
    return found


def check(browser: Chrome, url: str, language: str) -> list[str]:
    """What is wrong with the page at ``url`` in ``language`` on each screen."""
    browser.get(url)
    assert browser.execute_script("return document.documentElement.lang") == language
    found = [f"in English: {phrase}" for phrase in untranslated(browser, language)]
    facts = browser.execute_script(PAGE_FACTS)
    found += language_links(facts, language)
    # None needs JavaScript: a script element is at most a data block (HTML §4.12.1.1), the
    # landing page's schema.org JSON-LD.
    found += [f"a script of type {kind}" for kind in set(facts["scripts"]) - {LD_JSON}]
    # The statistics' charts are images named in the page's language.
    found += ["a chart without a name" for title in facts["charts"] if not title]
    for width in WIDTHS:
        at_width(browser, width)
        found += [f"at {width} px: {line}" for line in overflow(browser)]
        if width in AUDITED:
            found += [f"at {width} px: {line}" for line in axe(browser)]
    at_width(browser, WIDTHS[0])
    return found


# Every language on SQLite; on PostgreSQL, whose pages differ only in the data, one.
CASES = [("sqlite", language) for language in LANGUAGES] + [("postgresql", "cs")]


@pytest.mark.parametrize(("resolver", "language"), CASES, indirect=["resolver"])
def test_every_page_fits_every_screen_in_every_language_and_axe_finds_nothing(
    browser: Chrome, resolver: Resolver, records: dict[str, str], language: str
) -> None:
    # The staff's pages before signing in: the sign-in page; then an admin's.
    pages = {**public_pages(records), "staff-sign-in": "/staff/sign-in"}
    browser.delete_all_cookies()
    problems = {}
    for name, path in pages.items():
        joiner = "&" if "?" in path else "?"
        problems[name] = check(
            browser, f"{resolver.base_url}{path}{joiner}lang={language}", language
        )
    sign_in(browser, resolver)
    for name, path in staff_pages(records).items():
        joiner = "&" if "?" in path else "?"
        problems[name] = check(
            browser, f"{resolver.base_url}{path}{joiner}lang={language}", language
        )
    found = {name: lines for name, lines in problems.items() if lines}
    assert found == {}, "\n".join(
        f"{name}: {line}" for name, lines in found.items() for line in lines
    )


def test_the_width_check_finds_a_page_that_scrolls_sideways(browser: Chrome) -> None:
    at_width(browser, 390)
    viewport = "<meta name=viewport content='width=device-width'>"
    browser.get(f"data:text/html,{viewport}<p style='width:500px'>wide</p>")
    assert overflow(browser)[0].startswith("scrollWidth")
    browser.get(f"data:text/html,{viewport}<p>narrow</p>")
    assert overflow(browser) == []
    at_width(browser, WIDTHS[0])


def test_axe_finds_an_unlabelled_field(browser: Chrome) -> None:
    browser.get("data:text/html,<html lang=en><title>t</title><main><input></main></html>")
    assert any(line.startswith("label ") for line in axe(browser))


VISIBLE = "return [...document.querySelectorAll(arguments[0])].map((e) => e.checkVisibility())"


@pytest.mark.parametrize("resolver", ["sqlite"], indirect=True)
def test_a_record_prints_as_a_clean_sheet(
    browser: Chrome, resolver: Resolver, records: dict[str, str]
) -> None:
    browser.get(f"{resolver.base_url}/{records['gone']}?s=I2C")
    history = "details.history tbody tr"
    assert browser.execute_script(VISIBLE, history) == [False, False]  # folded on screen
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        # The menus, the language switcher and the footer are left off; the history unfolds.
        assert browser.execute_script(VISIBLE, "header nav, footer, .skip") == [False] * 4
        assert browser.execute_script(VISIBLE, history) == [True, True]
        assert browser.execute_script(VISIBLE, "h1, .answer") == [True, True]
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


@pytest.mark.parametrize("resolver", ["sqlite"], indirect=True)
def test_the_staff_menu_folds_on_a_phone_and_opens_without_a_script(
    browser: Chrome, resolver: Resolver
) -> None:
    sign_in(browser, resolver)
    groups, menu = "nav.menu .menu-group", "nav.menu .menu-open"
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".group-name")]
    assert len(names) == 3  # the organisation's records, administration, the account
    assert browser.execute_script(VISIBLE, groups) == [True] * 3  # a desktop: open
    assert browser.execute_script(VISIBLE, menu) == [False]
    try:
        at_width(browser, 390)
        assert browser.execute_script(VISIBLE, groups) == [False] * 3  # a phone: folded
        browser.find_element(By.CSS_SELECTOR, menu).click()
        assert browser.current_url.endswith("#menu")
        assert browser.execute_script(VISIBLE, groups) == [True] * 3
    finally:
        at_width(browser, WIDTHS[0])
