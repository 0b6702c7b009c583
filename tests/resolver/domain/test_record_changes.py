"""What each change in a record's history changed (``domain.changes``): a record compared with
itself differs in nothing, the differences carry the earlier state to the later one, and the
order of metadata keys is no difference (RFC 8259 §4: an object's members are unordered).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import Difference, HistoryEntry, changes, differences

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)
URLS = st.sampled_from([f"https://example.org/{n}" for n in range(6)])
LOCATIONS = st.lists(
    st.fixed_dictionaries(
        {
            "url": URLS,
            "priority": st.integers(0, 3),
            "label": st.none() | st.sampled_from(["copy", "PDF"]),
            "media_type": st.none() | st.just("text/html"),
            "organisation": st.sampled_from(["A", "B"]),
            "restricted_to": st.none() | st.just("reading-room"),
        }
    ),
    max_size=4,
    unique_by=lambda location: location["url"],
).map(lambda found: sorted(found, key=lambda location: int(str(location["priority"]))))
RECORDS = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["reserved", "active", "deactivated"]),
        "metadata": st.dictionaries(st.sampled_from(["title", "creator", "x"]), JSON, max_size=3),
        "locations": LOCATIONS,
        "successors": st.lists(st.sampled_from(["URN:NBN:fi-1", "URN:NBN:fi-2"]), max_size=2),
        "note": st.none() | st.sampled_from(["moved", "withdrawn"]),
    }
)
T = datetime(2026, 1, 1, tzinfo=UTC)


def applied(before: dict[str, Any], found: list[Difference]) -> dict[str, Any]:
    """``before`` with each difference's ``after`` side put in place."""
    result = {**before, "metadata": dict(before["metadata"])}
    located = {loc["url"]: dict(loc) for loc in before["locations"]}
    order: list[str] = [loc["url"] for loc in before["locations"]]
    for difference in found:
        if difference.field == "metadata":
            if difference.kind == "removed":
                del result["metadata"][difference.key]
            else:
                result["metadata"][difference.key] = difference.after
        elif difference.field == "location":
            assert difference.key is not None
            if difference.kind == "removed":
                del located[difference.key]
            elif difference.kind == "added":
                located[difference.key] = dict(difference.after)
                order.append(difference.key)
            else:
                located[difference.key][str(difference.attribute)] = difference.after
        elif difference.field == "order":
            order = [*difference.after, *(url for url in order if url not in difference.after)]
        else:
            result[difference.field] = (
                {"successors": []}.get(difference.field)
                if (difference.kind == "removed")
                else difference.after
            )
    result["locations"] = [located[url] for url in order if url in located]
    return result


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The compared fields, the locations by URL."""
    return {
        **record,
        "locations": {loc["url"]: loc for loc in record["locations"]},
    }


@given(RECORDS)
def test_a_record_differs_from_itself_in_nothing(record: dict[str, Any]) -> None:
    assert differences(record, record) == []


@given(RECORDS, RECORDS)
def test_the_differences_carry_one_state_to_the_other(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    found = differences(before, after)
    result = applied(before, found)
    assert comparable(result) == comparable(after)
    kept = [
        loc["url"] for loc in result["locations"] if loc["url"] in comparable(before)["locations"]
    ]
    assert kept == [
        loc["url"] for loc in after["locations"] if loc["url"] in comparable(before)["locations"]
    ]


@given(RECORDS, st.randoms())
def test_the_order_of_metadata_keys_is_no_difference(record: dict[str, Any], random: Any) -> None:
    keys = list(record["metadata"])
    random.shuffle(keys)
    shuffled = {**record, "metadata": {key: record["metadata"][key] for key in keys}}
    assert differences(record, shuffled) == []


def test_a_value_of_another_json_type_is_a_change() -> None:
    found = differences({"metadata": {"a": 1, "b": 1.0}}, {"metadata": {"a": True, "b": 1}})
    assert [str(d) for d in found] == ["metadata 'a' changed: 1 → True"]


def test_each_entry_is_compared_with_the_one_before() -> None:
    one = {"status": "reserved"}
    two = {"status": "active", "locations": [{"url": "https://example.org/1", "priority": 1}]}
    three = {
        "status": "active",
        "locations": [{"url": "https://example.org/1", "priority": 2, "label": "copy"}],
    }
    entries = [
        HistoryEntry(T, action, "Demo Library (token 1)", record)
        for action, record in (("reserved", one), ("replaced", two), ("patched", three))
    ]
    found = changes(entries)
    assert [(c.action, c.actor) for c in found] == [(e.action, e.actor) for e in entries]
    assert [[str(d) for d in c.differences] for c in found] == [
        ["status added: 'reserved'"],
        ["status changed: 'reserved' → 'active'", "location https://example.org/1 added"],
        [
            "location https://example.org/1 label changed: None → 'copy'",
            "location https://example.org/1 priority changed: 1 → 2",
        ],
    ]


def test_a_reordering_is_told() -> None:
    first = {"url": "https://example.org/1", "priority": 1}
    second = {"url": "https://example.org/2", "priority": 1}
    found = differences({"locations": [first, second]}, {"locations": [second, first]})
    assert found == [
        Difference(
            "order",
            "changed",
            before=[first["url"], second["url"]],
            after=[second["url"], first["url"]],
        )
    ]
