"""OAI-PMH 2.0, both ways, against real servers on SQLite and PostgreSQL.

Harvesting: a real OAI-PMH repository (pyoai's ``oaipmh.server``, served by wsgiref on
127.0.0.1) holds ``oai_dc`` records with URN:NBNs and URLs; ``urnkit oai harvest`` reads it into
a running resolver's database, and the URNs then resolve over HTTP. Covered: full and
incremental harvests (``from=`` the last responseDate), resumption tokens, the organisation's
prefixes and the URL pattern as bounds (refusals reported, never written), deleted records,
idempotent re-harvests, and failures reported with the source and the URL.

Serving: our ``/oai`` is harvested with pyoai's client (an independent implementation), and
each error condition of §3.6 is asked for with a raw request.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

import httpx
import pytest
from oai_support import OLD, PATTERN, Upstream, add_source, harvest, next_from
from oaipmh import error
from oaipmh.client import Client
from oaipmh.metadata import MetadataRegistry, oai_dc_reader
from resolver_support import Resolver, urnkit
from services_support import Principals

from urnkit.resolver.services import Services
from urnkit.resolver.settings import Settings

OAI = "{http://www.openarchives.org/OAI/2.0/}"

# --- harvesting ----------------------------------------------------------------------------------


def test_a_full_harvest_registers_the_urns_within_bounds(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    name = f"repo-{unique}"
    u = unique
    upstream.add(
        "oai:repo:1",
        OLD,
        identifier=[
            f"URN:NBN:fi:test-{u}1",
            f"http://urn.fi/urn:nbn:FI:TEST-{u}1",
            "https://repo.example.org/items/1",
        ],
        title=["One"],
        creator=["Ann", "Bo"],
    )
    # A resolver's link is a URN, not a location; a URL off the pattern is refused.
    upstream.add(
        "oai:repo:2",
        OLD,
        identifier=[
            f"http://urn.fi/URN:NBN:fi:test-{u}2",
            "https://repo.example.org/items/2",
            "https://elsewhere.example.com/2",
        ],
    )
    # RFC 8458 §4.3: fi:other is delegated to Other Library, not the source's organisation.
    upstream.add(
        "oai:repo:3", OLD, identifier=[f"urn:nbn:fi:other-{u}3", "https://repo.example.org/items/3"]
    )
    upstream.add("oai:repo:4", OLD, identifier=["https://repo.example.org/items/4"])
    upstream.add(
        "oai:repo:5", OLD, identifier=[f"urn:nbn:fi:test-{u}5", "https://repo.example.org/items/5"]
    )
    add_source(resolver, name, upstream)

    output = harvest(resolver, name).stdout
    assert f"{name}: full, 5 items in 4 requests: 3 created, 0 changed, 0 unchanged" in output
    assert "1 without a URN:NBN, 2 refused" in output
    assert "oai:repo:2: the URL https://elsewhere.example.com/2 does not match" in output
    assert f"oai:repo:3: urn:nbn:fi:other-{u}3: the prefix 'fi:other' is not delegated" in output
    # Identify, then ListRecords in three pages of two (OAI-PMH 2.0 §3.5: resumption tokens).
    assert [r["verb"] for r in upstream.requests] == ["Identify"] + ["ListRecords"] * 3
    assert "from" not in upstream.requests[1]
    assert "resumptionToken" in upstream.requests[2]

    # RFC 8458 §4.4: the harvested URNs resolve to their locations.
    for n in (1, 2, 5):
        response = anonymous.get(f"/URN:NBN:fi:test-{u}{n}")
        assert response.status_code == 302
        assert response.headers["location"] == f"https://repo.example.org/items/{n}"
    assert anonymous.get(f"/urn:nbn:fi:other-{u}3").status_code == 404
    record = anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{u}1").json()
    assert record["owner"] == "Test Library"
    assert record["metadata"] == {"title": "One", "creators": ["Ann", "Bo"]}
    assert [loc["url"] for loc in record["locations"]] == ["https://repo.example.org/items/1"]
    history = anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{u}1/history").json()["entries"]
    assert [(e["action"], e["actor"]) for e in history] == [("created", f"oai:{name}")]

    # Harvesting the same feed again writes nothing: no new history entry.
    again = harvest(resolver, name, "--full").stdout
    assert "0 created, 0 changed, 3 unchanged" in again
    history = anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{u}1/history").json()["entries"]
    assert len(history) == 1


def test_a_malformed_url_in_an_item_is_refused_and_the_harvest_goes_on(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 3986 §3.2.2: "[" opens an IP literal, which this URL never closes. Such an
    # identifier once stopped every harvest of its source (urllib's "Invalid IPv6 URL").
    name, broken = f"repo-{unique}", "https://[repo.example.org/items/1"
    upstream.add(
        "oai:repo:1",
        OLD,
        identifier=[f"urn:nbn:fi:test-{unique}1", broken, "https://repo.example.org/items/1"],
    )
    upstream.add("oai:repo:2", OLD, identifier=[f"{broken}/urn:nbn:fi:test-{unique}2"])
    add_source(resolver, name, upstream)
    output = harvest(resolver, name).stdout
    assert "2 items in 2 requests: 1 created" in output
    assert f"oai:repo:1: the URL {broken} does not match" in output
    response = anonymous.get(f"/urn:nbn:fi:test-{unique}1")
    assert response.headers["location"] == "https://repo.example.org/items/1"


def test_an_incremental_harvest_asks_from_the_last_response_date(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    name = f"inc-{unique}"
    u = unique
    for n in (1, 2):
        upstream.add(
            f"oai:inc:{n}",
            OLD,
            identifier=[f"urn:nbn:fi:test-{u}i{n}", f"https://repo.example.org/items/{n}"],
            title=[f"Item {n}"],
        )
    add_source(resolver, name, upstream)
    harvest(resolver, name)
    first = next_from(resolver, name)
    assert first.endswith("Z")  # in the repository's granularity
    assert len(first) == 20
    upstream.requests.clear()

    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1)
    upstream.add(
        "oai:inc:3",
        later,
        identifier=[f"urn:nbn:fi:test-{u}i3", "https://repo.example.org/items/3"],
    )
    upstream.add(
        "oai:inc:2",
        later,
        identifier=[f"urn:nbn:fi:test-{u}i2", "https://repo.example.org/items/22"],
        title=["Item 2, moved"],
    )
    upstream.delete("oai:inc:1", later)  # RFC 8458 §4.1: the URN stays, its location goes
    output = harvest(resolver, name).stdout

    assert upstream.requests[1] == {
        "verb": "ListRecords",
        "metadataPrefix": "oai_dc",
        "from": first,
    }
    assert f"{name}: from={first}, 3 items" in output
    assert "1 created, 1 changed, 0 unchanged, 1 withdrawn" in output
    assert next_from(resolver, name) >= first
    assert anonymous.get(f"/urn:nbn:fi:test-{u}i3").headers["location"].endswith("/items/3")
    assert anonymous.get(f"/urn:nbn:fi:test-{u}i2").headers["location"].endswith("/items/22")
    # The withdrawn record keeps its metadata page (RFC 8458 §4.5), and says why in its history.
    withdrawn = anonymous.get(f"/urn:nbn:fi:test-{u}i1", headers={"Accept": "application/json"})
    assert withdrawn.status_code == 200
    assert withdrawn.json()["metadata"] == {"title": "Item 1"}
    history = anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{u}i1/history").json()["entries"]
    assert [e["action"] for e in history] == ["created", "withdrawn"]

    # Nothing new upstream: the next incremental harvest writes nothing.
    assert "0 created, 0 changed" in harvest(resolver, name).stdout


def test_a_busy_repository_is_asked_again_after_retry_after(
    resolver: Resolver, upstream: Upstream, unique: str
) -> None:
    name = f"busy-{unique}"
    upstream.add("oai:busy:1", OLD, identifier=[f"urn:nbn:fi:test-{unique}busy"])
    add_source(resolver, name, upstream)
    upstream.break_with = "busy"
    assert "1 created" in harvest(resolver, name).stdout
    assert [r["verb"] for r in upstream.requests] == ["Identify", "Identify", "ListRecords"]


def test_a_source_with_a_set_harvests_only_that_set(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    name = f"set-{unique}"
    upstream.add("oai:s:1", OLD, identifier=[f"urn:nbn:fi:test-{unique}t1"], setSpec=["theses"])
    upstream.add("oai:s:2", OLD, identifier=[f"urn:nbn:fi:test-{unique}t2"], setSpec=["data"])
    add_source(resolver, name, upstream, "--set", "theses")
    assert "1 created" in harvest(resolver, name).stdout
    assert upstream.requests[1]["set"] == "theses"
    assert anonymous.get(f"/urn:nbn:fi:test-{unique}t1").status_code == 200  # no location
    assert anonymous.get(f"/urn:nbn:fi:test-{unique}t2").status_code == 404


def test_a_failed_harvest_is_reported_and_keeps_its_starting_point(
    resolver: Resolver, upstream: Upstream, unique: str
) -> None:
    name = f"broken-{unique}"
    for n in range(3):
        upstream.add(f"oai:b:{n}", OLD, identifier=[f"urn:nbn:fi:test-{unique}b{n}"])
    add_source(resolver, name, upstream)
    with Upstream() as healthy:  # harvested in the same run: a failure stops no other source
        healthy.add("oai:f:1", OLD, identifier=[f"urn:nbn:fi:test-{unique}f1"])
        add_source(resolver, f"fine-{unique}", healthy)
        upstream.break_with = "http"
        done = harvest(resolver, name, f"fine-{unique}", check=False)
        assert done.returncode == 1
        assert f"fine-{unique}: full, 1 items in 2 requests: 1 created" in done.stdout
    for breakage, reported in [
        ("http", "HTTP 503 Service Unavailable"),
        ("xml", "malformed XML"),
        ("token", "badResumptionToken"),  # the repository no longer knows its token
    ]:
        upstream.break_with = breakage
        done = harvest(resolver, name, check=False)
        assert done.returncode == 1
        assert f"harvesting {name!r}: {reported}" in done.stderr
        assert upstream.base_url + "?verb=" in done.stderr  # the URL asked
    assert next_from(resolver, name) == ""  # stored only after a success


def test_sources_are_checked_when_added(resolver: Resolver, upstream: Upstream) -> None:
    bad_pattern = urnkit(
        "oai", "add-source", "x", "--organisation", "Test Library", "--base-url",
        upstream.base_url, "--url-pattern", "https://(", "--database-url", resolver.database_url,
        check=False,
    )  # fmt: skip
    assert bad_pattern.returncode == 1
    assert "is not a regular expression: missing ), unterminated subpattern at position 8" in (
        bad_pattern.stderr
    )


# --- serving -------------------------------------------------------------------------------------


def _client(resolver: Resolver) -> Client:
    registry = MetadataRegistry()
    registry.registerReader("oai_dc", oai_dc_reader)
    return Client(resolver.base_url + "/oai", registry)


def _make(api: httpx.Client, urns: list[str]) -> None:
    records = [
        {"urn": urn, "locations": [{"url": f"https://example.org/{n}"}], "metadata": {"title": urn}}
        for n, urn in enumerate(urns)
    ]
    response = api.post("/api/v1/urns:batch", json={"records": records})
    assert response.status_code == 200, response.text


def test_our_records_are_harvested_by_an_independent_client(
    resolver: Resolver, api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    start = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    ours = [f"urn:nbn:fi:test-{unique}s{n}" for n in range(130)]
    _make(api, ours)
    theirs = f"urn:nbn:fi:other-{unique}s"
    assert other.put(f"/api/v1/urns/{theirs}", json={"locations": []}).status_code == 201
    client = _client(resolver)

    identify = client.identify()
    assert identify.protocolVersion() == "2.0"
    assert identify.deletedRecord() == "no"  # RFC 8458 §4.1: never deleted
    assert identify.granularity() == "YYYY-MM-DDThh:mm:ssZ"
    assert identify.adminEmails() == [Settings().oai_admin_email]
    assert identify.baseURL() == resolver.base_url + "/oai"
    assert [f[0] for f in client.listMetadataFormats()] == ["oai_dc", "epicur"]
    assert {"fi:test", "fi:other"} <= {spec for spec, _, _ in client.listSets()}

    # 131 records since start: two pages, followed by the client's resumption tokens.
    listed = {
        header.identifier(): (header, metadata)
        for header, metadata, _ in client.listRecords(metadataPrefix="oai_dc", from_=start)
    }
    assert set(ours) | {theirs} <= set(listed)
    header, metadata = listed[ours[7]]
    assert header.setSpec() == ["fi:test"]
    assert header.datestamp() >= start
    assert metadata.getField("identifier") == [ours[7], "https://example.org/7"]
    assert metadata.getField("title") == [ours[7]]

    # Sets by prefix; "fi" holds both, as the set hierarchy says (OAI-PMH 2.0 §4.6 ... "fi:test").
    in_other = {
        h.identifier()
        for h in client.listIdentifiers(metadataPrefix="oai_dc", set="fi:other", from_=start)
    }
    assert theirs in in_other
    assert not in_other & set(ours)
    in_fi = {
        h.identifier()
        for h in client.listIdentifiers(metadataPrefix="oai_dc", set="fi", from_=start)
    }
    assert set(ours) | {theirs} <= in_fi

    # until before our records: none of them.
    try:
        before = {
            h.identifier()
            for h in client.listIdentifiers(
                metadataPrefix="oai_dc", until=start - timedelta(seconds=1)
            )
        }
    except error.NoRecordsMatchError:
        before = set()
    assert not before & set(ours)

    # GetRecord by any equivalent spelling (RFC 8141 §3).
    header, metadata, _ = client.getRecord(
        identifier=ours[3].replace("urn:nbn:fi:test", "URN:NBN:FI:TEST"), metadataPrefix="oai_dc"
    )
    assert header.identifier() == ours[3]


def _ask(resolver: Resolver, **arguments: str) -> ET.Element:
    response = httpx.get(resolver.base_url + "/oai", params=arguments)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{OAI}OAI-PMH"
    assert [child.tag for child in root][:2] == [f"{OAI}responseDate", f"{OAI}request"]
    return root


def test_pages_are_stable_while_records_are_written(
    resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    start = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ours = [f"urn:nbn:fi:test-{unique}p{n}" for n in range(110)]
    _make(api, ours)
    first = _ask(resolver, verb="ListIdentifiers", metadataPrefix="oai_dc", **{"from": start})
    token = first.find(f"{OAI}ListIdentifiers/{OAI}resumptionToken")
    assert token is not None
    assert token.text
    size = int(token.get("completeListSize", ""))
    assert token.get("cursor") == "0"
    assert len(first.findall(f"{OAI}ListIdentifiers/{OAI}header")) == 100
    _make(api, [f"urn:nbn:fi:test-{unique}late"])  # written after the list began

    # OAI-PMH 2.0 §3.5: each page's token has the cursor and the complete size; the last
    # page's token is empty.
    pages = [first]
    while token.text:
        page = _ask(resolver, verb="ListIdentifiers", resumptionToken=token.text)
        pages.append(page)
        token = page.find(f"{OAI}ListIdentifiers/{OAI}resumptionToken")
        assert token is not None
        assert token.get("cursor") == str(100 * (len(pages) - 1))
        assert token.get("completeListSize") == str(size)
    identifiers = [
        header.findtext(f"{OAI}identifier")
        for page in pages
        for header in page.findall(f"{OAI}ListIdentifiers/{OAI}header")
    ]
    assert len(identifiers) == size == len(set(identifiers))
    assert set(ours) <= set(identifiers)
    assert f"urn:nbn:fi:test-{unique}late" not in identifiers


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({}, "badVerb"),
        ({"verb": "Harvest"}, "badVerb"),
        ({"verb": "Identify", "set": "fi"}, "badArgument"),
        ({"verb": "ListRecords"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2026-13-01"}, "badArgument"),
        (
            {
                "verb": "ListRecords",
                "metadataPrefix": "oai_dc",
                "from": "2026-01-01",
                "until": "2026-01-02T00:00:00Z",
            },
            "badArgument",
        ),
        (
            {
                "verb": "ListRecords",
                "metadataPrefix": "oai_dc",
                "from": "2026-01-02",
                "until": "2026-01-01",
            },
            "badArgument",
        ),
        (
            {"verb": "ListRecords", "metadataPrefix": "oai_dc", "resumptionToken": "x"},
            "badArgument",
        ),
        ({"verb": "GetRecord", "identifier": "urn:nbn:fi:test-1"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "marcxml"}, "cannotDisseminateFormat"),
        (
            {
                "verb": "GetRecord",
                "identifier": "urn:nbn:fi:test-none-such",
                "metadataPrefix": "oai_dc",
            },
            "idDoesNotExist",
        ),
        (
            {"verb": "GetRecord", "identifier": "not a urn", "metadataPrefix": "oai_dc"},
            "idDoesNotExist",
        ),
        (
            {"verb": "ListMetadataFormats", "identifier": "urn:nbn:fi:test-none-such"},
            "idDoesNotExist",
        ),
        (
            {"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": "fi:nothing"},
            "noRecordsMatch",
        ),
        (
            {"verb": "ListRecords", "metadataPrefix": "oai_dc", "until": "2000-01-01"},
            "noRecordsMatch",
        ),
        ({"verb": "ListRecords", "resumptionToken": "not-a-token"}, "badResumptionToken"),
        ({"verb": "ListSets", "resumptionToken": "x"}, "badResumptionToken"),
    ],
)
def test_each_error_condition(resolver: Resolver, arguments: dict[str, str], code: str) -> None:
    # OAI-PMH 2.0 §3.6: errors in a 200 response, with the request echoed (§3.2) unless the
    # verb or an argument was bad.
    root = _ask(resolver, **arguments)
    errors = root.findall(f"{OAI}error")
    assert [e.get("code") for e in errors] == [code], ET.tostring(root)
    assert errors[0].text
    request = root.find(f"{OAI}request")
    assert request is not None
    assert request.text == resolver.base_url + "/oai"
    if code in ("badVerb", "badArgument"):
        assert request.attrib == {}
    else:
        assert request.attrib == arguments


def test_repeated_arguments_and_a_token_of_another_verb(
    resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    repeated = httpx.get(resolver.base_url + "/oai?verb=Identify&verb=Identify")
    assert ET.fromstring(repeated.content).find(f"{OAI}error").get("code") == "badVerb"  # type: ignore[union-attr]
    twice = "verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc"
    root = ET.fromstring(httpx.get(f"{resolver.base_url}/oai?{twice}").content)
    assert root.find(f"{OAI}error").get("code") == "badArgument"  # type: ignore[union-attr]
    # A ListIdentifiers token does not continue ListRecords.
    _make(api, [f"urn:nbn:fi:test-{unique}t{n}" for n in range(101)])
    token = _ask(resolver, verb="ListIdentifiers", metadataPrefix="oai_dc").findtext(
        f"{OAI}ListIdentifiers/{OAI}resumptionToken"
    )
    assert token
    wrong = _ask(resolver, verb="ListRecords", resumptionToken=token)
    assert wrong.find(f"{OAI}error").get("code") == "badResumptionToken"  # type: ignore[union-attr]


def test_admins_manage_sources_over_the_api(
    resolver: Resolver, admin: httpx.Client, api: httpx.Client, unique: str
) -> None:
    source = {
        "name": f"api-{unique}",
        "organisation": "Test Library",
        "base_url": "https://repo.example.org/oai",
        "url_pattern": PATTERN,
        "set_spec": "theses:2026",
    }
    created = admin.post("/api/v1/oai/sources", json=source)
    assert created.status_code == 201, created.text
    assert created.json() == source | {
        "metadata_prefix": "oai_dc",  # what a source harvests unless it says otherwise
        "granularity": None,
        "next_from": None,
        "harvested": None,
    }
    assert admin.post("/api/v1/oai/sources", json=source).status_code == 409
    bad = admin.post("/api/v1/oai/sources", json=source | {"name": "x", "url_pattern": "a{2,1}"})
    assert bad.status_code == 422
    assert bad.json()["position"] == 2
    assert "min repeat greater than max repeat" in bad.json()["detail"]
    for wrong, reason in [
        ({"organisation": "Nobody"}, "no organisation is called 'Nobody'"),
        ({"base_url": "https://repo.example.org/oai?verb=Identify"}, "without a query"),
        ({"base_url": "repo.example.org/oai"}, "not an absolute http(s) URL"),
        ({"set_spec": "a b"}, "is not a setSpec"),
        ({"metadata_prefix": "marcxml"}, "'marcxml' is not a format harvested here"),
    ]:
        refused = admin.post("/api/v1/oai/sources", json=source | {"name": "z"} | wrong)
        assert refused.status_code in (404, 422)
        assert reason in refused.json()["detail"]
    assert api.post("/api/v1/oai/sources", json=source | {"name": "y"}).status_code == 403
    listed = admin.get("/api/v1/oai/sources").json()
    assert source["name"] in [entry["name"] for entry in listed]


def test_a_harvest_refuses_urns_with_dot_segments(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 3986 §5.2.4: HTTP clients remove dot-segments, so such a URN could never resolve.
    name = f"dots-{unique}"
    bad = f"urn:nbn:fi:test-{unique}1/../{unique}2"
    upstream.add("oai:repo:1", OLD, identifier=[bad, "https://repo.example.org/items/1"])
    upstream.add(
        "oai:repo:2",
        OLD,
        identifier=[f"urn:nbn:fi:test-{unique}3", "https://repo.example.org/items/2"],
    )
    add_source(resolver, name, upstream)
    output = harvest(resolver, name).stdout
    assert "1 created" in output
    assert f"oai:repo:1: {bad}: {bad} cannot be resolved" in output
    assert "RFC 3986 §5.2.4" in output
    assert anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}3").status_code == 200
    assert anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}1").status_code == 404


def test_a_harvested_urn_of_another_namespace_leads_to_the_record(
    resolver: Resolver, upstream: Upstream, anonymous: httpx.Client, unique: str
) -> None:
    # A dc:identifier that is a URN:UUID (RFC 9562 §4) is one of metadata.identifiers; a
    # malformed one, or text that is no URN, is left out as before.
    name = f"others-{unique}"
    uuid = f"urn:uuid:{unique[:8]}-0000-4000-8000-{unique}"  # 8-4-4-4-12 hex digits
    upstream.add(
        "oai:repo:1",
        OLD,
        identifier=[
            f"urn:nbn:fi:test-{unique}1",
            "https://repo.example.org/items/1",
            uuid.upper(),
            "urn:uuid:not-a-uuid",
            "ISBN 978-0-8044-2957-3",
        ],
        title=["Other"],
    )
    add_source(resolver, name, upstream)
    assert "1 created" in harvest(resolver, name).stdout
    record = anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}1").json()
    assert record["metadata"] == {"title": "Other", "identifiers": [uuid.upper()]}
    found = anonymous.get(f"/{uuid}")  # any case of a UUID's hex digits
    assert found.status_code == 302, found.text
    assert found.headers["location"] == "https://repo.example.org/items/1"


def test_a_harvest_checks_its_items_by_the_rows_rules_as_an_import_does(
    services: Services, who: Principals, upstream: Upstream
) -> None:
    """The same URNs harvested (Demo Library's source) and imported: a prefix no organisation
    holds and a URN named again later in the feed (on its next page) are refused by both, the
    others created. The harvest's reasons are a registrant's (docs/rows.md)."""
    feed = ["urn:nbn:fi:demo-h1", "urn:nbn:se:kb-h2", "urn:nbn:fi:demo-h3", "URN:NBN:FI:DEMO-h1"]
    for n, urn in enumerate(feed, 1):
        url = f"https://repo.example.org/items/{n}"
        upstream.add(f"oai:h:{n}", OLD, identifier=[urn, url])
    services.harvest.add_source("rows", "Demo Library", upstream.base_url, PATTERN)
    report = services.harvest.harvest(services.harvest.sources(["rows"])[0])
    rejected: dict[int, str] = {}
    rows = [(n, {"urn": urn.replace("-h", "-i")}) for n, urn in enumerate(feed, 2)]
    services.transfer.import_records(
        rows, rejected=lambda line, _, why: rejected.update({line: why})
    )

    stored = {r.urn for r in services.records.records(None, limit=100)[0]}
    harvested = ["created" if urn in stored else "refused" for urn in feed]
    imported = ["refused" if line in rejected else "created" for line, _ in rows]
    assert harvested == imported == ["created", "refused", "created", "refused"]
    assert (report.created, report.changed, report.unchanged) == (2, 0, 0)
    # RFC 8458 §4.3: se:kb is delegated to no organisation.
    assert "its prefix 'se:kb' is delegated to no organisation" in rejected[3]
    assert report.refused[0] == (
        "oai:h:2: urn:nbn:se:kb-h2: the prefix 'se:kb' is not delegated to 'Demo Library' "
        "(its prefixes: fi:demo)"
    )
    # RFC 8141 §3 and RFC 8458 §4.3 (the prefix's case is not significant): URN:NBN:FI:DEMO-h1
    # is equivalent to item 1's URN; the first wins.
    assert "the URN of line 2 again" in rejected[5]
    assert report.refused[1] == (
        "oai:h:4: URN:NBN:FI:DEMO-h1: the URN of item 1 again (an equivalent URN, RFC 8141 §3): "
        "the first wins"
    )
    first = services.records.get("urn:nbn:fi:demo-h1")
    assert [loc.url for loc in first.locations] == ["https://repo.example.org/items/1"]
