"""Regenerate ``src/urnkit/namespaces/registry.csv`` from IANA's URN namespace registry (XML).

IANA publishes the registry at https://www.iana.org/assignments/urn-namespaces/urn-namespaces.xml;
the copy urnkit packages is ``data/iana-urn-namespaces.xml``. To update, download a new copy over
it and run, from the repository root::

    python3 scripts/update_registry.py [XML]

The CSV has one row per registered NID, sorted by NID: ``nid``, ``kind`` (formal: IANA's
"Formal URN Namespaces", RFC 8141 §5.1; informal: "Informal URN Namespaces", §5.2), ``reference``
(several joined with "; "), ``date`` (the registration date, when IANA gives one) and ``template``
(the registration template's URL, when IANA links one). The output depends only on the XML, so
``tests/test_namespaces.py`` can check that the packaged CSV is exactly what this script makes.
"""

from __future__ import annotations

import csv
import io
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "iana-urn-namespaces.xml"
TARGET = ROOT / "src" / "urnkit" / "namespaces" / "registry.csv"

_IANA = "{http://www.iana.org/assignments}"
# IANA's sub-registries and the kind of URN namespace each lists (RFC 8141 §5.1, §5.2).
KINDS = {"urn-namespaces-1": "formal", "urn-namespaces-2": "informal"}
COLUMNS = ("nid", "kind", "reference", "date", "template")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Row(NamedTuple):
    """One registered URN namespace, as a line of the CSV."""

    nid: str
    kind: str
    reference: str
    date: str
    template: str


def _xref(xref: ET.Element, people: dict[str, str], role: str) -> str:
    """IANA's ``<xref>`` as text: "RFC 8458", "Name <URL>", "person: Name", "contact: Name"."""
    kind, data = xref.get("type", ""), xref.get("data", "")
    text = (xref.text or "").strip()
    if kind == "rfc":
        return "RFC " + data.removeprefix("rfc")
    if kind == "rfc-errata":
        return f"RFC Errata {data}"
    if kind == "uri":
        return f"{text} <{data}>" if text else data
    if kind == "person":
        return f"{role}: {people.get(data, data.replace('_', ' '))}"
    return f"{kind}: {data}"


def _row(record: ET.Element, kind: str, people: dict[str, str]) -> Row:
    nid = (record.findtext(f"{_IANA}name") or "").strip()
    if not nid:
        raise ValueError("a record without a <name>")
    date = record.get("date", "")
    if date and not _DATE.fullmatch(date):
        raise ValueError(f"{nid}: a date that is not YYYY-MM-DD: {date!r}")
    references = [_xref(xref, people, "person") for xref in record.findall(f"{_IANA}xref")]
    references += [
        _xref(xref, people, "contact") for xref in record.findall(f"{_IANA}contact/{_IANA}xref")
    ]
    template = record.find(f"{_IANA}template/{_IANA}xref")
    template_url = "" if template is None else template.get("data", "")
    return Row(nid, kind, "; ".join(references), date, template_url)


def read_registry(xml_path: Path) -> list[Row]:
    """Every registered NID in IANA's XML, sorted by NID."""
    root = ET.parse(xml_path).getroot()
    people = {
        person.get("id", ""): (person.findtext(f"{_IANA}name") or "").strip()
        for person in root.iter(f"{_IANA}person")
    }
    rows = []
    for registry in root.findall(f"{_IANA}registry"):
        registry_id = registry.get("id", "")
        if registry_id not in KINDS:
            raise ValueError(f"an unknown sub-registry {registry_id!r}")
        rows += [
            _row(record, KINDS[registry_id], people)
            for record in registry.findall(f"{_IANA}record")
        ]
    nids = [row.nid.lower() for row in rows]
    if len(set(nids)) != len(nids):
        raise ValueError("a NID registered twice")
    return sorted(rows, key=lambda row: row.nid.lower())


def registry_csv(xml_path: Path) -> str:
    """The text of ``registry.csv`` for IANA's XML at ``xml_path``: a header, then one line
    per NID, lines ending in "\\n".

    >>> registry_csv(SOURCE).splitlines()[:2]
    ['nid,kind,reference,date,template', '3gpp,formal,RFC 5279,,']
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(read_registry(xml_path))
    return out.getvalue()


def main(argv: Sequence[str]) -> int:
    """Write ``registry.csv`` from the XML named in ``argv`` (default: the packaged copy)."""
    if len(argv) > 1:
        print(f"usage: python3 {Path(__file__).name} [XML]", file=sys.stderr)
        return 2
    source = Path(argv[0]) if argv else SOURCE
    text = registry_csv(source)
    TARGET.write_bytes(text.encode("utf-8"))
    rows = list(csv.DictReader(io.StringIO(text)))
    formal = sum(row["kind"] == "formal" for row in rows)
    print(f"wrote {TARGET.relative_to(ROOT)}: {formal} formal, {len(rows) - formal} informal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
