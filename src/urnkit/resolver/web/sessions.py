"""The staff pages' sessions and their protection against cross-site request forgery.

A session is a row of the database (``staff_sessions``: its account and expiry) and a cookie
holding its id, signed with itsdangerous (the signer Flask's and Starlette's own session
cookies use: a timestamped HMAC, checked in constant time). Every staff request reads the
session and its account again
(:meth:`~urnkit.resolver.services.accounts.AccountService.session_account`), so signing out,
a password change, an admin's "end sessions" and a disabled account end sessions at once, on
every server; the expiry (``staff_session_hours``) is kept in the row and in the signature.
The key is the ``staff_secret`` setting, else one made once and kept in the database.

The cookie is ``HttpOnly``, ``SameSite=Lax``, ``Path=/staff``, and ``Secure`` when the request
came over https (after the trusted proxies' word: :mod:`~urnkit.resolver.web.proxies`).

Every form carries a CSRF token (templates/staff/forms.html's ``csrf_field``): an HMAC of the
session cookie, or before sign-in of a pre-session cookie, so that a page of another site,
which can neither read these cookies nor the page, cannot post one (checked for every POST
under ``/staff/``: :func:`~urnkit.resolver.web.deps.csrf_checked`). Only a cookie the server
signed is a basis: a pre-session value a client chose is replaced by one of the server's.

>>> sessions = Sessions("key", timedelta(hours=1))
>>> sessions.read(sessions.issue("a-session-id"))
'a-session-id'
>>> sessions.read("forged.value") is None
True
>>> sessions.read(sessions.pre_session()) is None  # a pre-session is no session
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
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse
from itsdangerous import BadSignature, URLSafeTimedSerializer

from urnkit.resolver.domain import ResolverError, SignInLimits, TooManyAttemptsError
from urnkit.resolver.settings import Settings
from urnkit.resolver.web.languages import page_language, with_language
from urnkit.resolver.web.templating import html_page, html_stream

STAFF = "/staff"
HOME = "/staff/"
SIGN_IN = "/staff/sign-in"
PASSWORD = "/staff/password"
SESSION_COOKIE = "urnkit_staff"
PRE_SESSION_COOKIE = "urnkit_staff_pre"
CSRF_FIELD = "csrf"
_Page = TypeVar("_Page", HTMLResponse, StreamingResponse)


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
    """The staff pages' settings: the configured key, a session's lifetime, sign-in's back-off."""

    secret: str = ""
    lifetime: timedelta = timedelta(hours=12)
    limits: SignInLimits = field(default_factory=SignInLimits)

    @classmethod
    def from_settings(cls, settings: Settings) -> StaffPolicy:
        """The policy of the ``staff_*`` settings."""
        return cls(
            settings.staff_secret,
            timedelta(hours=settings.staff_session_hours),
            SignInLimits(
                attempts=settings.staff_sign_in_attempts,
                backoff=timedelta(seconds=settings.staff_sign_in_backoff_seconds),
                longest=timedelta(minutes=settings.staff_sign_in_longest_minutes),
            ),
        )


class Sessions:
    """Signed session and pre-session cookies and the CSRF tokens bound to them, under one
    key."""

    def __init__(self, secret: str, lifetime: timedelta) -> None:
        self._signer = URLSafeTimedSerializer(secret, salt="urnkit.staff.session")
        self._pre_signer = URLSafeTimedSerializer(secret, salt="urnkit.staff.pre-session")
        self._key = hashlib.sha256(b"urnkit.staff.csrf\0" + secret.encode()).digest()
        self.lifetime = lifetime

    def issue(self, session_id: str) -> str:
        """A session cookie's value for the session ``session_id``."""
        return self._signer.dumps(session_id)

    def read(self, value: str) -> str | None:
        """The session id of a session cookie signed here and not expired."""
        return _loaded(self._signer, value, self.lifetime)

    def pre_session(self) -> str:
        """A new pre-session cookie's value: 256 random bits, signed here."""
        return self._pre_signer.dumps(secrets.token_urlsafe(32))

    def basis(self, session: str | None, pre_session: str | None) -> str | None:
        """What a CSRF token is bound to: the session cookie's value, else the pre-session's,
        each only if signed here and not expired."""
        if session and self.read(session) is not None:
            return session
        if pre_session and _loaded(self._pre_signer, pre_session, self.lifetime) is not None:
            return pre_session
        return None

    def csrf_token(self, basis: str) -> str:
        """The CSRF token of the session (or pre-session) cookie value ``basis``."""
        return hmac.new(self._key, basis.encode(), hashlib.sha256).hexdigest()

    def csrf_valid(self, basis: str | None, token: str | None) -> bool:
        """Whether ``token`` is the CSRF token of ``basis`` (compared in constant time)."""
        if not basis or not token:
            return False
        return hmac.compare_digest(self.csrf_token(basis), token)


