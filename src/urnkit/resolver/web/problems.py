"""RFC 9457 problem details: how refusals and errors are answered, as
``application/problem+json`` or, to a client that prefers HTML, as a readable page; and how
/openapi.json describes them.

>>> problem_body(404, "Not found", "no such URN")
{'type': 'about:blank', 'title': 'Not found', 'status': 404, 'detail': 'no such URN'}
"""

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route
from starlette.types import Scope

from urnkit.resolver.domain import ResolverError, json_pointer, printable
from urnkit.resolver.web.schemas import Problem
from urnkit.resolver.web.templating import html_page

PROBLEM = "application/problem+json"


def wants_html(request: Request) -> bool:
    """Whether the client prefers HTML to JSON (browsers send ``text/html`` first)."""
    return prefers_html(request.headers.get("accept", ""))


def prefers_html(accept: str) -> bool:
    """Whether an ``Accept`` value prefers HTML to JSON: names ``text/html`` before any JSON.

    >>> prefers_html("text/html,application/xhtml+xml"), prefers_html("application/json")
    (True, False)
    """
    html, json = accept.find("text/html"), accept.find("json")
    return html >= 0 and (json < 0 or html < json)


def problem_body(
    status: int, title: str, detail: str, problem_type: str = "about:blank", **extensions: Any
) -> dict[str, Any]:
    """An RFC 9457 problem's members: ``type``, ``title``, ``status``, ``detail``, extensions."""
    return {"type": problem_type, "title": title, "status": status, "detail": detail, **extensions}


def problem(
    request: Request,
    status: int,
    title: str,
    detail: str,
    problem_type: str = "about:blank",
    **extensions: Any,
) -> Response:
    """The problem as JSON, or as a page to a client that prefers HTML; a 401 asks for a
    bearer token (``WWW-Authenticate``)."""
    body = problem_body(status, title, detail, problem_type, **extensions)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if wants_html(request):
        # The page around the problem is in the reader's language, a ?lang= that names
        # none passed over (it may be the problem); the problem itself stays English.
        headers["Vary"] = "Accept"  # a page or JSON, by Accept
        return html_page(request, "problem.html", status, headers, strict=False, problem=body)
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def refusal(request: Request, error: ResolverError) -> Response:
    """A refusal of the service, with the status, type and title its class carries, and when
    to ask again (``Retry-After``) if it says."""
    response = problem(
        request, error.status, error.title, error.detail, error.problem_type, **error.extensions
    )
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def invalid_request(request: Request, error: RequestValidationError) -> Response:
    """A request FastAPI found invalid (422): each error's RFC 6901 ``pointer`` into the body
    (null for a query, path or header parameter; the whole body when it is no JSON), its
    location and message, as :class:`~urnkit.resolver.domain.UnacceptableInputError` has them."""
    errors = [_error_json(e) for e in error.errors()]
    detail = "; ".join(f"{'.'.join(map(str, e['location']))}: {e['message']}" for e in errors)
    return problem(request, 422, "Invalid request", detail, errors=errors)


def _error_json(error: Mapping[str, Any]) -> dict[str, Any]:
    location = [printable(p) if isinstance(p, str) else p for p in error.get("loc", ())]
    pointer = None
    if location[:1] == ["body"]:
        pointer = "" if error.get("type") == "json_invalid" else json_pointer(location[1:])
    return {"pointer": pointer, "location": location, "message": error.get("msg", "")}


def http_error(request: Request, error: HTTPException) -> Response:
    """An HTTP error Starlette or a route raised (404 of no route, 405, 415 …), its headers kept."""
    title = HTTPStatus(error.status_code).phrase
    response = problem(request, error.status_code, title, str(error.detail))
    response.headers.update(error.headers or {})
    if error.status_code == 405:  # RFC 9110 §15.5.6: Allow lists every method of the resource
        response.headers["Allow"] = ", ".join(allowed_methods(request.scope))
    return response


def allowed_methods(scope: Scope) -> list[str]:
    """The methods /openapi.json declares at the path of ``scope``, and ``HEAD`` with ``GET``:
    of every published route of the first path template that matches it (Starlette's 405
    names one route's alone). Where templates overlap (``/api/v1/urns/{urn}/history`` is also
    ``/api/v1/urns/{urn}`` of a URN ending ``/history``), the first in the routes' order is
    the one the path reaches."""
    methods: set[str] = set()
    template = None
    for route in scope["app"].router.routes:
        if not isinstance(route, Route | APIRoute) or not route.methods:
            continue
        if not route.include_in_schema or template not in (None, route.path_format):
            continue
        if route.matches({**scope, "method": next(iter(route.methods))})[0] is Match.FULL:
            template = route.path_format
            methods |= route.methods
    if "GET" in methods:  # every GET is answered to HEAD too (web/head.py)
        methods.add("HEAD")
    return sorted(methods)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI descriptions of the problem responses a route may give: the Problem schema under
    the media type sent, ``application/problem+json`` (a ``model`` would put it under
    ``application/json``, which these responses never are), or a page for browsers."""
    return {
        status: {
            "content": {
                PROBLEM: {"schema": _PROBLEM_SCHEMA},
                "text/html": {"schema": {"type": "string"}},
            },
            "description": "A problem (RFC 9457)",
        }
        for status in statuses
    }


_PROBLEM_SCHEMA = Problem.model_json_schema()
# What a route that takes a bearer token may answer besides its own problems.
AUTHENTICATED = problem_responses(401, 403, 422)
