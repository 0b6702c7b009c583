"""The OAI-PMH grammars, by property: datestamps, resumption tokens, oai_dc read back, and a
repository that answers every request, however malformed, with an OAI-PMH document."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations.dublin_core import (
    ELEMENTS,
    OAI_PMH,
    metadata_from_oai_dc,
    oai_dc_element,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.harvest import urn_in
from urnkit.resolver.services.oai_repository import (
    VERBS,
    OAIError,
    Repository,
    datestamp,
    parse_datestamp,
)
from urnkit.resolver.settings import Settings
from urnkit.resolver.store import Store

MOMENT = datetime(2026, 1, 1, tzinfo=UTC)
SECONDS = st.datetimes(
    min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=0))
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1
)


@given(SECONDS)
def test_a_datestamp_reads_back(moment: datetime) -> None:
    # OAI-PMH 2.0 §3.3.1: UTCdatetime, YYYY-MM-DDThh:mm:ssZ.
    assert parse_datestamp(datestamp(moment)) == (moment, False)


@given(st.dates(min_value=date(1000, 1, 1)))
def test_a_day_is_its_midnight(day: date) -> None:
    assert parse_datestamp(day.isoformat()) == (
        datetime(day.year, day.month, day.day, tzinfo=UTC),
        True,
    )


SHAPE = re.compile(r"\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\dZ)?", re.ASCII)


@given(st.text().filter(lambda text: not SHAPE.fullmatch(text)))
@example("2026-01-01T00:00:00")
@example("2026-01-01 00:00:00Z")
@example("2026-01-01T00:00Z")
def test_anything_else_is_a_bad_argument(text: str) -> None:
    with pytest.raises(OAIError) as raised:
        parse_datestamp(text)
    assert raised.value.code == "badArgument"
    assert repr(text) in raised.value.message


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z"])
def test_impossible_moments_are_bad_arguments(text: str) -> None:
    with pytest.raises(OAIError, match="is not a datestamp"):
        parse_datestamp(text)


@given(
    st.dictionaries(
        st.sampled_from([e for e in ELEMENTS if e != "identifier"]),
        st.lists(TEXT, min_size=1, max_size=3),
    )
)
def test_oai_dc_reads_back_as_the_metadata_it_was_written_from(
    values: dict[str, list[str]],
) -> None:
    metadata = {
        element if len(texts) == 1 else element + "s": texts[0] if len(texts) == 1 else texts
        for element, texts in values.items()
    }
    record = Record(
        "urn:nbn:fi-1",
        "urn:nbn:fi-1",
        "fi",
        "active",
        "Org",
        MOMENT,
        MOMENT,
        locations=(Location("https://example.org/1"),),
        metadata=metadata,
    )
    dc = ET.fromstring(ET.tostring(oai_dc_element(record)))
    assert metadata_from_oai_dc(dc) == metadata


@pytest.mark.parametrize(
    ("identifier", "urn"),
    [
        ("URN:NBN:fi-fe2010", "URN:NBN:fi-fe2010"),
        (" urn:nbn:se:uu:diva-1 ", "urn:nbn:se:uu:diva-1"),
        ("http://urn.fi/URN:NBN:fi-fe2010", "URN:NBN:fi-fe2010"),
        (
            "https://nbn-resolving.org/urn:nbn:de:gbv:089-3321752945",
            "urn:nbn:de:gbv:089-3321752945",
        ),
        ("http://urn.kb.se/resolve?urn=urn:nbn:se:uu:diva-1", None),  # a query: a location
        ("https://example.org/items/1", None),
        ("doi:10.1000/1", None),
        ("https://[urn.fi/URN:NBN:fi-fe2010", None),  # RFC 3986 §3.2.2: an IP literal unclosed
    ],
)
def test_urns_in_identifiers(identifier: str, urn: str | None) -> None:
    assert urn_in(identifier) == urn


@pytest.fixture(scope="module")
def repository() -> Iterator[Repository]:
    store = Store("sqlite://")
    store.upgrade()
    services = Services(store)
    services.admin.create_organisation("Library")
    services.admin.delegate("Library", "fi:lib")
    principal = services.access.authenticate(services.admin.create_token("Library", "admin"))
    for n in range(5):
        services.records.put(
            principal, f"urn:nbn:fi:lib-{n}", [Location(f"https://example.org/{n}")], {}
        )
    yield Repository(services.store, "admin@example.org", page_size=2)
    store.close()


NAMES = st.sampled_from(
    ["verb", "metadataPrefix", "identifier", "from", "until", "set", "resumptionToken", "x"]
)
VALUES = st.one_of(
    st.sampled_from([*VERBS, "oai_dc", "epicur", "fi:lib", "urn:nbn:fi:lib-1", "2026-01-01"]),
    SECONDS.map(datestamp),
    st.text(max_size=30),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(NAMES, VALUES), max_size=5))
@example([("verb", "ListRecords"), ("metadataPrefix", "\x1f")])
def test_every_request_gets_an_oai_pmh_document(
    repository: Repository, arguments: list[tuple[str, str]]
) -> None:
    # OAI-PMH 2.0 §3.6: whatever the request, the answer is a response or an error, never a
    # failure; a resumption token we issued continues its list.
    root = ET.fromstring(repository.respond(arguments, "http://example.org/oai"))
    assert root.tag == f"{{{OAI_PMH}}}OAI-PMH"
    token = root.findtext(f".//{{{OAI_PMH}}}resumptionToken")
    if token:
        verb = root[-1].tag.rpartition("}")[2]
        nxt = ET.fromstring(
            repository.respond([("verb", verb), ("resumptionToken", token)], "http://x/oai")
        )
        assert nxt.find(f"{{{OAI_PMH}}}error") is None


def _forged(fields: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()


@pytest.mark.parametrize(
    "token",
    [
        _forged({"verb": "ListRecords"}),
        _forged(["ListRecords", None, None, "2026-01-01T00:00:00", None, 0, 1]),  # naive
        _forged(["ListRecords", None, None, "2026-01-01T00:00:00+00:00", {"a": 1}, 0, 1]),
        _forged(["ListRecords", None, None, "2026-01-01T00:00:00+00:00", [], 0, 1]),
        _forged(["ListRecords", None, None, "yesterday", None, 0, 1]),
        _forged(["ListRecords", None, None, "2026-01-01T00:00:00+00:00", None, 0, 1, "marc"]),
        "%%%",
    ],
)
def test_forged_tokens_are_bad_resumption_tokens(repository: Repository, token: str) -> None:
    root = ET.fromstring(
        repository.respond([("verb", "ListRecords"), ("resumptionToken", token)], "http://x/oai")
    )
    assert root.find(f"{{{OAI_PMH}}}error").get("code") == "badResumptionToken"  # type: ignore[union-attr]


def test_a_list_in_epicur_continues_in_epicur(repository: Repository) -> None:
    # OAI-PMH 2.0 §3.5: a resumption token continues the list it began, in its format.
    epicur = "{urn:nbn:de:1111-2004033116}epicur"
    arguments = [("verb", "ListRecords"), ("metadataPrefix", "epicur")]
    formats = []
    while True:
        root = ET.fromstring(repository.respond(arguments, "http://x/oai"))
        formats += [element.tag for element in root.iterfind(f".//{{{OAI_PMH}}}metadata/*")]
        token = root.findtext(f".//{{{OAI_PMH}}}resumptionToken")
        if not token:
            break
        arguments = [("verb", "ListRecords"), ("resumptionToken", token)]
    assert formats == [epicur] * 5


@pytest.mark.parametrize("character", ["\x1f", "\x00", "\ufffe"])
def test_an_argument_xml_cannot_hold_is_a_bad_argument(
    repository: Repository, character: str
) -> None:
    # OAI-PMH 2.0 §3.2: the request element echoes only legal arguments, and XML 1.0 §2.2
    # cannot hold these characters: the answer is badArgument, without attributes.
    root = ET.fromstring(
        repository.respond(
            [("verb", "ListRecords"), ("metadataPrefix", f"oai{character}dc")], "http://x/oai"
        )
    )
    assert root.find(f"{{{OAI_PMH}}}error").get("code") == "badArgument"  # type: ignore[union-attr]
    assert root.find(f"{{{OAI_PMH}}}request").attrib == {}  # type: ignore[union-attr]


# OAI-PMH 2.0's schema (https://www.openarchives.org/OAI/2.0/OAI-PMH.xsd), emailType: an
# adminEmail is \S+@(\S+\.)+\S+, a dot after the "@".
_EMAIL_TYPE = re.compile(r"\S+@(\S+\.)+\S+")


def test_identifys_default_admin_email_is_an_oai_pmh_email_type() -> None:
    # OAI-PMH 2.0 §4.2 (Identify): adminEmail, of the schema's emailType.
    services = Services(Store("sqlite://"))
    services.store.upgrade()
    repository = Repository(services.store, Settings().oai_admin_email)
    answer = ET.fromstring(repository.respond([("verb", "Identify")], "https://r.example/oai"))
    emails = [element.text or "" for element in answer.iter(f"{{{OAI_PMH}}}adminEmail")]
    assert emails
    assert all(_EMAIL_TYPE.fullmatch(email) for email in emails)
    assert not _EMAIL_TYPE.fullmatch("urnkit@localhost")  # the former default: no dot
