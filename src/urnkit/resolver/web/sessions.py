"""The staff pages' sessions and their protection against cross-site request forgery.

A session is a cookie signed with itsdangerous (the signer Flask's and Starlette's own session
cookies use: a timestamped HMAC, checked in constant time), holding only the account's id and
its credential epoch; the signature's timestamp is the issue time, against which the expiry
(``staff_session_hours``) is checked. Nothing else is kept in any process: every staff request
reads the account again (:meth:`~urnkit.resolver.services.accounts.AccountService.session_account`),
so a disabled account or a changed password ends its sessions at once, on every server. The key
is the ``staff_secret`` setting, else one made once and kept in the database.

The cookie is ``HttpOnly``, ``SameSite=Lax``, ``Path=/staff``, and ``Secure`` when the request
came over https (after the trusted proxies' word: :mod:`~urnkit.resolver.web.proxies`).

Every form carries a CSRF token (templates/staff/forms.html's ``csrf_field``): an HMAC of the
session cookie, or before sign-in of a random pre-session cookie, so that a page of another
site, which can neither read these cookies nor the page, cannot post one (checked for every
POST under ``/staff/``: :func:`~urnkit.resolver.web.deps.csrf_checked`).

>>> sessions = Sessions("key", timedelta(hours=1))
>>> sessions.read(sessions.issue(7, 2))
(7, 2)
>>> sessions.read("forged.value") is None
True
>>> local_path("//evil.example/staff"), local_path("/staff/tokens?lang=fi")
('/staff/', '/staff/tokens?lang=fi')
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from itsdangerous import BadSignature, URLSafeTimedSerializer

from urnkit.resolver.domain import ResolverError, SignInLimits
from urnkit.resolver.settings import Settings
from urnkit.resolver.web.languages import page_language, with_language
from urnkit.resolver.web.templating import html_page

STAFF = "/staff"
HOME = "/staff/"
SIGN_IN = "/staff/sign-in"
PASSWORD = "/staff/password"
SESSION_COOKIE = "urnkit_staff"
PRE_SESSION_COOKIE = "urnkit_staff_pre"
CSRF_FIELD = "csrf"


class CSRFError(ResolverError):
    """A form posted without the CSRF token of the session it came from."""

    status = 403
    title = "Forbidden"


class StaffRedirect(Exception):  # noqa: N818 - an answer, not an error
    """Raised by a staff dependency to answer with a redirect (``303 See Other``)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


def redirected(request: Request, answer: StaffRedirect) -> Response:
    """The exception handler of :class:`StaffRedirect`."""
    return see_other(request, answer.location)


def see_other(request: Request, location: str) -> RedirectResponse:
    """``303 See Other`` to ``location``, a staff page, in the language ``request`` chose by
    ``?lang=`` (if it chose one, and ``location`` chooses none).

    >>> from starlette.requests import Request as Plain
    >>> asked = Plain({"type": "http", "query_string": b"q=a&lang=fi", "headers": []})
    >>> see_other(asked, "/staff/tokens").headers["location"]
    '/staff/tokens?lang=fi'
    """
    language = page_language(request, strict=False)
    return RedirectResponse(with_language(location, language.tag if language.chosen else None), 303)


@dataclass(frozen=True, slots=True)
class StaffPolicy:
    """The staff pages' settings: the configured key, a session's lifetime, sign-in limits."""

    secret: str = ""
    lifetime: timedelta = timedelta(hours=12)
    limits: SignInLimits = field(default_factory=SignInLimits)

    @classmethod
    def from_settings(cls, settings: Settings) -> StaffPolicy:
        """The policy of the ``staff_*`` settings."""
        minutes = timedelta(minutes=settings.staff_lockout_minutes)
        return cls(
            settings.staff_secret,
            timedelta(hours=settings.staff_session_hours),
            SignInLimits(settings.staff_sign_in_attempts, minutes, minutes),
        )


class Sessions:
    """Signed session cookies and the CSRF tokens bound to them, under one key."""

    def __init__(self, secret: str, lifetime: timedelta) -> None:
        self._signer = URLSafeTimedSerializer(secret, salt="urnkit.staff.session")
        self._key = hashlib.sha256(b"urnkit.staff.csrf\0" + secret.encode()).digest()
        self.lifetime = lifetime

    def issue(self, account_id: int, epoch: int) -> str:
        """A session cookie's value for the account at its credential ``epoch``."""
        return self._signer.dumps([account_id, epoch])

    def read(self, value: str) -> tuple[int, int] | None:
        """The account id and epoch of a session cookie signed here and not expired."""
        try:
            content: Any = self._signer.loads(value, max_age=int(self.lifetime.total_seconds()))
        except BadSignature:  # its subclass SignatureExpired too
            return None
        if (
            isinstance(content, list)
            and len(content) == 2
            and all(type(part) is int for part in content)
        ):
            return content[0], content[1]
        return None

    def csrf_token(self, basis: str) -> str:
        """The CSRF token of the session (or pre-session) cookie value ``basis``."""
        return hmac.new(self._key, basis.encode(), hashlib.sha256).hexdigest()

    def csrf_valid(self, basis: str | None, token: str | None) -> bool:
        """Whether ``token`` is the CSRF token of ``basis`` (compared in constant time)."""
        if not basis or not token:
            return False
        return hmac.compare_digest(self.csrf_token(basis), token)


