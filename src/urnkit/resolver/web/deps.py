"""What routes take from a request, as typed dependencies: the service, the principal of the
bearer token (an admin's, where admins alone may act), a URN from the raw path, and for the
staff pages the signed-in account (:data:`StaffAccount`, :data:`StaffAdmin`), their sessions
and the fields of a posted form, its CSRF token checked (:func:`csrf_checked`).

The URN is taken from the raw request path, so percent-encoded octets reach the URN parser as
they were sent (``%2F`` and ``/`` are different URNs, RFC 8141 §3); the routes of
``/api/v1/urns…`` match that same raw path (:class:`RawPathRoute`).
"""

from typing import Annotated, ClassVar
from urllib.parse import parse_qsl, unquote

from fastapi import Depends, Path, Request
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.routing import Match
from starlette.types import Scope

from urnkit.resolver.domain import (
    ASSIGNED_NAME_PATTERN,
    MAX_URN_LENGTH,
    Account,
    Principal,
    Reader,
    UnacceptableError,
    check_urn_length,
)
from urnkit.resolver.services import Services
from urnkit.resolver.web.limits import PRINCIPAL, UPLOAD_BODY
from urnkit.resolver.web.sessions import (
    CSRF_FIELD,
    PASSWORD,
    CSRFError,
    Sessions,
    StaffRedirect,
    csrf_basis,
    session_of,
    sessions_of,
    sign_in_location,
)


async def _services(request: Request) -> Services:
    """The service the application was made over (``create_app`` keeps it in its state)."""
    services: Services = request.app.state.services
    return services


ServiceDep = Annotated[Services, Depends(_services)]

_bearer = HTTPBearer(auto_error=False, description="An API token from `urnkit admin create-token`")


