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

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webelement import WebElement

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


def require_browser() -> None:
    """Skip the test when Chromium or its driver is missing, or fail in CI and under
    ``URNKIT_REQUIRE_BROWSER=1``."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver"
    if os.environ.get("URNKIT_REQUIRE_BROWSER") == "1" or os.environ.get("CI"):
        pytest.fail(reason + " (required in CI and under URNKIT_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


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
