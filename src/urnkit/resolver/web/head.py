"""``HEAD`` wherever ``GET`` is answered: the same status and header fields, without the
content (RFC 9110 §9.3.2; §9.1: every general-purpose server supports both).

Starlette's own routes take ``HEAD`` with ``GET``; FastAPI's take only the methods they name,
so a ``HEAD`` of a page or of the API fell through to resolution's catch-all and was answered
400 "Not a URN". :func:`with_head` puts a :class:`HeadAsGet` after each such route. It is
no route of /openapi.json: that describes ``GET`` once.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi.routing import APIRoute
from starlette.datastructures import URLPath
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send


class HeadAsGet(BaseRoute):
    """``HEAD`` at the paths of ``route``, which answers ``GET`` only: answered by it as a
    ``GET`` is (the server sends no content with the answer to a ``HEAD``).

    >>> async def page() -> str: return ""
    >>> twin = HeadAsGet(APIRoute("/prefixes", page, methods=["GET"]))
    >>> scope = {"type": "http", "path": "/prefixes", "root_path": ""}
    >>> [twin.matches({**scope, "method": m})[0].name for m in ("HEAD", "GET", "POST")]
    ['FULL', 'NONE', 'NONE']
    """

    def __init__(self, route: APIRoute) -> None:
        self.route = route

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            return Match.NONE, {}
        match, child_scope = self.route.matches({**scope, "method": "GET"})
        return (match, child_scope) if match is Match.FULL else (Match.NONE, {})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.route.app(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: object) -> URLPath:
        raise NoMatchFound(name, path_params)  # the route itself names its paths


def with_head(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """``routes`` with a :class:`HeadAsGet` after each FastAPI route that answers ``GET`` and
    not ``HEAD``, so that a route after it taking ``HEAD`` at the same path (resolution's
    catch-all) does not answer it instead."""
    found: list[BaseRoute] = []
    for route in routes:
        found.append(route)
        if isinstance(route, APIRoute) and {"GET", "HEAD"} & (route.methods or set()) == {"GET"}:
            found.append(HeadAsGet(route))
    return found
