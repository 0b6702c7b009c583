"""The resolver's pages for people, rendered from ``urnkit/resolver/templates`` (Jinja2,
autoescaped)."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent.parent / "templates"),
    autoescape=select_autoescape(["html"]),
)


def html_page(
    template: str, status: int = 200, headers: Mapping[str, str] | None = None, **context: Any
) -> HTMLResponse:
    """``template`` rendered with ``context``: a response of ``status`` with ``headers``."""
    body = TEMPLATES.get_template(template).render(**context)
    return HTMLResponse(body, status_code=status, headers=headers)
