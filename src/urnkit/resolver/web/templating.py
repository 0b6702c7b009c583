"""The resolver's pages for people, rendered from ``urnkit/resolver/templates`` (Jinja2,
autoescaped), with the pages' security headers (:mod:`urnkit.resolver.web.security`); their
stylesheet and scripts are files under ``urnkit/resolver/static``, served at ``/static``.

Each page is in the language :func:`~urnkit.resolver.web.languages.page_language` picks: one
Jinja2 environment per language, made at start-up, with the language's messages (Jinja2's
``i18n`` extension, new-style gettext: placeholders are escaped) and Babel's number and date
formats of its locale (CLDR) as filters: ``number``, ``day`` and ``moment`` (UTC); and
``line_chart`` (:mod:`~urnkit.resolver.web.charts`) writing them so. The answer
says its ``Content-Language`` and, when ``Accept-Language`` chose it, varies by that header.

>>> from starlette.requests import Request
>>> finnish = Request({"type": "http", "query_string": b"lang=fi", "headers": []})
>>> page = html_page(finnish, "home.html")
>>> page.headers["content-language"], page.headers["content-security-policy"][:18]
('fi', "default-src 'none'")
>>> '<html lang="fi">' in page.body.decode()
True
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal
from fastapi import Request
from fastapi.responses import HTMLResponse, StreamingResponse
from jinja2 import Environment, FileSystemLoader, Template, pass_context, select_autoescape
from jinja2.runtime import Context

from urnkit.resolver.web.charts import line_chart
from urnkit.resolver.web.languages import LANGUAGES, page_language, translations, with_language
from urnkit.resolver.web.security import PAGE_HEADERS

# Each language named in itself (CLDR), for the switcher: "suomi", "svenska", "Deutsch" …
AUTONYMS = {tag: Locale.parse(tag).get_display_name(tag) or tag for tag in LANGUAGES}


def _day(value: date | str, language: str) -> str:
    """A day as its language writes it: 25.11.2026, Nov 25, 2026 …"""
    day = date.fromisoformat(value[:10]) if isinstance(value, str) else value
    return format_date(day, "medium", locale=language)


def _language_name(code: str, language: str) -> str:
    """A language code (ISO 639-1 or -2, a language tag's primary subtag) by its name in
    ``language`` (CLDR); the code as it is when it names none.

    >>> _language_name("fi", "de"), _language_name("swe", "fi"), _language_name("x", "en")
    ('Finnisch', 'ruotsi', 'x')
    """
    try:
        named = Locale.parse(code.strip().replace("-", "_")).language
    except (ValueError, TypeError, UnknownLocaleError):
        return code
    return str(Locale.parse(language).languages.get(named, code))


def _host(url: str) -> str:
    """The host a URL names, for a reader to see where a link leads.

    >>> _host("https://Example.org:8443/a?b")
    'example.org'
    """
    return urlsplit(url).hostname or url


def _moment(value: str, language: str) -> str:
    """A stored time (ISO 8601) in UTC, as its language writes a date and time."""
    return format_datetime(datetime.fromisoformat(value), "medium", tzinfo=UTC, locale=language)


@dataclass(frozen=True, slots=True)
class Site:
    """Who the pages say runs them (settings ``site_…``): the service's ``name``, its
    ``operator`` and the operator's home page, and a ``logo``: the image's bytes and media
    type, served at ``/logo``.

    >>> Site.from_settings("Finnish URN resolver", "National Library", "", "").operator
    'National Library'
    """

    name: str = "urnkit resolver"
    operator: str = ""
    operator_url: str = ""
    logo: tuple[bytes, str] | None = None

    @classmethod
    def from_settings(cls, name: str, operator: str, operator_url: str, logo: str) -> Site:
        """The site the settings name; the logo file read now (a missing one fails start-up)."""
        image = None
        if logo:
            media_type = mimetypes.guess_type(logo)[0]
            if media_type not in LOGO_TYPES:
                raise ValueError(f"site_logo: {logo} is no PNG, SVG, JPEG or WebP file")
            image = (Path(logo).read_bytes(), media_type)
        return cls(name, operator, operator_url, image)


LOGO_TYPES = ("image/png", "image/svg+xml", "image/jpeg", "image/webp")
STAFF_RECORDS = "/staff/records/"


def record_path(urn: str) -> str:
    """The staff page of the record of ``urn``; a URN holding ``/`` percent-encoded whole, so
    that one ending ``/history`` (an NSS may hold ``/``, RFC 8141 §2) is no action's path.

    >>> record_path("urn:nbn:fi:test-1"), record_path("urn:nbn:fi:test-1/history")
    ('/staff/records/urn:nbn:fi:test-1', '/staff/records/urn%3Anbn%3Afi%3Atest-1%2Fhistory')
    """
    return STAFF_RECORDS + (quote(urn, safe="") if "/" in urn else urn)


@pass_context
def _keeping_language(context: Context, url: str) -> str:
    """``url`` (of a page here) with the ``?lang=`` the page was asked in, if any."""
    return with_language(url, context.get("chosen"))


def _environment(language: str) -> Environment:
    environment = Environment(
        loader=FileSystemLoader(Path(__file__).parent.parent / "templates"),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
    )
    environment.install_gettext_translations(  # type: ignore[attr-defined]
        translations(language), newstyle=True
    )
    environment.filters.update(
        number=partial(format_decimal, locale=language),
        day=partial(_day, language=language),
        moment=partial(_moment, language=language),
        keep_lang=_keeping_language,
        language_name=partial(_language_name, language=language),
        host=_host,
        record_path=record_path,
    )
    environment.policies["ext.i18n.trimmed"] = True  # as babel.cfg extracts them
    environment.globals.update(
        lang=language, autonyms=AUTONYMS, line_chart=partial(line_chart, language=language)
    )
    return environment


SITE = Site()  # the pages' header when the application names none
TEMPLATES = {language: _environment(language) for language in LANGUAGES}


def html_page(
    request: Request,
    template: str,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    strict: bool = True,
    **context: Any,
) -> HTMLResponse:
    """``template`` rendered with ``context`` in the language of ``request`` (``strict``: see
    :func:`~urnkit.resolver.web.languages.page_language`): a response of ``status`` with
    ``headers`` and the pages' security headers. The page gets ``chosen`` (the ``?lang=``
    its links keep, or None) and ``switch``: each language's URL of the same page."""
    page, fields, values = _page(request, template, headers, strict, context)
    return HTMLResponse(page.render(**values), status_code=status, headers=fields)


