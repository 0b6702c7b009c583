"""epicur (xepicur) over OAI-PMH, both ways, against real servers on SQLite and PostgreSQL.

Harvesting: the local OAI-PMH repository (pyoai's server, ``oai_support.Upstream``) serves epicur
records written here from DNB's published format; ``urnkit oai harvest`` applies each update
status to a running resolver, under the source organisation's prefixes and its URL pattern.

Serving: our ``/oai`` lists epicur with its schema and namespace; its epicur records have the
element structure of the schema, and our own harvester reads them back into a second resolver.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import httpx
from oai_support import OLD, Upstream, add_source, harvest
from resolver_support import Resolver, Server, fresh_database, set_up_resolver, urnkit

OAI = "{http://www.openarchives.org/OAI/2.0/}"
XSI = "{http://www.w3.org/2001/XMLSchema-instance}"
# xepicur, as DNB publishes it: the reference description at
# https://www.persistent-identifier.de/?link=210 and the schema xepicur.xsd, version 1.0.
EPICUR = "urn:nbn:de:1111-2004033116"
SCHEMA = "http://www.persistent-identifier.de/xepicur/version1.0/xepicur.xsd"
E = "{" + EPICUR + "}"
ROLE = ' role="primary"'


def xepicur(
    status: str, urn: str, *urls: tuple[str, str], primary: int = 0, scheme: str = "urn:nbn:fi"
) -> str:
    """An epicur record as DNB's reference description gives one: administrative_data with the
    delivery's update_status (and a transfer), then a record of the URN's identifier and one
    resource per URL: its identifier (scheme "url", type "frontpage", role "primary" for the
    ``primary``-th) and its format (scheme "imt"). ``urls`` are (URL, media type)."""
    resources = "".join(
        '<resource><identifier scheme="url" type="frontpage"'
        f"{ROLE if n == primary else ''}>{url}</identifier>"
        f'<format scheme="imt">{media}</format></resource>'
        for n, (url, media) in enumerate(urls)
    )
    return (
        f'<epicur xmlns="{EPICUR}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:schemaLocation="{EPICUR} {SCHEMA}">'
        f'<administrative_data><delivery><update_status type="{status}"/>'
        '<transfer type="http"/></delivery></administrative_data>'
        f'<record><identifier scheme="{scheme}">{urn}</identifier>{resources}</record></epicur>'
    )


def item(number: str, media: str = "text/html") -> tuple[str, str]:
    return (f"https://repo.example.org/items/{number}", media)


def locations(client: httpx.Client, urn: str) -> list[tuple[str, int, str | None]]:
    record = client.get(f"/api/v1/urns/{urn}")
    assert record.status_code == 200, record.text
    return [(loc["url"], loc["priority"], loc["media_type"]) for loc in record.json()["locations"]]


def test_an_epicur_harvest_applies_each_update_status(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    name = f"epicur-{unique}"
    urn = {n: f"urn:nbn:fi:test-{unique}e{n}" for n in range(1, 14)}
    feed = {
        # The primary URL first, though it is written second.
        "01": xepicur("urn_new", urn[1], item("11", "application/pdf"), item("1"), primary=1),
        # DNB's harvester registers a URN delivered with url_update_general, too.
        "02": xepicur("url_update_general", urn[2], item("2")),
        "03": xepicur("url_insert", urn[3], item("3")),  # not registered: nothing to add to
        "04": xepicur("urn_alternative", urn[4], item("4")),
        "05": xepicur("url_move", urn[5], item("5")),  # no such status
        "06": f'<epicur xmlns="{EPICUR}"><administrative_data><delivery>'
        '<update_status type="urn_new"/></delivery></administrative_data></epicur>',  # no record
        # RFC 8458 §4.3: fi:other is Other Library's.
        "07": xepicur("urn_new", f"urn:nbn:fi:other-{unique}e7", item("7")),
        "08": xepicur("urn_new", urn[8], item("8"), ("https://elsewhere.example.com/8", "x/y")),
        "10": xepicur("urn_new", urn[10], item("10")),
        "11": xepicur("urn_new", urn[11], item("11"), scheme="url"),
        "12": xepicur("urn_new", urn[12], item("12", "pdf")),
    }
    for key, xml in feed.items():
        upstream.add(f"oai:e:{key}", OLD, epicur=[xml])
    # Dublin Core where epicur is asked for.
    dc = '<dc xmlns="http://www.openarchives.org/OAI/2.0/oai_dc/"/>'
    upstream.add("oai:e:09", OLD, epicur=[dc])
    add_source(resolver, name, upstream, "--metadata-prefix", "epicur")

    output = harvest(resolver, name).stdout
    assert upstream.requests[1] == {"verb": "ListRecords", "metadataPrefix": "epicur"}
    assert f"{name}: full, 12 items in 7 requests: 4 created, 0 changed, 0 unchanged" in output
    assert "0 without a URN:NBN, 9 refused" in output
    for refusal in [
        f"oai:e:03: {urn[3]}: {urn[3]} is not registered; url_insert changes a registered URN",
        "oai:e:04: the update status urn_alternative is not applied: it registers another "
        "persistent identifier",
        "oai:e:05: the update status 'url_move' is unknown (known: urn_new, urn_new_version, "
        "url_update_general, url_update, url_insert, url_delete, urn_alternative)",
        "oai:e:06: epicur has no record",
        f"oai:e:07: urn:nbn:fi:other-{unique}e7: the prefix 'fi:other' is not delegated",
        "oai:e:08: the URL https://elsewhere.example.com/8 does not match the source's URL pattern",
        "oai:e:09: the metadata is {http://www.openarchives.org/OAI/2.0/oai_dc/}dc, not an "
        f"epicur element ({EPICUR})",
        "oai:e:11: record 1 must have one identifier with a urn:nbn scheme and a URN (it has "
        "['url'])",
        "oai:e:12: record 1: 'pdf' is not a media type (RFC 6838)",
    ]:
        assert refusal in output, output
    for n in (3, 4, 5, 6, 11, 12):
        assert anonymous.get(f"/api/v1/urns/{urn[n]}").status_code == 404

    # RFC 8458 §4.4: the registered URNs resolve to their primary URL.
    assert anonymous.get(f"/{urn[1]}").headers["location"].endswith("/items/1")
    base = "https://repo.example.org/items/"
    assert locations(anonymous, urn[1]) == [
        (base + "1", 1, "text/html"),
        (base + "11", 2, "application/pdf"),
    ]
    assert locations(anonymous, urn[2]) == [(base + "2", 1, "text/html")]
    assert locations(anonymous, urn[8]) == [(base + "8", 1, "text/html")]

    # Later: URLs inserted, deleted and updated; a new version's URN; an item deleted.
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1)
    upstream.add("oai:e:01", later, epicur=[xepicur("url_insert", urn[1], item("13"), item("1"))])
    upstream.add("oai:e:02", later, epicur=[xepicur("url_delete", urn[2], item("2"))])
    upstream.add("oai:e:08", later, epicur=[xepicur("url_update", urn[8], item("80"))])
    upstream.add("oai:e:13", later, epicur=[xepicur("urn_new_version", urn[13], item("13"))])
    upstream.delete("oai:e:10", later)
    output = harvest(resolver, name).stdout
    assert "5 items" in output
    assert "1 created, 3 changed, 0 unchanged, 1 withdrawn" in output
    assert locations(anonymous, urn[1]) == [
        (base + "1", 1, "text/html"),
        (base + "11", 2, "application/pdf"),
        (base + "13", 3, "text/html"),
    ]
    # A URN is never deleted (RFC 8458 §4.1): without URLs it shows its landing page.
    assert locations(anonymous, urn[2]) == []
    assert anonymous.get(f"/{urn[2]}").status_code == 200
    assert locations(anonymous, urn[8]) == [(base + "80", 1, "text/html")]
    assert locations(anonymous, urn[10]) == []
    assert anonymous.get(f"/{urn[13]}").headers["location"].endswith("/items/13")
    history = anonymous.get(f"/api/v1/urns/{urn[1]}/history").json()["entries"]
    assert [(e["action"], e["actor"]) for e in history] == [
        ("created", f"oai:{name}"),
        ("harvested", f"oai:{name}"),
    ]

    # Each status applied again changes nothing: a harvest of the same feed writes nothing.
    again = harvest(resolver, name, "--full").stdout
    assert "0 created, 0 changed, 4 unchanged, 0 withdrawn" in again
    assert len(anonymous.get(f"/api/v1/urns/{urn[1]}/history").json()["entries"]) == 2
    listed = urnkit("oai", "sources", "--database-url", resolver.database_url).stdout
    assert [line.split("\t")[7] for line in listed.splitlines() if line.startswith(name)] == [
        "epicur"
    ]


def _ask(resolver: Resolver, **arguments: str) -> ET.Element:
    response = httpx.get(resolver.base_url + "/oai", params=arguments)
    assert response.status_code == 200
    root = ET.fromstring(response.content)
    assert root.find(f"{OAI}error") is None, response.text
    return root


def _check_epicur(metadata: ET.Element | None, urn: str, urls: list[dict[str, Any]]) -> None:
    """The element structure xepicur.xsd gives an epicur record: administrative_data /
    delivery / update_status, then record: identifier (the URN), one resource per URL
    (identifier scheme "url", typed "frontpage" only when it is an HTML landing page, the first
    "primary"; then format scheme "imt")."""
    assert metadata is not None
    [epicur] = list(metadata)
    assert epicur.tag == f"{E}epicur"
    assert epicur.get(f"{XSI}schemaLocation") == f"{EPICUR} {SCHEMA}"
    assert [child.tag for child in epicur] == [f"{E}administrative_data", f"{E}record"]
    [delivery] = list(epicur[0])
    assert delivery.tag == f"{E}delivery"
    assert [(c.tag, c.attrib) for c in delivery] == [
        (f"{E}update_status", {"type": "url_update_general"})
    ]
    record = epicur[1]
    assert [child.tag for child in record] == [f"{E}identifier"] + [f"{E}resource"] * len(urls)
    assert record[0].attrib == {"scheme": "urn:nbn:fi"}
    assert record[0].text == urn
    for n, (resource, location) in enumerate(zip(record[1:], urls, strict=True)):
        assert [child.tag for child in resource] == [f"{E}identifier", f"{E}format"]
        role = {"role": "primary"} if n == 0 else {}
        page = {"type": "frontpage"} if location["media_type"] == "text/html" else {}
        assert resource[0].attrib == {"scheme": "url"} | page | role
        assert resource[0].text == location["url"]
        assert resource[1].attrib == {"scheme": "imt"}
        assert resource[1].text == location["media_type"]


def test_our_epicur_has_the_schema_structure_and_is_harvested_back(
    resolver: Resolver, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    start = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ours = {
        f"urn:nbn:fi:test-{unique}r1": [
            {"url": f"https://example.org/{unique}/1", "priority": 1, "media_type": "text/html"},
            {
                "url": f"https://example.org/{unique}/1.pdf",
                "priority": 2,
                "media_type": "application/pdf",
            },
        ],
        f"urn:nbn:fi:test-{unique}r2": [],
    }
    for urn, urls in ours.items():
        assert api.put(f"/api/v1/urns/{urn}", json={"locations": urls}).status_code == 201

    # OAI-PMH 2.0 §4.4: each format with its schema and namespace.
    formats = _ask(resolver, verb="ListMetadataFormats").iterfind(
        f"{OAI}ListMetadataFormats/{OAI}metadataFormat"
    )
    assert [
        (f.findtext(f"{OAI}metadataPrefix"), f.findtext(f"{OAI}schema"))
        for f in formats
        if f.findtext(f"{OAI}metadataNamespace") == EPICUR
    ] == [("epicur", SCHEMA)]

    for urn, urls in ours.items():
        got = _ask(resolver, verb="GetRecord", identifier=urn, metadataPrefix="epicur")
        _check_epicur(got.find(f"{OAI}GetRecord/{OAI}record/{OAI}metadata"), urn, urls)
    listed = _ask(resolver, verb="ListRecords", metadataPrefix="epicur", **{"from": start})
    for record in listed.iterfind(f"{OAI}ListRecords/{OAI}record"):
        urn = record.findtext(f"{OAI}header/{OAI}identifier", "")
        if urn in ours:
            _check_epicur(record.find(f"{OAI}metadata"), urn, ours.pop(urn))
    assert not ours  # both listed

    # Our harvester reads our epicur back, into a resolver of its own.
    kind = "sqlite" if resolver.database_url.startswith("sqlite") else "postgresql"
    with fresh_database(kind, tmp_path) as second_url:
        set_up_resolver(second_url)
        at = ("--database-url", second_url)
        urnkit(
            "oai", "add-source", "ours", "--organisation", "Test Library", "--base-url",
            resolver.base_url + "/oai", "--url-pattern", r"https://example\.org/.*",
            "--metadata-prefix", "epicur", "--set", "fi:test", *at,
        )  # fmt: skip
        output = urnkit("oai", "harvest", *at).stdout
        assert "ours: full" in output
        with Server(second_url) as second, httpx.Client(base_url=second.base_url) as client:
            for n in (1, 2):
                urn = f"urn:nbn:fi:test-{unique}r{n}"
                assert locations(client, urn) == locations(api, urn)
