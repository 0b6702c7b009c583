"""The acceptance rule as a pure function (domain.acceptance): which places of a JSON value are
refused, named by RFC 6901 JSON pointers, and that whatever it accepts survives the round trips
the databases make (JSON text, UTF-8, PostgreSQL's decimal numbers)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import (
    MAX_DEPTH,
    MAX_METADATA_BYTES,
    MAX_URN_LENGTH,
    UnacceptableError,
    UnacceptableInputError,
    acceptable,
    check_json,
    check_record,
    check_urn_length,
    json_pointer,
    violations,
)


def pointers(value: Any, location: tuple[str | int, ...] = ()) -> list[str]:
    return [json_pointer(v.location) for v in violations(value, location)]


def test_json_pointer_escapes() -> None:
    # RFC 6901 §3: "~" is written "~0" and "/" "~1"; §5: the empty pointer is the whole document
    assert json_pointer(["a/b", "m~n", 0, ""]) == "/a~1b/m~0n/0/"
    assert json_pointer([]) == ""


@pytest.mark.parametrize(
    "value",
    ["\ud800", "a\udfffb", "\x00", float("nan"), math.inf, -math.inf, 1e16, -1e300, -0.0],
)
def test_refused_values(value: Any) -> None:
    assert pointers({"a": [1, {"b": value}]}) == ["/a/1/b"]


@pytest.mark.parametrize(
    "value", ["\ufffe", "\U0001f600", "\x01", 9.99e15, 1e-300, 5e-324, 0.0, 10**100, True, None]
)
def test_accepted_values(value: Any) -> None:
    assert pointers({"a": value}) == []


def test_names_are_checked() -> None:
    found = list(violations({"x": {"\ud800": 1, "a\x00": 2}}))
    assert [json_pointer(v.location) for v in found] == ["/x/\\ud800", "/x/a\x00"]
    assert all(v.message.startswith("the name") for v in found)


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_depth_counts_from_the_metadata() -> None:
    assert pointers(nested(MAX_DEPTH)) == []
    assert pointers(nested(MAX_DEPTH + 1)) == ["/a" * MAX_DEPTH]
    body = {"records": [{"metadata": nested(MAX_DEPTH)}]}
    assert pointers(body) == []
    body = {"records": [{"metadata": nested(MAX_DEPTH + 1)}]}
    assert pointers(body) == ["/records/0/metadata" + "/a" * MAX_DEPTH]
    # A member called metadata inside metadata starts no new count.
    inner = {"metadata": {"metadata": nested(MAX_DEPTH)}}
    assert pointers(inner) == ["/metadata/metadata" + "/a" * (MAX_DEPTH - 1)]


def test_metadata_size() -> None:
    at_limit = {"t": "x" * (MAX_METADATA_BYTES - len('{"t":""}'))}
    assert pointers(at_limit, ("metadata",)) == []
    over = {"t": "é" * (MAX_METADATA_BYTES // 2)}  # two bytes each in UTF-8
    assert pointers(over, ("metadata",)) == ["/metadata"]
    assert pointers({"metadata": over}) == ["/metadata"]
    assert pointers({"other": over}) == []  # the body's size is limited elsewhere


def test_the_refusal() -> None:
    with pytest.raises(UnacceptableInputError) as caught:
        check_json({"metadata": {"a": float("nan")}}, ("body",), document=1)
    error = caught.value
    assert isinstance(error, UnacceptableError)
    assert error.status == 422
    assert error.extensions["errors"] == [
        {
            "pointer": "/metadata/a",
            "location": ["body", "metadata", "a"],
            "message": error.extensions["errors"][0]["message"],
        }
    ]
    assert "/metadata/a" in error.detail


def test_urn_length() -> None:
    check_urn_length("u" * MAX_URN_LENGTH)
    with pytest.raises(UnacceptableInputError) as caught:
        check_urn_length("u" * (MAX_URN_LENGTH + 1), ("records", 3, "urn"))
    assert caught.value.extensions["errors"][0]["pointer"] == "/records/3/urn"


def test_a_record_is_named_by_its_urn() -> None:
    with pytest.raises(UnacceptableInputError, match=r"^urn:nbn:fi:a-1: /metadata/t"):
        check_record({"urn": "urn:nbn:fi:a-1", "metadata": {"t": "\x00"}})
    with pytest.raises(UnacceptableInputError, match="2001 characters"):
        check_record({"urn": "u" * 2001})


def jsonb_like(value: Any) -> Any:
    """``value`` as PostgreSQL's jsonb gives it back: numbers as decimals without exponent."""
    text = json.dumps(value)
    return json.loads(text, parse_float=_decimal_text, parse_int=int)


def _decimal_text(text: str) -> Any:
    rendered = format(Decimal(text), "f")
    number = json.loads(rendered)
    # PostgreSQL 15: SELECT '-0.0'::jsonb gives 0.0, without the sign.
    return abs(number) if number == 0 else number


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(st.characters(exclude_categories=())),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=4), inner, max_size=4
        )
    ),
    max_leaves=20,
)


def storable(value: Any) -> bool:
    """An oracle written apart from the rule: whether PostgreSQL and SQLite store ``value``
    and give it back exactly (UTF-8 text without U+0000, numbers surviving jsonb)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return "\x00" not in value
    if isinstance(value, float):
        if not math.isfinite(value):
            return False
        return json.dumps(jsonb_like(value)) == json.dumps(value)
    if isinstance(value, list):
        return all(storable(item) for item in value)
    if isinstance(value, dict):
        return all(storable(k) and storable(v) for k, v in value.items())
    return True


@given(json_values)
def test_refused_exactly_when_not_storable(value: Any) -> None:
    # Small values (depth and size far inside the limits): refused exactly when unstorable.
    assert (not list(violations({"metadata": value}))) == storable(value)
    if storable(value):
        text = json.dumps(value, ensure_ascii=False).encode("utf-8")
        assert json.dumps(json.loads(text), sort_keys=True) == json.dumps(value, sort_keys=True)
        assert json.dumps(jsonb_like(value), sort_keys=True) == json.dumps(value, sort_keys=True)


def deep(levels: int, leaf: Any) -> Any:
    """``leaf`` inside ``levels`` lists."""
    for _ in range(levels):
        leaf = [leaf]
    return leaf


@given(
    json_values,
    st.sampled_from(["metadata", "other"]),
    st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 1),
)
def test_the_quick_answer_is_the_walks(value: Any, name: str, levels: int) -> None:
    # acceptable() answers check_json's common case without naming places: it must agree with
    # violations() on every value, at the depth limit, in metadata (counted on its own) and not.
    for whole in ({name: value}, {name: deep(levels, value)}, [{"metadata": value}, value]):
        assert acceptable(whole) == (not list(violations(whole)))


def test_the_quick_answer_sees_the_size_limit() -> None:
    big = {"t": "x" * MAX_METADATA_BYTES}
    assert not acceptable({"metadata": big})
    assert acceptable({"other": big})
    assert acceptable({"metadata": big}) == (not list(violations({"metadata": big})))
