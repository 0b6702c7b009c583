"""Records as simple Dublin Core: the ``oai_dc`` XML of OAI-PMH 2.0, which both the RFC 2483
I2C services and the OAI-PMH interface give.

A record's metadata names map to the fifteen DCMES 1.1 elements (a plural name, like
``creators``, holding a list, gives one element per item); names outside DCMES are left out, as
``oai_dc`` allows nothing else. The URN comes first as ``dc:identifier``, then each location's
URL; each successor is a ``dc:relation``.

>>> from datetime import datetime, UTC
>>> t = datetime(2026, 1, 1, tzinfo=UTC)
>>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
...                 metadata={"title": "A thesis", "creators": ["Ann", "Bo"], "pages": 12})
>>> dublin_core(record)
[('identifier', 'urn:nbn:fi-1'), ('title', 'A thesis'), ('creator', 'Ann'), ('creator', 'Bo')]
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from urnkit.resolver.domain.records import Record

OAI_PMH = "http://www.openarchives.org/OAI/2.0/"
OAI_PMH_SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
OAI_DC = "http://www.openarchives.org/OAI/2.0/oai_dc/"
DC = "http://purl.org/dc/elements/1.1/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"

# The fifteen elements of the Dublin Core Metadata Element Set 1.1 (https://www.dublincore.org/
# specifications/dublin-core/dces/), by the metadata names that give them: the element's own name
# and its plural.
ELEMENTS = (
    "title",
    "creator",
    "subject",
    "description",
    "publisher",
    "contributor",
    "date",
    "type",
    "format",
    "identifier",
    "source",
    "language",
    "relation",
    "coverage",
    "rights",
)
_BY_NAME = {name: element for element in ELEMENTS for name in (element, element + "s")}

ET.register_namespace("oai_dc", OAI_DC)
ET.register_namespace("dc", DC)
ET.register_namespace("xsi", XSI)


def _values(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [text for item in value for text in _values(item)]
    if isinstance(value, dict):  # no DCMES element holds a structure: its values, if any
        return [str(item) for item in value.values() if isinstance(item, str | int | float)]
    return [str(value)]


def dublin_core(record: Record) -> list[tuple[str, str]]:
    """The record as (DCMES element, value) pairs: identifiers (the URN, then the locations),
    the metadata in its order, then the successors as relations."""
    pairs = [("identifier", record.urn)]
    # Never a location restricted to a network: oai_dc is published to anyone (OAI-PMH, I2C).
    pairs += [
        ("identifier", location.url)
        for location in record.locations
        if location.restricted_to is None
    ]
    for name, value in record.metadata.items():
        element = _BY_NAME.get(name.lower())
        if element is not None:
            pairs += [(element, text) for text in _values(value) if text]
    pairs += [("relation", successor) for successor in record.successors]
    return pairs


def oai_dc_element(record: Record) -> ET.Element:
    """The record as an ``oai_dc:dc`` element (valid against ``oai_dc.xsd``)."""
    root = ET.Element(f"{{{OAI_DC}}}dc", {f"{{{XSI}}}schemaLocation": f"{OAI_DC} {OAI_DC_SCHEMA}"})
    for element, text in dublin_core(record):
        ET.SubElement(root, f"{{{DC}}}{element}").text = text
    return root


def oai_dc_xml(record: Record) -> str:
    """The record as an ``oai_dc`` XML document.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> print(oai_dc_xml(Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t)))
    <?xml version='1.0' encoding='utf-8'?>
    <oai_dc:dc ...><dc:identifier>urn:nbn:fi-1</dc:identifier></oai_dc:dc>
    """
    return ET.tostring(oai_dc_element(record), encoding="unicode", xml_declaration=True)


def is_dublin_core_name(name: str) -> bool:
    """Whether a metadata name gives a DCMES element (its name or plural, in any case).

    >>> is_dublin_core_name("Creators"), is_dublin_core_name("pages")
    (True, False)
    """
    return name.lower() in _BY_NAME


def metadata_from_oai_dc(dc: ET.Element) -> dict[str, Any]:
    """The metadata an ``oai_dc:dc`` element gives, as :func:`dublin_core` reads it back: an
    element given once under its name, one given more often under its plural as a list, in
    document order; ``dc:identifier`` left out (the URN and the locations are not metadata).

    >>> dc = ET.fromstring(f'<dc xmlns:dc="{DC}"><dc:title>A thesis</dc:title>'
    ...                    '<dc:creator>Ann</dc:creator><dc:creator>Bo</dc:creator>'
    ...                    '<dc:identifier>urn:nbn:fi-1</dc:identifier></dc>')
    >>> metadata_from_oai_dc(dc)
    {'title': 'A thesis', 'creators': ['Ann', 'Bo']}
    """
    values: dict[str, list[str]] = {}
    for child in dc:
        namespace, _, element = str(child.tag).rpartition("}")
        text = (child.text or "").strip()
        if namespace == "{" + DC and element in ELEMENTS and element != "identifier" and text:
            values.setdefault(element, []).append(text)
    return {
        element if len(texts) == 1 else element + "s": texts[0] if len(texts) == 1 else texts
        for element, texts in values.items()
    }
