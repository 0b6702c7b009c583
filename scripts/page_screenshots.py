"""Screenshots of every public and staff page at a phone's width (390 CSS pixels) and a
desktop's (1280), for docs/pages.md: a resolver on a new SQLite database in a temporary
directory, set up as an operator does (``urnkit db upgrade``, ``admin create-org``,
``delegate``, ``create-token``, ``create-user``), a few records through the API, and Debian's
headless Chromium (``/usr/bin/chromium`` through ``/usr/bin/chromedriver``, Selenium) showing
each page's first screen. The desktop's are taken at half scale and all in 64 colours, so the
PNGs stay small.

Run from the checkout, with the ``dev`` and ``server`` extras installed::

    .venv/bin/python scripts/page_screenshots.py          # writes docs/pages/*.png
    .venv/bin/python scripts/page_screenshots.py --out /tmp/shots
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[1]
SCREENS = {"phone": (390, 844, 1.0), "desktop": (1280, 900, 0.5)}  # width, height, scale
PUBLIC = {
    "home": "/",
    "search": "/search?q=Kieli&by=title",
    "record": "/{active}?s=I2C",
    "record-reserved": "/{reserved}?s=I2C",
    "record-gone": "/{gone}",
    "not-found": "/urn:nbn:fi:demo-not-registered",
    "not-a-urn": "/urn:nbn:",
    "prefixes": "/prefixes",
    "statistics": "/statistics",
}
STAFF = {
    "staff-sign-in": "/staff/sign-in",
    "staff-home": "/staff/",
    "staff-records": "/staff/records",
    "staff-register": "/staff/records/new",
    "staff-record": "/staff/records/{active}",
    "staff-history": "/staff/records/{active}/history",
    "staff-upload": "/staff/upload",
    "staff-links": "/staff/links",
    "staff-tokens": "/staff/tokens",
    "staff-accounts": "/staff/accounts",
    "admin-overview": "/staff/admin/",
    "admin-organisations": "/staff/admin/organisations",
    "admin-prefixes": "/staff/admin/prefixes",
    "admin-networks": "/staff/admin/networks",
    "admin-forwarding": "/staff/admin/forwarding",
    "admin-harvest": "/staff/admin/harvest",
}


def urnkit(*arguments: str) -> str:
    """Run ``urnkit`` as an operator does; its standard output."""
    command = [sys.executable, "-m", "urnkit", *arguments]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


@contextmanager
def resolver(directory: Path) -> Iterator[tuple[str, str, tuple[str, str]]]:
    """A set-up resolver on a new SQLite database: its URL, a registrant's token and an
    admin's name and one-time password; stopped on leaving ``with``."""
    url = ("--database-url", f"sqlite:///{directory / 'pages.db'}")
    urnkit("db", "upgrade", *url)
    urnkit("admin", "create-org", "Demo University Library", *url)
    urnkit("admin", "delegate", "Demo University Library", "fi:demo", *url)
    token = urnkit("admin", "create-token", "Demo University Library", *url).splitlines()[-1]
    admin = f"admin-{secrets.token_hex(3)}"
    one_time = urnkit(
        "admin", "create-user", "Demo University Library", admin, "--role", "admin", *url
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {**os.environ, "URNKIT_SITE_NAME": "URN:NBN resolver"}
    environment["URNKIT_SITE_OPERATOR"] = "Demo University Library"
    command = [sys.executable, "-m", "urnkit", "serve", *url, "--port", str(port)]
    server = subprocess.Popen(command, env=environment, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(base + "/prefixes", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, token, (admin, one_time.splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=10)


def records(base: str, token: str) -> dict[str, str]:
    """A few records to show: active with metadata, reserved, deactivated with a successor."""
    active, gone = "urn:nbn:fi:demo-2026-1001", "urn:nbn:fi:demo-2019-77"
    metadata = {
        "title": "Kieli ja mieli: monikielisyys suomalaisissa kouluissa",
        "creators": ["Virtanen, Anna"],
        "type": "doctoralThesis",
        "language": "fi",
        "date": "2026",
        "publisher": "Demo University",
    }
    locations = [
        {
            "url": "https://repository.example.edu/bitstreams/9f1c2d/virtanen-2026.pdf",
            "label": "Full text (PDF)",
            "media_type": "application/pdf",
        },
        {"url": "https://archive.example.org/theses/2026/1001", "priority": 2},
    ]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as api:
        api.put(f"/api/v1/urns/{active}", json={"locations": locations, "metadata": metadata})
        old = {"locations": [{"url": "https://old.example.edu/1"}], "metadata": {"title": "Kieli"}}
        api.put(f"/api/v1/urns/{gone}", json=old)
        api.post(f"/api/v1/urns/{gone}/deactivate", json={"successors": [active]})
        reserved = api.post("/api/v1/prefixes/fi:demo/urns?count=1").json()["urn"]
        api.get(f"/{active}")  # a resolution for the statistics
    return {"active": active, "gone": gone, "reserved": reserved}


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """Headless Chromium with a fresh profile."""
    with tempfile.TemporaryDirectory(prefix="urnkit-pages-") as profile:
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"):
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        browser = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        try:
            yield browser
        finally:
            browser.quit()


def at_url(url: str) -> Callable[[webdriver.Chrome], bool]:
    """A wait's condition: the browser shows ``url``."""
    return lambda browser: bool(browser.current_url == url)


def sign_in(browser: webdriver.Chrome, base: str, name: str, one_time: str) -> None:
    """Sign in as the admin and change the one-time password, as the first sign-in asks."""
    browser.get(base + "/staff/sign-in")
    for fields, then in (
        ({"username": name, "password": one_time}, "/staff/password"),
        ({"current": one_time, "new": secrets.token_urlsafe(16)}, "/staff/"),
    ):
        for field, value in fields.items():
            browser.find_element(By.ID, field).send_keys(value)
        browser.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
        WebDriverWait(browser, 30).until(at_url(base + then))


def shoot(browser: webdriver.Chrome, url: str, out: Path, name: str) -> None:
    """The first screen of ``url`` on each screen, as ``out/{name}-{width}.png``."""
    for width, height, scale in SCREENS.values():
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800}
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        browser.get(url)
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": clip})
        small(base64.b64decode(shot["data"])).save(out / f"{name}-{width}.png", optimize=True)


def small(png: bytes) -> Image.Image:
    """A screenshot in 64 colours, undithered: text and flat colours stay sharp."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "pages")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory, resolver(Path(directory)) as set_up:
        base, token, (admin, one_time) = set_up
        urns = records(base, token)
        with chromium() as browser:
            for name, path in PUBLIC.items():
                shoot(browser, base + path.format(**urns), out, name)
            sign_in(browser, base, admin, one_time)
            for name, path in STAFF.items():
                if name != "staff-sign-in":
                    shoot(browser, base + path.format(**urns), out, name)
            browser.delete_all_cookies()
            shoot(browser, base + STAFF["staff-sign-in"], out, "staff-sign-in")
    print(f"{2 * (len(PUBLIC) + len(STAFF))} screenshots in {out}")


if __name__ == "__main__":
    main()
