"""Signing in to the staff pages as a browser would, over HTTP: the account made as
``urnkit admin create-user`` makes it (:class:`AccountService`, in this process: the command
itself is tried in ``test_staff.py``), the sign-in form's CSRF token read from the page, the
password changed at first sign-in. Example::

    with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
        client.get("/staff/tokens")

And a local web site (:func:`site`) whose answer a test changes, for the links it checks.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from resolver_support import LEAST_HASHING, Resolver

from urnkit.resolver.services.accounts import ADMIN, AccountService
from urnkit.resolver.store import Store

CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def csrf_of(page: httpx.Response) -> str:
    """The CSRF token of a page's forms."""
    match = CSRF.search(page.text)
    assert match is not None, page.text
    return match[1]


def create_user(resolver: Resolver, organisation: str, role: str) -> tuple[str, str]:
    """A new account's name and its one-time password, made as the operator's command does."""
    name = f"user-{secrets.token_hex(4)}"
    store = Store(resolver.database_url)
    try:
        _, password = AccountService(store, LEAST_HASHING).create(ADMIN, organisation, name, role)
    finally:
        store.close()
    return name, password


def sign_in(client: httpx.Client, name: str, password: str, **extra: str) -> httpx.Response:
    """Post the sign-in form, as the sign-in page gives it."""
    form = client.get("/staff/sign-in")
    fields = {"username": name, "password": password, "csrf": csrf_of(form), **extra}
    return client.post("/staff/sign-in", data=fields)


@contextmanager
def signed_in(
    resolver: Resolver, organisation: str, role: str
) -> Iterator[tuple[httpx.Client, str, str]]:
    """A client signed in as a new account of ``organisation``, its password changed; the
    account's name and password."""
    name, one_time = create_user(resolver, organisation, role)
    password = secrets.token_urlsafe(16)
    with httpx.Client(base_url=resolver.base_url, timeout=30) as client:
        assert sign_in(client, name, one_time).headers["location"] == "/staff/password"
        page = client.get("/staff/password")
        fields = {"current": one_time, "new": password, "csrf": csrf_of(page)}
        assert client.post("/staff/password", data=fields).status_code == 303
        yield client, name, password


class Site:
    """A local HTTP server answering every request with ``status`` (changed at will)."""

    def __init__(self) -> None:
        self.status = 404
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                self.send_response(site.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.do_HEAD()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"


@contextmanager
def site() -> Iterator[Site]:
    """A :class:`Site` serving in a thread until the block ends."""
    made = Site()
    thread = threading.Thread(target=made.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield made
    finally:
        made.server.shutdown()
        made.server.server_close()
