"""Headless Chromium for the browser tests: Debian's ``/usr/bin/chromium`` driven through
``/usr/bin/chromedriver`` by Selenium, which is given both paths so that Selenium Manager never
downloads a browser or a driver. Example::

    with chromium() as browser:
        browser.get("http://127.0.0.1:8000/")
        screenshot(browser, "home")

Without Chromium the tests skip, saying why; they fail instead in CI (``CI`` set, as CI
services do) or under ``URNKIT_REQUIRE_BROWSER=1``: ``.ci/run`` installs the packages.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webelement import WebElement

from urnkit.resolver.web.languages import LOCALE, SOURCE

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# This machine's network is closed: without these Chromium waits for services it cannot reach.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1024,900",
)


def _required(reason: str, variable: str) -> None:
    r"""Skip the test for ``reason``, or fail in CI and under ``variable``\ ``=1``."""
    if os.environ.get(variable) == "1" or os.environ.get("CI"):
        pytest.fail(f"{reason} (required in CI and under {variable}=1)")
    pytest.skip(reason)


def require_browser() -> None:
    """Skip the test when Chromium or its driver is missing, or fail in CI and under
    ``URNKIT_REQUIRE_BROWSER=1``."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver"
    _required(reason, "URNKIT_REQUIRE_BROWSER")


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """A headless Chromium with a fresh profile, quit on leaving ``with``; its console log
    is kept (:func:`console`)."""
    require_browser()
    with tempfile.TemporaryDirectory(prefix="urnkit-chromium-") as profile:
        options = Options()
        options.binary_location = str(CHROMIUM)
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console(browser)
        browser = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
        try:
            browser.set_page_load_timeout(30)
            yield browser
        finally:
            browser.quit()