def _loaded(signer: URLSafeTimedSerializer, value: str, lifetime: timedelta) -> str | None:
    """The text ``signer`` signed into ``value`` within ``lifetime``, else None."""
    try:
        content: Any = signer.loads(value, max_age=int(lifetime.total_seconds()))
    except BadSignature:  # its subclass SignatureExpired too
        return None
    return content if isinstance(content, str) else None


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


def csrf_basis(request: Request, sessions: Sessions) -> str | None:
    """What the request's CSRF token is bound to: its session cookie, else its pre-session,
    if the server signed it (:meth:`Sessions.basis`)."""
    cookies = request.cookies
    return sessions.basis(cookies.get(SESSION_COOKIE), cookies.get(PRE_SESSION_COOKIE))


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


def session_of(request: Request, sessions: Sessions) -> str | None:
    """The id of the session the request's cookie names, if the server signed it and it has
    not expired (whether it is still live, the database says)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    return sessions.read(cookie) if cookie else None


def start_session(
    request: Request, response: Response, sessions: Sessions, session_id: str
) -> None:
    """Sign in on ``response``: the cookie of the session ``session_id``; the pre-session's is
    dropped."""
    age = int(sessions.lifetime.total_seconds())
    set_cookie(request, response, SESSION_COOKIE, sessions.issue(session_id), age)
    response.delete_cookie(PRE_SESSION_COOKIE, path=STAFF)


def end_session(response: Response) -> None:
    """Sign out on ``response``: the session cookie is dropped (the session itself is ended
    in the database)."""
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
    set if the request had none signed here to bind it to) and, if a service refused,
    ``errors``: the refusal's detail by the form field it concerns (its ``field``, else
    ``form``). A refusal to wait (429) says for how long in ``Retry-After``."""
    status = error.status if error is not None else status
    page = _staff_rendered(
        request, sessions, partial(html_page, request, template, status), error, context
    )
    if isinstance(error, TooManyAttemptsError):
        page.headers["Retry-After"] = str(error.extensions["retry_after"])
    return page


def staff_stream(
    request: Request, sessions: Sessions, template: str, **context: Any
) -> StreamingResponse:
    """A staff page as :func:`staff_page` makes it, sent as it is rendered
    (:func:`~urnkit.resolver.web.templating.html_stream`)."""
    return _staff_rendered(
        request, sessions, partial(html_stream, request, template), None, context
    )


def _staff_rendered(
    request: Request,
    sessions: Sessions,
    render: Callable[..., _Page],
    error: ResolverError | None,
    context: dict[str, Any],
) -> _Page:
    """``render(headers, **context)`` with what a staff page gets (see :func:`staff_page`),
    and ``read_only`` while the service takes no writes."""
    basis = csrf_basis(request, sessions)
    fresh = None
    if basis is None:
        basis = fresh = sessions.pre_session()
    errors = {} if error is None else {str(error.extensions.get("field", "form")): error.detail}
    context.setdefault("values", {})
    context.setdefault("read_only", request.app.state.services.health.read_only())
    page = render(
        {"Cache-Control": "no-store"}, csrf=sessions.csrf_token(basis), errors=errors, **context
    )
    if fresh is not None:
        set_cookie(request, page, PRE_SESSION_COOKIE, fresh, None)
    return page