def _principal(
    request: Request,
    services: ServiceDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The principal of the bearer token: a write's, authenticated before its body was read
    (:mod:`~urnkit.resolver.web.limits`), else looked up now."""
    found: Principal | None = request.scope.get(PRINCIPAL)
    if found is not None:
        return found
    return services.access.authenticate(credentials.credentials if credentials else None)


URNS_PATH = "/api/v1/urns"


AuthenticatedPrincipal = Annotated[Principal, Depends(_principal)]


def _admin(services: ServiceDep, who: AuthenticatedPrincipal) -> Principal:
    services.access.require_admin(who)
    return who


AdminPrincipal = Annotated[Principal, Depends(_admin)]


def _reader(
    request: Request,
    services: ServiceDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Reader:
    """Who reads through the API (:meth:`AccessService.reader`): a token, if one is sent, is
    checked."""
    if credentials is None:
        return services.access.reader(None)
    return services.access.reader(_principal(request, services, credentials))


APIReader = Annotated[Reader, Depends(_reader)]
# The OpenAPI security of a read taking an APIReader: a token is optional (an empty Security
# Requirement Object beside the bearer one FastAPI declares, OpenAPI 3.1 §4.8.30); without one
# the read shows what anyone sees.
OPTIONAL_TOKEN: dict[str, object] = {"security": [{}]}


def client_of(scope: Scope) -> str | None:
    """The client's address as the server sees it (after trusted proxies, web/proxies.py)."""
    client = scope.get("client")
    return str(client[0]) if client else None


def raw_urn(scope: Scope, prefix: str, suffix: str = "") -> str:
    """The URN in the raw path between ``prefix`` and ``suffix``, as sent. A client that
    percent-encoded the whole URN (``urn%3Anbn%3A…``) is decoded once: no URN begins so."""
    raw_path: bytes | None = scope.get("raw_path")
    if raw_path is None:  # not as a default of get(): encoding the path costs more
        raw_path = scope["path"].encode()
    raw = raw_path.decode("latin-1")
    return decoded_if_whole(raw[len(prefix) : len(raw) - len(suffix)])


def decoded_if_whole(text: str) -> str:
    """``text``, percent-decoded once if a client encoded the whole URN: no URN begins so.

    >>> decoded_if_whole("urn%3Anbn%3Afi-1"), decoded_if_whole("urn:nbn:fi-a%2Fb")
    ('urn:nbn:fi-1', 'urn:nbn:fi-a%2Fb')
    """
    return unquote(text) if text[:6].lower() == "urn%3a" else text


URN_DESCRIPTION = (
    f"The URN, e.g. urn:nbn:fi:demo-1: at most {MAX_URN_LENGTH} characters as sent (422 beyond)"
)


def urn_path(
    request: Request,
    urn: Annotated[
        str,
        Path(description=URN_DESCRIPTION, json_schema_extra={"pattern": ASSIGNED_NAME_PATTERN}),
    ],
) -> str:
    """A dependency: the URN of ``/api/v1/urns/{urn}…``, as sent (its routes match the raw
    path: :class:`RawPathRoute`)."""
    query = request.url.query
    if query[:1] in ("=", "+"):
        raise UnacceptableError(
            f"?{query} would be a component of the URN; records hold assigned names alone "
            "(RFC 8141 §2.3): resolve with GET /{urn}?=… instead",
            rule="assigned-name",
            section="RFC 8141 §2.3",
        )
    text = decoded_if_whole(urn)
    check_urn_length(text, ("path", "urn"), document=None)
    return text


URNPath = Annotated[str, Depends(urn_path)]


class RawPathRoute(APIRoute):
    """A route of ``/api/v1/urns…`` (of ``under``) matched on the raw path, from which its URN
    is taken: a percent-encoded route word (``…/deactivat%65``) is then no route word but part
    of the URN, and ``%2F`` stays in the URN (RFC 8141 §3: ``%2F`` and ``/`` differ). Matched on
    the decoded path, ``POST …-1/deactivat%65`` acted on the URN ``…-1/d``; a URN percent-encoded
    whole (``urn%3Anbn%3Afi%3Aa%2Fhistory``) is one ending ``/history``, not its history."""

    under: ClassVar[str] = URNS_PATH

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if not scope["path"].startswith(self.under):  # nor, then, does the raw path
            return Match.NONE, {}
        raw_path: bytes | None = scope.get("raw_path")
        if raw_path is not None:
            scope = {**scope, "path": raw_path.decode("latin-1")}
        return super().matches(scope)


class StaffRecordRoute(RawPathRoute):
    """A route of a record's staff pages, ``/staff/records/{urn}…``, matched on the raw path
    as the API's are (their links: :func:`~urnkit.resolver.web.templating.record_path`)."""

    under = "/staff/records/"


def _sessions(request: Request, services: ServiceDep) -> Sessions:
    """The staff sessions, signed with the configured key or the database's."""
    return sessions_of(request, services.accounts.session_secret)


StaffSessions = Annotated[Sessions, Depends(_sessions)]


async def _form(request: Request) -> dict[str, str]:
    """The text fields of a posted form (the first of each name), as the staff pages' forms
    send them (``application/x-www-form-urlencoded``, or ``multipart/form-data`` with a file:
    :data:`StaffFile`); none for a GET."""
    if request.method != "POST":
        return {}
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        fields: dict[str, str] = {}
        for name, value in (await request.form(max_part_size=UPLOAD_BODY)).multi_items():
            if isinstance(value, str):
                fields.setdefault(name, value)
        return fields
    body = (await request.body()).decode("utf-8", "replace")
    fields = {}
    for name, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(name, value)
    return fields


StaffForm = Annotated[dict[str, str], Depends(_form)]


async def _file(request: Request, form: StaffForm) -> tuple[str, bytes] | None:
    """The name and content of the file a posted multipart form carries as ``file`` (read
    after :func:`_form`, which parsed the form); None without one."""
    if request.method != "POST" or not request.headers.get("content-type", "").startswith(
        "multipart/form-data"
    ):
        return None
    sent = (await request.form()).get("file")
    if sent is None or isinstance(sent, str):
        return None
    return sent.filename or "", await sent.read()


StaffFile = Annotated[tuple[str, bytes] | None, Depends(_file)]


def csrf_checked(request: Request, sessions: StaffSessions, form: StaffForm) -> None:
    """Refuse (403) a POST whose form lacks the CSRF token of the request's session, or of
    its pre-session before sign-in: every staff router depends on this."""
    if request.method == "POST" and not sessions.csrf_valid(
        csrf_basis(request, sessions), form.get(CSRF_FIELD)
    ):
        raise CSRFError(
            "this form's security token is missing or out of date (CSRF): go back, reload the "
            "page and send the form again",
            field="form",
        )


def _signed_in(request: Request, services: ServiceDep, sessions: StaffSessions) -> Account:
    """The account of the request's staff session, read again now; without a live one, to
    the sign-in page and back."""
    session = session_of(request, sessions)
    account = None if session is None else services.accounts.session_account(session)
    if account is None:
        raise StaffRedirect(sign_in_location(request))
    return account


StaffSession = Annotated[Account, Depends(_signed_in)]


def _staff_account(account: StaffSession) -> Account:
    """A signed-in account that has changed its one-time password; else to that change."""
    if account.must_change_password:
        raise StaffRedirect(PASSWORD)
    return account


StaffAccount = Annotated[Account, Depends(_staff_account)]


def _staff_admin(services: ServiceDep, account: StaffAccount) -> Account:
    services.accounts.require_admin(account.principal())
    return account


StaffAdmin = Annotated[Account, Depends(_staff_admin)]
