"""FAIR Signposting (https://signposting.org/FAIR/): the typed links that tell a machine, on
resolution's answers and a URN's landing page, what the URN stands for and where its parts are,
as a ``Link`` header (RFC 8288), as a linkset (RFC 9264 §4.2, ``application/linkset+json``)
and, on the landing page, as schema.org JSON-LD.

The relations: ``cite-as`` (RFC 8574), the URN's resolution URL here, what to cite;
``describedby`` (POWDER), the record as JSON (the API's) and as ``oai_dc`` (RFC 2483's I2Cs);
``item`` (RFC 6573), each usable location with its media type; ``type`` (RFC 6903), the
schema.org type the metadata gives; ``author`` and ``license``, where the metadata names them
by URI; ``linkset`` (RFC 9264 §6), this linkset.

>>> from datetime import datetime, UTC
>>> t = datetime(2026, 1, 1, tzinfo=UTC)
>>> record = Record("URN:NBN:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
...                 metadata={"title": "A thesis", "type": "doctoralThesis"})
>>> [link.rel for link in record_signposts("https://r.example/", record, ())]
['cite-as', 'type', 'describedby', 'describedby', 'linkset']
>>> schema_org_type(record.metadata)
'https://schema.org/Thesis'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from urnkit.resolver.domain import Location, Record, media_type_of
from urnkit.resolver.representations.dublin_core import OAI_DC, dublin_core
from urnkit.resolver.representations.rfc2483 import uri_reference

LINKSET = "application/linkset+json"  # RFC 9264 §4.2, §7.3
SCHEMA_ORG = "https://schema.org/"
ABOUT_PAGE = SCHEMA_ORG + "AboutPage"  # a landing page's own type (FAIR Signposting)
# A resource's type by the words repositories give it in dc:type: the DCMI Type Vocabulary,
# the COAR Resource Types' and info:eu-repo's last words (lower case, without separators).
_TYPES = {
    "article": "ScholarlyArticle",
    "journalarticle": "ScholarlyArticle",
    "researcharticle": "ScholarlyArticle",
    "thesis": "Thesis",
    "doctoralthesis": "Thesis",
    "masterthesis": "Thesis",
    "mastersthesis": "Thesis",
    "bachelorthesis": "Thesis",
    "dissertation": "Thesis",
    "book": "Book",
    "bookpart": "Chapter",
    "chapter": "Chapter",
    "bookchapter": "Chapter",
    "report": "Report",
    "dataset": "Dataset",
    "software": "SoftwareSourceCode",
    "image": "ImageObject",
    "stillimage": "ImageObject",
    "movingimage": "VideoObject",
    "video": "VideoObject",
    "sound": "AudioObject",
    "audio": "AudioObject",
    "map": "Map",
    "periodical": "Periodical",
    "journal": "Periodical",
    "conferenceobject": "CreativeWork",
}
_SINGLE_ATTRIBUTES = ("type", "title", "media")  # RFC 9264 §4.2.4.1: strings, not arrays
_QUOTED = re.compile(r'["\\]')  # what a quoted-string escapes (RFC 9110 §5.6.4)
# The describedby and linkset links' relations and attributes, as _about gives them.
_AS_JSON = '; rel="describedby"; type="application/json"'
_AS_OAI_DC = f'; rel="describedby"; type="application/xml"; profile="{OAI_DC}"'
_AS_LINKSET = f'; rel="linkset"; type="{LINKSET}"'
_WORD = re.compile(r"[^a-z]")
_HTTP_URI = re.compile(r"https?://[^\s<>\"]+\Z")


@dataclass(frozen=True, slots=True)
class Link:
    """A typed link (RFC 8288 §2): to ``href`` by ``rel``, with target attributes (``type``,
    ``profile``) where known.

    >>> Link("https://example.org/a", "item", (("type", "application/pdf"),)).header()
    '<https://example.org/a>; rel="item"; type="application/pdf"'
    """

    href: str
    rel: str
    attributes: tuple[tuple[str, str], ...] = ()

    def header(self) -> str:
        """The link as a ``link-value`` of a ``Link`` header (RFC 8288 §3), each attribute a
        quoted-string (RFC 9110 §5.6.4)."""
        parameters = "".join(f"; {name}={_quoted(value)}" for name, value in self.attributes)
        return f'<{uri_reference(self.href)}>; rel="{self.rel}"{parameters}'


def _quoted(value: str) -> str:
    r"""``value`` as a quoted-string: ``"`` and ``\`` escaped by a ``\``.

    >>> print(_quoted('a"b'))
    "a\"b"
    """
    return '"' + _QUOTED.sub(lambda found: "\\" + found[0], value) + '"'


def link_header(links: Iterable[Link]) -> str:
    """A ``Link`` header value of ``links``, separated by commas (RFC 8288 §3)."""
    return ", ".join([link.header() for link in links])


def resolution_signposts(
    base: str, key: str, items: Sequence[str], media_types: Sequence[str | None] = ()
) -> str:
    """What a redirect to a location says, as a ``Link`` value (the front answers it from one
    indexed row, which holds the locations' media types but no metadata): ``cite-as``,
    ``describedby``, ``linkset`` (where the rest is) and an ``item`` per URL of ``items``,
    with the media type of the same place in ``media_types`` as its ``type`` (untyped where
    that is None, or ``media_types`` empty). ``base`` is the resolver's URL, ending in ``/``;
    ``key`` the URN's equivalence key (its canonical form). Written out as one string: the hot
    path's, where :class:`Link` objects cost 15 µs. A media type (``media_type_of``) holds no
    character a quoted-string escapes: quoted, it is the same between its quotes.

    >>> base, items = "https://r.example/", ["https://a.example/x", "https://a.example/y"]
    >>> about = [*_about(base, "urn:nbn:fi-1"), Link(items[0], "item"),
    ...          Link(items[1], "item", (("type", "application/pdf"),))]
    >>> signposts = resolution_signposts(base, "urn:nbn:fi-1", items, [None, "application/pdf"])
    >>> signposts == link_header(about)
    True
    """
    base, key = uri_reference(base), uri_reference(key)  # as quote() goes: by character
    here = base + key
    parts = [
        f'<{here}>; rel="cite-as"',
        f"<{base}api/v1/urns/{key}>{_AS_JSON}",
        f"<{here}?s=I2Cs>{_AS_OAI_DC}",
        f"<{here}?s=linkset>{_AS_LINKSET}",
    ]
    if not media_types:
        parts += [f'<{uri_reference(url)}>; rel="item"' for url in items]
        return ", ".join(parts)
    for url, kind in zip(items, media_types, strict=True):  # a loop: 0.6 µs less than a list
        if kind is None:
            parts.append(f'<{uri_reference(url)}>; rel="item"')
        else:
            parts.append(f'<{uri_reference(url)}>; rel="item"; type="{kind}"')
    return ", ".join(parts)


def record_signposts(
    base: str, record: Record, usable: Sequence[Location], page: bool = False
) -> list[Link]:
    """Every signpost of ``record``: ``cite-as``, ``type`` (and schema.org's ``AboutPage``
    first for its landing ``page``), ``describedby``, ``linkset``, an ``item`` per ``usable``
    location with its media type, ``author`` and ``license`` per URI the metadata gives."""
    work = Link(schema_org_type(record.metadata), "type")
    links = _about(base, record.key)
    types = [Link(ABOUT_PAGE, "type"), work] if page else [work]
    links[1:1] = types
    for location in usable:
        media_type = media_type_of(location)
        typed = () if media_type is None else (("type", media_type),)
        links.append(Link(location.url, "item", typed))
    for element, value in dublin_core(record):
        if element in ("creator", "rights") and _HTTP_URI.match(value):
            links.append(Link(value, "author" if element == "creator" else "license"))
    return links


def _about(base: str, key: str) -> list[Link]:
    """The links every answer about a record of ours gives: cite-as, describedby, linkset."""
    here = base + key
    return [
        Link(here, "cite-as"),
        Link(f"{base}api/v1/urns/{key}", "describedby", (("type", "application/json"),)),
        Link(
            here + "?s=I2Cs",
            "describedby",
            (("type", "application/xml"), ("profile", OAI_DC)),
        ),
        Link(here + "?s=linkset", "linkset", (("type", LINKSET),)),
    ]


def linkset(anchor: str, links: Iterable[Link]) -> dict[str, Any]:
    """``links`` of one link context, ``anchor``, as RFC 9264 §4.2's JSON: a "linkset" array
    of one link context object whose members are the relation types, each an array of target
    objects: "href" and the target attributes, RFC 8288's ``type`` a string (§4.2.4.1), an
    extension attribute (``profile``) an array of strings (§4.2.4.3).

    >>> found = linkset("https://r.example/urn:nbn:fi-1", [Link("https://r.example/x", "item")])
    >>> found["linkset"][0]
    {'anchor': 'https://r.example/urn:nbn:fi-1', 'item': [{'href': 'https://r.example/x'}]}
    """
    context: dict[str, Any] = {"anchor": uri_reference(anchor)}
    for link in links:
        target: dict[str, Any] = {"href": uri_reference(link.href)}
        for name, value in link.attributes:
            target[name] = value if name in _SINGLE_ATTRIBUTES else [value]
        context.setdefault(link.rel, []).append(target)
    return {"linkset": [context]}


def schema_org_type(metadata: Mapping[str, Any]) -> str:
    """The schema.org type of a resource by its metadata's ``type`` (or ``types``): the first
    value naming one (a word of the DCMI Type Vocabulary, COAR's or info:eu-repo's, or the last
    segment of such a URI), else ``CreativeWork``.

    >>> schema_org_type({"type": "info:eu-repo/semantics/article"})
    'https://schema.org/ScholarlyArticle'
    >>> schema_org_type({"types": ["Text", "Dataset"]}), schema_org_type({})
    ('https://schema.org/Dataset', 'https://schema.org/CreativeWork')
    """
    for name, value in metadata.items():
        if name.lower() in ("type", "types"):
            for text in value if isinstance(value, list) else [value]:
                word = _WORD.sub("", str(text).rstrip("/").rsplit("/", 1)[-1].lower())
                if word in _TYPES:
                    return SCHEMA_ORG + _TYPES[word]
    return SCHEMA_ORG + "CreativeWork"


def json_ld(base: str, record: Record, usable: Sequence[Location]) -> dict[str, Any]:
    """The record as schema.org JSON-LD for its landing page: its type, the URN as an
    ``identifier`` (a ``PropertyValue``, ``propertyID`` "URN"), ``url`` (what ``cite-as``
    names), and what the Dublin Core of its metadata gives: ``name`` (the title), ``author``,
    ``datePublished``, ``inLanguage``, ``publisher``, ``description``, ``keywords``,
    ``license``; each usable location as an ``encoding``.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...                 metadata={"title": "On URNs"})
    >>> json_ld("https://r.example/", record, ())["name"]
    'On URNs'
    """
    url = base + record.key
    document: dict[str, Any] = {
        "@context": SCHEMA_ORG,
        "@type": schema_org_type(record.metadata).removeprefix(SCHEMA_ORG),
        "@id": url,
        "url": url,
        "identifier": {"@type": "PropertyValue", "propertyID": "URN", "value": record.urn},
    }
    values: dict[str, list[str]] = {}
    for element, value in dublin_core(record):
        values.setdefault(element, []).append(value)
    single = {"title": "name", "date": "datePublished", "description": "description"}
    for element, name in single.items():
        if element in values:
            document[name] = values[element][0]
    if "creator" in values:
        document["author"] = [_agent("Person", name) for name in values["creator"]]
    if "publisher" in values:
        document["publisher"] = _agent("Organization", values["publisher"][0])
    if "language" in values:
        document["inLanguage"] = values["language"][0]
    if "subject" in values:
        document["keywords"] = values["subject"]
    if "rights" in values:
        document["license"] = values["rights"][0]
    if usable:
        document["encoding"] = [_media_object(location) for location in usable]
    return document


def _agent(kind: str, name: str) -> dict[str, str]:
    """A Person or Organization: by its URI (an ORCID, say) when the metadata gives one."""
    return {"@type": kind, "@id" if _HTTP_URI.match(name) else "name": name}


def _media_object(location: Location) -> dict[str, str]:
    found = {"@type": "MediaObject", "contentUrl": location.url}
    media_type = media_type_of(location)
    if media_type is not None:
        found["encodingFormat"] = media_type
    return found


def script_json(document: Any) -> str:
    """``document`` as JSON fit for an HTML ``<script>`` element's text: ``<``, ``>`` and ``&``
    as JSON escapes, so that no ``</script>`` or ``<!--`` can end or change the element (HTML
    §4.12.1.3), and the JSON still reads the same.

    >>> script_json({"name": "</script><b>"})
    '{"name": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    text = json.dumps(document, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