def screenshot(browser: webdriver.Chrome, name: str) -> Path:
    """Save what the browser shows as ``test-artifacts/screenshots/<name>.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / (re.sub(r"[^A-Za-z0-9_.-]+", "-", name) + ".png")
    assert browser.save_screenshot(str(path)), f"no screenshot saved at {path}"
    return path


AUDIT = (Path(__file__).parent / "accessibility_audit.js").read_text()


def audit(browser: webdriver.Chrome) -> list[str]:
    """What ``accessibility_audit.js`` finds wrong with the page shown: lang, one h1, headings
    in order, landmarks, labels, alt texts, table captions and scopes, the skip link, contrast."""
    problems: list[str] = browser.execute_script(AUDIT)
    return problems


def console(browser: webdriver.Chrome) -> list[str]:
    """The browser's console messages since the last call (CSP violations, failed loads,
    script errors), each as ``LEVEL message``."""
    entries: list[dict[str, str]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    return [f"{entry['level']} {entry['message']}" for entry in entries]


def left(page: WebElement) -> Callable[[object], bool]:
    """A wait's condition: the browser has left the document ``page`` (its ``html`` element)
    belongs to. Chromium may say so with a stale-element error or with an inspector error
    ("Node with given id does not belong to the document"); both mean the page is gone."""

    def gone(_: object) -> bool:
        try:
            page.is_enabled()
        except WebDriverException:
            return True
        return False

    return gone


# axe-core (Deque's accessibility engine) from npm, at the version the lock file of
# tests/resolver/axe/ pins, installed there by ``npm ci`` on first use.
AXE_PACKAGE = Path(__file__).parent / "axe"
AXE_SCRIPT = AXE_PACKAGE / "node_modules" / "axe-core" / "axe.min.js"
# The rules axe runs: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
AXE_RUN = """
const done = arguments[arguments.length - 1];
if (!window.axe) { (0, eval)(arguments[0]); }
axe.run(document, {runOnly: {type: 'tag', values: arguments[1]}, resultTypes: ['violations']})
  .then((found) => done(found.violations.map((v) =>
    `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)))
  .catch((error) => done([`axe failed: ${error}`]));
"""


def axe_source() -> str:
    """axe-core's script, installed with ``npm ci`` (the lock file's version, checked against
    its integrity hash) when missing; one test process installs it while the others wait."""
    if not AXE_SCRIPT.exists():
        if shutil.which("npm") is None:
            _required("npm missing: apt-get install npm", "URNKIT_REQUIRE_BROWSER")
        with (AXE_PACKAGE / "package.json").open() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not AXE_SCRIPT.exists():
                command = ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
                subprocess.run(command, cwd=AXE_PACKAGE, check=True, capture_output=True)
    return AXE_SCRIPT.read_text()


def axe(browser: webdriver.Chrome) -> list[str]:
    """What axe-core finds wrong with the page shown (:data:`AXE_TAGS`), each violation as
    ``rule (impact): help at selectors``; empty when nothing is."""
    browser.set_script_timeout(60)
    # The page keeps axe once given it: its half megabyte goes to each page once.
    source = "" if browser.execute_script("return 'axe' in window") else axe_source()
    found: list[str] = browser.execute_async_script(AXE_RUN, source, AXE_TAGS)
    return found


def at_width(browser: webdriver.Chrome, width: int) -> None:
    """Show pages as a screen ``width`` CSS pixels wide does (a phone's below 800: touch, the
    mobile viewport), the page shown laid out again."""
    metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 800}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)


def overflow(browser: webdriver.Chrome) -> list[str]:
    """Whether the page shown scrolls sideways: its ``scrollWidth`` against the viewport, and
    if so the widest elements that stick out (tag, class and width), to say what to fix."""
    found: list[str] = browser.execute_script(
        """
        const page = document.documentElement, width = page.clientWidth;
        if (page.scrollWidth <= width) return [];
        const out = [...document.body.querySelectorAll('*')]
          .filter((e) => e.getBoundingClientRect().right > width + 0.5)
          .map((e) => `${e.tagName.toLowerCase()}.${e.className} `
                      + Math.round(e.getBoundingClientRect().right));
        return [`scrollWidth ${page.scrollWidth} > ${width}`, ...out.slice(-5)];
        """
    )
    return found


def english_phrases(language: str) -> list[str]:
    """The catalogue's English phrases the language writes otherwise: each message's words
    between its placeholders and tags, unless a translation of the language holds them too
    (German writes "Organisation" as English does)."""
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as source:
        catalogue = [message for message in read_po(source, locale=language) if message.id]
    translations = " ".join(
        " ".join([m.string] if isinstance(m.string, str) else m.string or ()) for m in catalogue
    )
    phrases = []
    for message in catalogue:
        english = message.id if isinstance(message.id, str) else message.id[0]
        for part in re.split(r"%\(\w+\)s|<[^>]+>", english):
            part = part.strip(" .,:;()")
            if len(part) >= 4 and re.search("[a-z]", part) and part not in translations:
                phrases.append(part)
    return phrases


# The text of the page in its own language: elements marked lang="en" (a problem's detail,
# which stays English), the language switcher's names and what is stored rather than said
# (code: URNs, prefixes, media types; .urn: a URN or URL written out; translate="no": a
# prefix in a list to choose from) are left out.
OWN_TEXT = """
const own = document.documentElement.lang, parts = [document.title];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const parent = walker.currentNode.parentElement, holder = parent.closest('[lang]');
  if (parent.closest('code, .urn, [translate=no]')) continue;
  if (holder === null || holder.lang === own) parts.push(walker.currentNode.textContent);
}
for (const e of document.querySelectorAll('[aria-label], option:not([translate=no])')) {
  const holder = e.closest('[lang]');
  if (holder === null || holder.lang === own) parts.push(e.getAttribute('aria-label') || e.text);
}
return parts.join(' ').replace(/\\s+/g, ' ');
"""


def untranslated(browser: webdriver.Chrome, language: str) -> list[str]:
    """The catalogue's English phrases (:func:`english_phrases`) on the page shown, which is
    in ``language``: none, when every message reached it translated."""
    if language == SOURCE:
        return []
    text = browser.execute_script(OWN_TEXT)
    return [
        phrase
        for phrase in english_phrases(language)
        if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)
    ]
