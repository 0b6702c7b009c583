"""The paths every web site is asked for that are not URNs: ``/robots.txt`` and
``/favicon.ico`` (the icon is also ``/static/icon.svg``).

``/robots.txt`` (RFC 9309) lets crawlers reach the landing pages, ``/{urn}`` and the public
pages, and keeps them off the API, the staff pages, OAI-PMH (harvesters have their own
protocol) and the RFC 2483 services, whose answers are the records' pages again or redirects.

>>> print(ROBOTS.splitlines()[1])
User-agent: *
"""

from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

ROBOTS = """\
# urnkit: the records' pages may be crawled; the API, the staff pages and OAI-PMH not.
User-agent: *
Disallow: /api/
Disallow: /staff
Disallow: /oai
Disallow: /uri-res/
Disallow: /docs
Disallow: /openapi.json
Disallow: /metrics
Disallow: /healthz
Disallow: /readyz
Disallow: /search
Allow: /
"""
_FAVICON = files("urnkit.resolver").joinpath("static", "favicon.ico").read_bytes()

router = APIRouter(include_in_schema=False)


@router.get("/robots.txt", response_class=PlainTextResponse)
def robots() -> PlainTextResponse:
    return PlainTextResponse(ROBOTS)


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(_FAVICON, media_type="image/vnd.microsoft.icon")
