"""The records the staff pages list (``overview.held_records``), on SQLite and PostgreSQL: its
organisation's and those granted to it (an admin's: all), the newest first, by status, prefix,
URN or title, a page at a time; and URNs reserved in a prefix, then listed and filled in
through the API's calls.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from services_support import HERE, THERE, Principals

from urnkit.resolver.domain import InvalidURNError, UnacceptableError
from urnkit.resolver.services import Services

DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def registered(services: Services, who: Principals) -> None:
    """Demo Library: -1 "Annual report", -2 "Map" (deactivated), -3 granted to Other Library;
    Other Library: one record, "Annual report" too."""
    services.records.put(who.demo, "URN:NBN:fi:demo-1", HERE, {"title": "Annual report"})
    services.records.put(who.demo, "URN:NBN:fi:demo-2", HERE, {"title": "Map"})
    services.records.deactivate(who.demo, "URN:NBN:fi:demo-2", None, [])
    services.records.put(who.demo, "URN:NBN:fi:demo-3", HERE, {"title": "Letters"})
    services.grants.grant(who.demo, "URN:NBN:fi:demo-3", "Other Library")
    services.records.put(who.other, "URN:NBN:fi:demox-1", THERE, {"title": "Annual report"})


def urns(services: Services, *args: object, **kwargs: object) -> list[str]:
    found, _ = services.overview.held_records(*args, **kwargs)  # type: ignore[arg-type]
    return [record.urn for record in found]


@pytest.mark.usefixtures("registered")
def test_a_registrant_lists_its_own_and_granted_records(
    services: Services, who: Principals
) -> None:
    assert urns(services, who.demo) == [f"URN:NBN:fi:demo-{n}" for n in (3, 2, 1)]
    assert urns(services, who.other) == ["URN:NBN:fi:demox-1", "URN:NBN:fi:demo-3"]
    assert len(urns(services, who.admin)) == 4


@pytest.mark.usefixtures("registered")
def test_the_list_is_filtered_by_status_prefix_urn_and_title(
    services: Services, who: Principals
) -> None:
    assert urns(services, who.demo, status="deactivated") == ["URN:NBN:fi:demo-2"]
    assert urns(services, who.other, prefix="FI:DEMOX") == ["URN:NBN:fi:demox-1"]
    assert urns(services, who.demo, text="urn:nbn:FI:demo-3") == ["URN:NBN:fi:demo-3"]
    assert urns(services, who.demo, text="urn:nbn:fi:demox-1") == []  # not Demo Library's
    assert urns(services, who.demo, text="annual") == ["URN:NBN:fi:demo-1"]
    assert urns(services, who.demo, text="annual", status="deactivated") == []


@pytest.mark.usefixtures("registered")
def test_pages_follow_one_another(services: Services, who: Principals) -> None:
    first, cursor = services.overview.held_records(who.demo, limit=2)
    assert cursor is not None
    rest, end = services.overview.held_records(who.demo, cursor=cursor, limit=2)
    assert [r.urn for r in first + rest] == [f"URN:NBN:fi:demo-{n}" for n in (3, 2, 1)]
    assert end is None


def test_a_refused_filter_names_its_field(services: Services, who: Principals) -> None:
    with pytest.raises(UnacceptableError) as status:
        services.overview.held_records(who.demo, status="lost")
    assert status.value.extensions["field"] == "status"
    with pytest.raises(UnacceptableError) as text:
        services.overview.held_records(who.demo, text="a\x07b")
    assert text.value.extensions == {"position": 1}  # the caller's search box
    with pytest.raises(InvalidURNError) as urn:
        services.overview.held_records(who.demo, text="urn:nbn")
    assert "field" not in urn.value.extensions
    with pytest.raises((InvalidURNError, UnacceptableError)) as prefix:
        services.overview.held_records(who.demo, prefix="fi demo")
    assert prefix.value.extensions["field"] == "prefix"


@DB_SETTINGS
@given(text=st.text(max_size=12))
def test_any_text_finds_only_the_principals_records_or_is_refused(
    services: Services, who: Principals, text: str
) -> None:
    stored = text.replace("\x00", "")  # U+0000 is refused on PostgreSQL, and searched for
    services.records.put(who.other, "URN:NBN:fi:demox-9", HERE, {"title": stored})
    refusals: list[dict[str, object]] = []
    try:
        assert urns(services, who.demo, text=text) == []
    except (InvalidURNError, UnacceptableError) as error:
        refusals.append(error.extensions)
    # Refused only as empty, as a URN that is not one, or for a control character's position.
    assert refusals == [] or not text or text[:4].lower() == "urn:" or "position" in refusals[0]


def test_reserved_urns_are_listed_and_one_filled_in(services: Services, who: Principals) -> None:
    reserved = services.records.generate(who.demo, "fi:demo", 3)
    listed, _ = services.overview.held_records(who.demo, status="reserved")
    assert [r.urn for r in listed] == [r.urn for r in reversed(reserved)]
    services.records.put(who.demo, reserved[1].urn, HERE, {"title": "Filled in"})
    still = urns(services, who.demo, status="reserved")
    assert still == [reserved[2].urn, reserved[0].urn]
    record = services.records.get(reserved[1].urn)
    assert (record.status, record.metadata["title"]) == ("active", "Filled in")
    actions = [e.action for e in services.records.history(reserved[1].urn)]
    assert actions == ["reserved", "replaced"]
