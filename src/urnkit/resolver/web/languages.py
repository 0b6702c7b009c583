"""The pages' languages: English (the templates' own), Finnish, Swedish, German and Czech; which
one a request gets, and the message catalogues, read from ``urnkit/resolver/locale``.

A page is in the language its URL's ``?lang=`` names (a BCP 47 tag, RFC 5646, whose primary
subtag is one of :data:`LANGUAGES`: ``fi``, ``FI`` and ``fi-FI`` are Finnish); without one, in
the best of them the ``Accept-Language`` header takes (RFC 9110 §12.5.4, matched by RFC 4647
§3.4's lookup); else in English. A ``?lang=`` naming no language of the pages is refused (400):
a link that asks for a language the pages do not have is a mistake to point out, and the URL
then stays one cache entry per language. Problem details (RFC 9457) stay English everywhere.

>>> negotiated_language("de-CH, fi;q=0.9, *;q=0.1")
'de'
>>> negotiated_language("fr, sv-FI;q=0.8, en;q=0.7"), negotiated_language("fr")
('sv', 'en')
>>> requested_language("fi-FI")
'fi'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from gettext import GNUTranslations, NullTranslations
from io import BytesIO
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from fastapi import Request

from urnkit.resolver.domain import ResolverError, printable

LANGUAGES = ("en", "fi", "sv", "de", "cs")  # the switcher's order; English first, the source
SOURCE = "en"  # the templates' language, and the pages' when the request names none they have
LOCALE = Path(__file__).parent.parent / "locale"  # {language}/LC_MESSAGES/messages.po

# RFC 4647 §2.1: language-range = (1*8ALPHA *("-" 1*8alphanum)) / "*";
# RFC 9110 §12.4.2: weight = OWS ";" OWS "q=" qvalue, qvalue = 0[.ddd] / 1[.000].
_RANGE = r"(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)"
_MEMBER = re.compile(
    rf"[ \t]*({_RANGE})(?:[ \t]*;[ \t]*[qQ]=(0(?:\.[0-9]{{0,3}})?|1(?:\.0{{0,3}})?))?[ \t]*"
)
_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")


class UnsupportedLanguageError(ResolverError):
    """A ``?lang=`` that names no language of the pages."""

    status = 400
    title = "Unsupported language"


def accepted_languages(header: str) -> list[tuple[str, float]]:
    """The members of an ``Accept-Language`` value as (language range in lower case, weight),
    in the order sent; malformed members are left out (a server may ignore them).

    >>> accepted_languages("fi-FI, sv;q=0.5, ;q=x, *;Q=0")
    [('fi-fi', 1.0), ('sv', 0.5), ('*', 0.0)]
    """
    members = []
    for part in header.split(","):
        if (match := _MEMBER.fullmatch(part)) is not None:
            members.append((match[1].lower(), 1.0 if match[2] is None else float(match[2])))
    return members


def negotiated_language(header: str | None) -> str:
    """The language of :data:`LANGUAGES` an ``Accept-Language`` value takes best: the ranges
    by weight, highest first (the order sent among equals), each matched by lookup (RFC 4647
    §3.4: ``de-CH`` falls back to ``de``); ``*`` takes the first language not refused; a
    language refused with ``q=0`` is never chosen. :data:`SOURCE` when none matches.

    >>> negotiated_language("fi;q=0, *"), negotiated_language(None)
    ('en', 'en')
    """
    members = accepted_languages(header or "")
    refused = {language for language, weight in members if weight == 0}
    for language, weight in sorted(members, key=lambda member: -member[1]):
        if weight == 0:
            break
        if language == "*":
            wildcard = [tag for tag in LANGUAGES if tag not in refused]
            if wildcard:
                return wildcard[0]
            continue
        primary = language.partition("-")[0]
        if primary in LANGUAGES and primary not in refused:
            return primary
    return SOURCE


def requested_language(value: str) -> str:
    """The language a ``?lang=`` value names: a well-formed tag whose primary subtag, in any
    case, is one of :data:`LANGUAGES`; else :class:`UnsupportedLanguageError`.

    >>> requested_language("SV")
    'sv'
    >>> requested_language("fr")
    Traceback (most recent call last):
    ...
    urnkit.resolver.web.languages.UnsupportedLanguageError: lang='fr' names no language ...
    """
    primary = value.partition("-")[0].lower()
    if _TAG.fullmatch(value) and primary in LANGUAGES:
        return primary
    raise UnsupportedLanguageError(
        f"lang={printable(value)!r} names no language of these pages; give one of "
        f"{', '.join(LANGUAGES)} (a language tag, RFC 5646: lang=fi-FI is Finnish), or leave "
        "lang out to have the Accept-Language header choose",
        parameter="lang",
        languages=list(LANGUAGES),
    )


@dataclass(frozen=True, slots=True)
class PageLanguage:
    """The language of a page, and whether the URL chose it (``?lang=``): if not, the page
    varies by ``Accept-Language``."""

    tag: str
    chosen: bool


def page_language(request: Request, strict: bool = True) -> PageLanguage:
    """The language of the page answering ``request``: its ``?lang=``, else negotiated. A
    ``?lang=`` naming no language of the pages raises, or, unless ``strict`` (a problem's own
    page), is passed over.

    >>> from starlette.requests import Request as Plain
    >>> asked = Plain({"type": "http", "query_string": b"lang=xx", "headers": []})
    >>> page_language(asked, strict=False)
    PageLanguage(tag='en', chosen=False)
    """
    value = request.query_params.get("lang")
    if value is not None:
        try:
            return PageLanguage(requested_language(value), True)
        except UnsupportedLanguageError:
            if strict:
                raise
    return PageLanguage(negotiated_language(request.headers.get("accept-language")), False)


def with_language(url: str, tag: str | None) -> str:
    """``url`` (of a page here) asking for the language ``tag`` by ``?lang=``, unless it asks
    for one already or ``tag`` is None.

    >>> with_language("/staff/", "fi"), with_language("/staff/?q=a&lang=sv", "fi")
    ('/staff/?lang=fi', '/staff/?q=a&lang=sv')
    """
    if tag is None or "lang" in parse_qs(urlsplit(url).query):
        return url
    return f"{url}{'&' if '?' in url else '?'}lang={tag}"


def translations(language: str) -> NullTranslations:
    """The messages of ``language``, compiled in memory from its ``messages.po`` (fuzzy
    entries left out); English, the source, translates nothing.

    >>> translations("de").gettext("Statistics")
    'Statistik'
    """
    if language == SOURCE:
        return NullTranslations()
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as source:
        catalogue = read_po(source, locale=language)
    compiled = BytesIO()
    write_mo(compiled, catalogue)
    compiled.seek(0)
    return GNUTranslations(compiled)