def sessions_of(request: Request, secret: Callable[[str], str]) -> Sessions:
    """The application's :class:`Sessions`, made on first use with the key ``secret`` gives
    for the configured one (:meth:`AccountService.session_secret`: it, or the database's)."""
    made: Sessions | None = getattr(request.app.state, "staff_sessions", None)
    if made is None:
        policy = staff_policy(request)
        made = Sessions(secret(policy.secret), policy.lifetime)
        request.app.state.staff_sessions = made
    return made


def staff_policy(request: Request) -> StaffPolicy:
    """The application's :class:`StaffPolicy` (``create_app`` keeps it in its state)."""
    policy: StaffPolicy = request.app.state.staff
    return policy


def csrf_basis(request: Request) -> str | None:
    """What the request's CSRF token is bound to: its session cookie, else its pre-session."""
    return request.cookies.get(SESSION_COOKIE) or request.cookies.get(PRE_SESSION_COOKIE)


def local_path(target: str | None) -> str:
    """``target`` if it is a path of the staff pages (no scheme, no host, no ``//`` or ``\\``
    that a browser would take for another host), else the staff home: no open redirect.

    >>> local_path("https://evil.example/"), local_path("/\\\\evil.example"), local_path(None)
    ('/staff/', '/staff/', '/staff/')
    """
    if not target or not target.startswith(HOME) or "\\" in target or target.startswith("//"):
        return HOME
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 0x21 or ord(c) == 0x7F for c in target):
        return HOME
    return target


def sign_in_location(request: Request) -> str:
    """The sign-in page, with the path of ``request`` (as sent: a URN percent-encoded whole stays
    so) to return to."""
    raw_path: bytes = request.scope.get("raw_path") or request.url.path.encode()
    path = raw_path.decode("latin-1") + (f"?{request.url.query}" if request.url.query else "")
    return f"{SIGN_IN}?{urlencode({'next': path})}"


def set_cookie(
    request: Request, response: Response, name: str, value: str, age: int | None
) -> None:
    """Set a staff cookie: ``HttpOnly``, ``SameSite=Lax``, ``Path=/staff``, ``Secure`` over
    https; kept ``age`` seconds, or for the browser's session."""
    response.set_cookie(
        name,
        value,
        max_age=age,
        path=STAFF,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )


def start_session(
    request: Request, response: Response, sessions: Sessions, account_id: int, epoch: int
) -> None:
    """Sign the account in on ``response``: its session cookie; the pre-session's is dropped."""
    age = int(sessions.lifetime.total_seconds())
    set_cookie(request, response, SESSION_COOKIE, sessions.issue(account_id, epoch), age)
    response.delete_cookie(PRE_SESSION_COOKIE, path=STAFF)


def end_session(response: Response) -> None:
    """Sign out on ``response``: the session cookie is dropped."""
    response.delete_cookie(SESSION_COOKIE, path=STAFF, httponly=True, samesite="lax")


def staff_page(
    request: Request,
    sessions: Sessions,
    template: str,
    status: int = 200,
    error: ResolverError | None = None,
    **context: Any,
) -> HTMLResponse:
    """A staff page: ``template`` with the CSRF token its forms carry (a pre-session cookie is
    set if the request had none to bind it to) and, if a service refused, ``errors``: the
    refusal's detail by the form field it concerns (its ``field``, else ``form``)."""
    basis = csrf_basis(request)
    fresh = None
    if basis is None:
        basis = fresh = secrets.token_urlsafe(32)
    errors = {} if error is None else {str(error.extensions.get("field", "form")): error.detail}
    context.setdefault("values", {})
    page = html_page(
        request,
        template,
        error.status if error is not None else status,
        {"Cache-Control": "no-store"},
        csrf=sessions.csrf_token(basis),
        errors=errors,
        **context,
    )
    if fresh is not None:
        set_cookie(request, page, PRE_SESSION_COOKIE, fresh, None)
    return page
