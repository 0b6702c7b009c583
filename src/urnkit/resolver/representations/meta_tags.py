"""What a record's page says of the record in ``<meta>`` elements, for the readers that look
there rather than in its JSON-LD: Highwire Press's ``citation_*`` names, which Google Scholar
asks of the pages it indexes (its inclusion guidelines: title, each author, the publication
date as ``2009/05/23`` or ``2009``, and a PDF's URL) and Zotero's browser connector reads; and
DCMI's DC-HTML, ``DC.``\\ element for each Dublin Core pair (:func:`dublin_core`, with
``<link rel="schema.DC">`` in the page), which Zotero reads too.

What they say is what a citation says (:class:`~.citations.Citable`): the URN's address at the
resolver, never a location, stands for the work; a PDF among the locations a reader may use
is ``citation_pdf_url``.
"""

from __future__ import annotations

from collections.abc import Sequence

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations.citations import Citable
from urnkit.resolver.representations.dublin_core import dublin_core

DC_SCHEMA = "http://purl.org/dc/elements/1.1/"
"""The namespace the ``DC.`` names are of (``<link rel="schema.DC" href=…>``, DC-HTML)."""


def meta_tags(record: Record, url: str, usable: Sequence[Location]) -> list[tuple[str, str]]:
    """The ``(name, content)`` of each ``<meta>`` element of ``record``'s page, ``url`` its
    address at the resolver, ``usable`` the locations a reader may open.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"title": "On URNs", "creators": ["Virtanen, Anna"],
    ...                           "date": "2020-03-05"})
    >>> pdf = Location("https://example.org/1.pdf", media_type="application/pdf")
    >>> meta_tags(record, "https://r.example/urn:nbn:fi-1", [pdf])[:4]
    [('citation_title', 'On URNs'), ('citation_author', 'Virtanen, Anna'), \
('citation_publication_date', '2020/03/05'), ('citation_pdf_url', 'https://example.org/1.pdf')]
    """
    cited = Citable.of(record, url)
    tags = [] if cited.title is None else [("citation_title", cited.title)]
    tags += [("citation_author", creator.name) for creator in cited.creators]
    if cited.date is not None:
        year, *rest = cited.date
        tags.append(
            ("citation_publication_date", "/".join([f"{year:04d}", *map("{:02d}".format, rest)]))
        )
    pdf = next((loc.url for loc in usable if loc.media_type == "application/pdf"), None)
    optional = {
        "citation_pdf_url": pdf,
        "citation_publisher": cited.publisher,
        "citation_language": cited.language,
    }
    tags += [(name, value) for name, value in optional.items() if value is not None]
    tags += [("citation_keywords", keyword) for keyword in cited.keywords]
    return tags + [(f"DC.{element}", value) for element, value in dublin_core(record)]
