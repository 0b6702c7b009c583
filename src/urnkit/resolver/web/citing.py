"""Citations and JSON-LD on ``/{urn}``, as doi.org answers them: chosen by ``Accept``
(``text/x-bibliography; style=apa; locale=fi``, ``application/x-bibtex``…) or, for links that
work without scripts (the landing page's "Cite"), by the query directive ``format=`` (with
``style=`` and ``locale=``). The formats themselves are
:mod:`urnkit.resolver.representations.citations`'; this writes them as HTTP answers.

>>> requested_format("format=bibtex")
('application/x-bibtex', {})
>>> requested_format("format=apa&locale=fi")
('text/x-bibliography', {'locale': 'fi'})
"""

from typing import NoReturn

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from werkzeug.http import parse_accept_header, parse_options_header

from urnkit.resolver.domain import NotAcceptableError
from urnkit.resolver.domain.descriptions import Description
from urnkit.resolver.representations.citations import (
    BIBLIOGRAPHY,
    CSL_JSON,
    FORMATS,
    LOCALES,
    WRITERS,
    CitationError,
    bibliography,
    csl_json,
)
from urnkit.resolver.representations.rfc2483 import directives
from urnkit.resolver.representations.signposting import json_ld
from urnkit.resolver.web.front import JSON_TYPES, REPRESENTED, base_url

LD_JSON = "application/ld+json"
_PARAMETERS = ("style", "locale")  # what text/x-bibliography takes, in Accept or the query


def requested_format(query: str) -> tuple[str, dict[str, str]] | None:
    """The citation format a query's ``format=`` directive names (:data:`FORMATS`), with its
    ``style=`` and ``locale=``; None for none, or a name no format has: the default answer,
    as for a directive's value not known (rfc2141bis §2.3.1)."""
    found = directives(query)
    media_type = FORMATS.get(found.get("format", ""))
    if media_type is None:
        return None
    return media_type, {name: found[name] for name in _PARAMETERS if name in found}


def accepted(accept: str | None, media_type: str) -> tuple[str, dict[str, str]]:
    """``media_type`` with the parameters the ``Accept`` header gives it (the first entry
    naming it): ``style`` and ``locale`` of ``text/x-bibliography``, as doi.org reads them.

    >>> accepted("text/x-bibliography; style=ieee; locale=fi-FI", "text/x-bibliography")
    ('text/x-bibliography', {'style': 'ieee', 'locale': 'fi-FI'})
    """
    for value, _ in parse_accept_header(accept or ""):
        name, parameters = parse_options_header(value)
        if name.lower() == media_type:
            return media_type, {key: parameters[key] for key in _PARAMETERS if key in parameters}
    return media_type, {}


def represented(
    request: Request,
    description: Description,
    media_type: str,
    parameters: dict[str, str],
    headers: dict[str, str],
) -> Response:
    """The record of ``description`` as a citation or as JSON-LD; its URL is the URN's
    address here, whatever its status (a deactivated URN's former location is no URL of
    it). :class:`NotAcceptableError` for a style or locale not known."""
    base = base_url(request.scope)
    record = description.record
    url = base + record.key
    if media_type == LD_JSON:
        document = json_ld(base, record, description.usable)
        return JSONResponse(document, media_type=LD_JSON, headers=headers)
    if media_type == CSL_JSON:
        return JSONResponse(csl_json(record, url), media_type=CSL_JSON, headers=headers)
    if media_type == BIBLIOGRAPHY:
        try:
            text = bibliography(record, url, parameters.get("style"), parameters.get("locale"))
        except CitationError as error:
            raise NotAcceptableError(
                f"{error}; text/x-bibliography takes style= (a CSL style) and locale=",
                available=list(LOCALES.values()),
            ) from None
        return Response(text + "\n", media_type=f"{BIBLIOGRAPHY}; charset=utf-8", headers=headers)
    write = WRITERS[media_type]
    return Response(write(record, url), media_type=f"{media_type}; charset=utf-8", headers=headers)


def not_acceptable(path: str = "/{urn}") -> NoReturn:
    """The answer to an ``Accept`` header that takes nothing ``path`` (``/{urn}``, or a
    Memento's ``/memento/{datetime}/{urn}``) gives: 406 naming what it gives."""
    available = ["text/html", *JSON_TYPES, *REPRESENTED]
    raise NotAcceptableError(
        f"the request's Accept takes none of the answers of {path}: "
        f"{', '.join(available)} (or the media types of its locations)",
        available=available,
    )