def html_stream(
    request: Request, template: str, headers: Mapping[str, str] | None = None, **context: Any
) -> StreamingResponse:
    """``template`` as :func:`html_page` renders it, but sent (``200``) part by part as it is
    rendered (Jinja2's ``generate``): a page whose ``context`` holds an iterator that waits for
    work shows what came before it at once. ``X-Accel-Buffering: no`` asks a proxy (nginx) to
    pass each part on as it comes.

    >>> from starlette.requests import Request
    >>> english = Request({"type": "http", "query_string": b"", "headers": []})
    >>> page = html_stream(english, "home.html")
    >>> page.media_type, page.headers["x-accel-buffering"], page.headers["content-language"]
    ('text/html', 'no', 'en')
    """
    page, fields, values = _page(request, template, headers, True, context)
    fields["X-Accel-Buffering"] = "no"
    return StreamingResponse(page.generate(**values), media_type="text/html", headers=fields)


def _page(
    request: Request,
    template: str,
    headers: Mapping[str, str] | None,
    strict: bool,
    context: dict[str, Any],
) -> tuple[Template, dict[str, str], dict[str, Any]]:
    """``template`` in the language of ``request``, the answer's header fields, and
    ``context`` with what every page gets (``chosen``, ``switch``)."""
    language = page_language(request, strict)
    fields = {**PAGE_HEADERS, **(headers or {}), "Content-Language": language.tag}
    if not language.chosen:
        vary = fields.get("Vary")
        fields["Vary"] = f"{vary}, Accept-Language" if vary else "Accept-Language"
    site = getattr(getattr(request.scope.get("app"), "state", None), "site", SITE)
    kept = [(name, value) for name, value in request.query_params.multi_items() if name != "lang"]
    switch = {tag: "?" + urlencode([*kept, ("lang", tag)]) for tag in LANGUAGES}
    chosen = language.tag if language.chosen else None
    page = TEMPLATES[language.tag].get_template(template)
    return page, fields, {"chosen": chosen, "switch": switch, "site": site, **context}
