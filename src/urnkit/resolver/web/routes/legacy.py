"""Legacy and mistaken resolver URLs, each answered ``301 Moved Permanently`` to the one
canonical form, ``/{urn}``, so that links already printed keep working and clients learn that
form (docs/resolution.md, "Stable URLs"):

* ``/resolve?urn={urn}``, ``/resolver?urn={urn}``, ``/?identifier={urn}`` (either name on
  any of the three paths: resolvers have used both);
* ``/redirect/{urn}``, ``/urn/{urn}``, and the Czech resolver's ``/web/urn/{urn}``;
* another resolver's URL around any of these, or around a URN, as clients that prefix a
  resolver's address to a resolver URL make them: ``/https://nbn-resolving.org/urn:nbn:de:…``,
  ``/http://urn.fi/URN:NBN:fi:…`` (also with the double slash folded to one, as some proxies do).

A URN is taken as sent (a value percent-encoded whole, ``urn%3A…``, decoded once, as on the
canonical path); what follows a path's URN (a q- or r-component, an RFC 2483 service) goes
along. A URN not registered as sent but as pasted text cleaned
(:meth:`~urnkit.resolver.services.resolution.ResolutionService.pasted`) is led to straight
away, in one redirect. Anything that does not name a URN, even cleaned, is left to the other
routes.
"""

import asyncio
import re
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Scope

from urnkit.pasted import cleaned
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import decoded_if_whole

_QUERY_PATHS = ("/", "/resolve", "/resolver", "/resolve/", "/resolver/")
_QUERY_NAMES = ("urn", "identifier")
_PATH_PREFIXES = ("/redirect/", "/urn/", "/web/urn/")
# A resolver's address at the start of a path: scheme, one or two slashes, host[:port].
_RESOLVER_ADDRESS = re.compile(r"/https?:/{1,2}[^/?#]+", re.IGNORECASE)
_MAX_NESTED = 3  # resolver addresses around one another, at most


def canonical_target(path: str, query: str) -> str | None:
    """The canonical ``/{urn}`` (with what followed the URN) that the raw ``path`` and
    ``query`` of a legacy or mistaken resolver URL name; None for any other URL.

    >>> canonical_target("/resolver", "identifier=urn:nbn:de:101-1&x=1")
    '/urn:nbn:de:101-1'
    >>> canonical_target("/https://nbn-resolving.org/urn:nbn:de:101-1", "")
    '/urn:nbn:de:101-1'
    >>> canonical_target("/http:/urn.fi/URN:NBN:fi-fe1", "=q"), canonical_target("/urn:x:y", "")
    ('/URN:NBN:fi-fe1?=q', None)
    >>> canonical_target("/http://resolver.nkp.cz/web/urn/urn:nbn:cz:nk-1", "")
    '/urn:nbn:cz:nk-1'
    """
    nested = 0
    while nested < _MAX_NESTED and (address := _RESOLVER_ADDRESS.match(path)) is not None:
        path, nested = path[address.end() :] or "/", nested + 1
    urn = None
    for prefix in _PATH_PREFIXES:
        if path[: len(prefix)].lower() == prefix:
            urn = decoded_if_whole(path[len(prefix) :])
    if urn is None and nested and _is_urn(inner := decoded_if_whole(path[1:])):
        urn = inner
    if urn is not None:
        if not _is_urn(urn):
            return None
        return f"/{urn}?{query}" if query else f"/{urn}"
    if path.lower() in _QUERY_PATHS:
        for name, value in _parameters(query):
            if name.lower() in _QUERY_NAMES and _is_urn(urn := decoded_if_whole(value)):
                return f"/{urn}"
    return None


def _is_urn(text: str) -> bool:
    """Whether ``text`` is a URN, perhaps as pasted (:func:`~urnkit.pasted.cleaned`)."""
    text = cleaned(text)
    return text[:4].lower() == "urn:" and len(text) > 4


def _parameters(query: str) -> list[tuple[str, str]]:
    """A query's ``name=value`` pairs, names decoded, values as sent."""
    pairs = (part.partition("=") for part in query.split("&"))
    return [(unquote(name), value) for name, sign, value in pairs if sign]


class _LegacyRoute(Route):
    """Matches a GET or HEAD whose URL :func:`canonical_target` understands."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            return Match.NONE, {}
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string", b"").decode("latin-1")
        target = canonical_target(raw.decode("latin-1"), query)
        if target is None:
            return Match.NONE, {}
        return Match.FULL, {"endpoint": self.endpoint, "path_params": {"target": target}}


async def moved(request: Request) -> Response:
    """``301`` to the canonical URL, cacheable as long as an answer that depends on the URL
    alone (``cache_invalid``): the mapping never changes; to a pasted URN's record, as long as
    a resolution's redirect (the register may change)."""
    cache_control = request.app.state.cache.header(301).decode()
    location = request.path_params["target"]
    urn, mark, after = location[1:].partition("?")
    services: Services = request.app.state.services
    found = await asyncio.to_thread(services.resolution.pasted, urn)
    if found is not None:
        location = f"/{found}{mark}{after}"
        cache_control = request.app.state.cache.header(302).decode()
    headers = {"Location": location, "Cache-Control": cache_control}
    return Response(status_code=301, headers=headers)


# Tried before every other route but resolution's (create_app).
ROUTES = (_LegacyRoute("/{legacy:path}", moved, methods=["GET", "HEAD"]),)
