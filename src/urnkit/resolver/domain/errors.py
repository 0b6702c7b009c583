"""The resolver's refusals: each type carries its RFC 9457 problem (HTTP status, problem type
and title), which the web layer and the command line read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from urnkit.syntax import URNSyntaxError


class ResolverError(Exception):
    """Base of the service's refusals, each type with its RFC 9457 problem: ``status`` (the
    HTTP status code), ``problem_type`` (a URI) and ``title`` (its short summary).

    >>> NotFoundError("no such URN").status
    404
    """

    status = 400
    problem_type = "about:blank"
    title = "Error"
    retry_after: int | None = None  # seconds, for a Retry-After header (RFC 9110 §10.2.3)

    def __init__(self, detail: str, **extensions: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extensions = extensions

    def __str__(self) -> str:
        return self.detail  # which a caller may have made more precise since


class InvalidURNError(ResolverError):
    """The text is not a URN (RFC 8141 §2); carries the position, rule and section."""

    status = 400
    title = "Not a URN"

    @classmethod
    def from_syntax_error(cls, error: URNSyntaxError) -> InvalidURNError:
        """The problem for a syntax error, with where and why."""
        return cls(
            error.reason,
            input=error.args[0],
            position=error.position,
            rule=error.rule,
            section=error.section,
            explanation=str(error),
        )


class UnacceptableError(ResolverError):
    """Well-formed input that breaks a rule (RFC 8458, a namespace rule, a field's type)."""

    status = 422
    title = "Unacceptable"


class UnacceptableInputError(UnacceptableError):
    """A value the service could not store and give back exactly (a lone surrogate, U+0000, a
    number JSON or PostgreSQL cannot keep, too deep, too large, a URN too long:
    :mod:`~urnkit.resolver.domain.acceptance`); ``errors`` names each place by its RFC 6901
    JSON pointer, with its location and the reason, as the API's other 422s do."""

    problem_type = "tag:urnkit.invalid,2026:problem:unacceptable-input"
    title = "Unacceptable input"


class UnauthenticatedError(ResolverError):
    """No token, or a token that is unknown or revoked."""

    status = 401
    title = "Unauthenticated"


class ForbiddenError(ResolverError):
    """A valid token acting outside its organisation's delegated prefixes or its role."""

    status = 403
    title = "Forbidden"


class NotFoundError(ResolverError):
    """Nothing is registered under this name. Resolution asked for suggestions (for a
    reader's page) gives the registered URNs ``nearest`` the name, perhaps none; None when
    not asked."""

    status = 404
    title = "Not found"
    nearest: tuple[str, ...] | None = None


class PastedURNError(NotFoundError):
    """Nothing is registered under the text as given, but under the URN it names once cleaned
    of what pasting adds (``urn``, as registered): answered ``301`` to ``/{urn}``
    (docs/resolution.md, "Pasted URNs")."""

    def __init__(self, text: str, urn: str) -> None:
        super().__init__(f"{text!r} is not registered; {urn} is", urn=urn)
        self.urn = urn


class ConflictError(ResolverError):
    """The request contradicts what is stored (e.g. writing to a deactivated URN)."""

    status = 409
    title = "Conflict"


class NotAcceptableError(ResolverError):
    """Nothing the service could answer is of a media type the request's ``Accept`` takes."""

    status = 406
    title = "Not acceptable"


class UnavailableError(ResolverError):
    """The database cannot be used for now (unreachable, refusing, or locked past its wait):
    a client should try again after ``retry_after`` seconds (RFC 9110 §10.2.3). ``reason``
    says why, naming no host, role or file.

    >>> UnavailableError("cannot connect").detail
    'the database is unavailable (cannot connect); try again later'
    """

    status = 503
    title = "Service Unavailable"
    retry_after = 5

    def __init__(self, reason: str) -> None:
        super().__init__(f"the database is unavailable ({reason}); try again later")
        self.reason = reason


@contextmanager
def concerning(field: str) -> Iterator[None]:
    """Refusals raised inside name the form field ``field`` (unless they name one already),
    for the staff pages to show them beside it.

    >>> try:
    ...     with concerning("prefix"):
    ...         raise UnacceptableError("not a prefix")
    ... except UnacceptableError as error:
    ...     error.extensions
    {'field': 'prefix'}
    """
    try:
        yield
    except ResolverError as error:
        error.extensions.setdefault("field", field)
        raise
