"""The resolver's pages for people, rendered from ``urnkit/resolver/templates`` (Jinja2,
autoescaped), with the pages' security headers (:mod:`urnkit.resolver.web.security`); their
stylesheet and scripts are files under ``urnkit/resolver/static``, served at ``/static``.

>>> page = html_page("home.html")
>>> page.headers["content-security-policy"].startswith("default-src 'none'")
True
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from urnkit.resolver.web.security import PAGE_HEADERS

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent.parent / "templates"),
    autoescape=select_autoescape(["html"]),
)


def html_page(
    template: str, status: int = 200, headers: Mapping[str, str] | None = None, **context: Any
) -> HTMLResponse:
    """``template`` rendered with ``context``: a response of ``status`` with ``headers`` and
    the pages' security headers."""
    body = TEMPLATES.get_template(template).render(**context)
    return HTMLResponse(body, status_code=status, headers={**PAGE_HEADERS, **(headers or {})})
