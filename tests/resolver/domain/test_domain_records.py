"""Records' pure rules (``urnkit.resolver.domain.records``): properties and the RFCs' own examples.

* :func:`with_q_component`: RFC 8141 §2.3.2, a URN's q-component is copied into the locator's
  query component (appended with ``&`` to a query the locator already has; a fragment stays last).
* :func:`merge_patch`: RFC 7396, against the RFC's §2 pseudocode, its §3 example and the
  Appendix A table verbatim.
"""

from __future__ import annotations

import copy
import json
import pickle
import string
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit

import pytest
from domain_strategies import json_keys, json_objects, json_values, locators, q_components
from hypothesis import example, given, reject
from hypothesis import strategies as st

from urnkit.resolver.domain import (
    Location,
    Record,
    UnacceptableError,
    media_type_of,
    merge_patch,
    read_targets,
    target_line,
    with_q_component,
)
from urnkit.resolver.services.locations import check_locations
from urnkit.urn import URN

# --- records between processes ------------------------------------------------------------------

_optional_text = st.none() | st.text(max_size=8)
_locations = st.builds(
    Location,
    locators(),
    st.integers(),
    _optional_text,
    _optional_text,
    _optional_text,
    _optional_text,
)


@given(
    record=st.builds(
        Record,
        st.text(max_size=12),
        st.text(max_size=12),
        st.text(max_size=8),
        st.sampled_from(["reserved", "active", "deactivated"]),
        st.text(max_size=8),
        st.datetimes(timezones=st.just(UTC)),
        st.datetimes(timezones=st.just(UTC)),
        st.lists(_locations, max_size=3).map(tuple),
        json_objects,
        st.lists(st.text(max_size=8), max_size=2).map(tuple),
        _optional_text,
        st.lists(st.text(max_size=8), max_size=2).map(tuple),
    )
)
def test_a_record_comes_back_from_pickle_whole(record: Record) -> None:
    # An import's child process sends its checked records back pickled (services.prefetch).
    again = pickle.loads(pickle.dumps(record))
    assert again == record
    assert [type(loc) for loc in again.locations] == [Location] * len(record.locations)


# --- with_q_component: RFC 8141 §2.3.2 -----------------------------------------------------------


def test_rfc8141_weather_example() -> None:
    # RFC 8141 §2.3.2: "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21
    # T02:56:15Z" resolved to an HTTP URI "might look like" "https://weatherapp.example?op=map
    # &lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z" (line breaks removed).
    urn = URN.parse(
        "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z"
    )
    assert urn.q_component is not None
    assert (
        with_q_component("https://weatherapp.example", urn.q_component)
        == "https://weatherapp.example?op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.org/a", "https://example.org/a?lang=fi"),
        ("https://example.org/a?x=1", "https://example.org/a?x=1&lang=fi"),
        ("https://example.org/a?x=1#top", "https://example.org/a?x=1&lang=fi#top"),
        ("https://example.org/a#top", "https://example.org/a?lang=fi#top"),
        ("https://example.org/a?", "https://example.org/a?lang=fi"),
        ("https://example.org/a?x=1&", "https://example.org/a?x=1&lang=fi"),
        # "&" in a path is a path character, not a query (RFC 3986 §3.3): the query is new.
        ("https://example.org/a&", "https://example.org/a&?lang=fi"),
        ("https://example.org/a&b=c", "https://example.org/a&b=c?lang=fi"),
        # "?" in a fragment is a fragment character (RFC 3986 §3.5).
        ("https://example.org/a#x?y", "https://example.org/a?lang=fi#x?y"),
    ],
)
def test_q_component_examples(url: str, expected: str) -> None:
    assert with_q_component(url, "lang=fi") == expected


@given(url=locators(), q_component=q_components)
@example(url="https://example.org/?", q_component="a=1")
@example(url="https://example.org/a?b&#c", q_component="a=1")
def test_q_component_is_copied_into_the_query(url: str, q_component: str) -> None:
    # RFC 8141 §2.3.2: "URN resolvers returning a URI that is a locator for a URN with a
    # q-component do this by copying the q-component from the URN to the query component of
    # the URI." The locator's own query, if any, is kept before it, joined with "&".
    result = with_q_component(url, q_component)
    before, after = urlsplit(url), urlsplit(result)
    assert (after.scheme, after.netloc, after.path) == (before.scheme, before.netloc, before.path)
    assert after.fragment == before.fragment
    assert ("#" in result) == ("#" in url)  # an empty fragment stays, too
    assert after.query.endswith(q_component)
    if not before.query:
        assert after.query == q_component
    elif before.query.endswith("&"):
        assert after.query == before.query + q_component
    else:
        assert after.query == before.query + "&" + q_component


@given(url=locators())
def test_no_q_component_leaves_the_locator_alone(url: str) -> None:
    assert with_q_component(url, "") == url


# --- merge_patch: RFC 7396 -----------------------------------------------------------------------


def rfc7396_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 §2's pseudocode, transcribed line by line (on a copy of the target)."""
    if isinstance(patch, dict):
        # "if Target is not an Object: Target = {} # Ignore the contents and set it to an empty
        # Object"
        target = dict(target) if isinstance(target, dict) else {}
        for name, value in patch.items():
            if value is None:
                if name in target:
                    del target[name]
            else:
                target[name] = rfc7396_merge_patch(target.get(name), value)
        return target
    return patch


# RFC 7396 Appendix A, "Example Test Cases": ORIGINAL, PATCH, RESULT, verbatim.
RFC7396_APPENDIX_A = [
    ('{"a":"b"}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'),
    ('{"a":"b"}', '{"a":null}', "{}"),
    ('{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'),
    ('{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'),
    ('{"a": {"b": "c"}}', '{"a": {"b": "d", "c": null}}', '{"a": {"b": "d"}}'),
    ('{"a": [{"b":"c"}]}', '{"a": [1]}', '{"a": [1]}'),
    ('["a","b"]', '["c","d"]', '["c","d"]'),
    ('{"a":"b"}', '["c"]', '["c"]'),
    ('{"a":"foo"}', "null", "null"),
    ('{"a":"foo"}', '"bar"', '"bar"'),
    ('{"e":null}', '{"a":1}', '{"e":null,"a":1}'),
    ("[1,2]", '{"a":"b","c":null}', '{"a":"b"}'),
    ("{}", '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC7396_APPENDIX_A)
def test_rfc7396_appendix_a(original: str, patch: str, result: str) -> None:
    target, patch_value = json.loads(original), json.loads(patch)
    assert merge_patch(target, patch_value) == json.loads(result)
    assert target == json.loads(original)  # the target is not changed in place
    assert patch_value == json.loads(patch)


def test_rfc7396_section_3_example() -> None:
    # RFC 7396 §3: the blog post example.
    target = {
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged",
    }
    patch = {
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": None},
        "tags": ["example"],
    }
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890",
    }


@given(target=json_values, patch=json_values)
def test_merge_patch_is_rfc7396_section_2(target: Any, patch: Any) -> None:
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert merge_patch(target, patch) == rfc7396_merge_patch(target, patch)
    assert target == target_before  # neither argument is changed in place
    assert patch == patch_before


@given(target=json_objects, data=st.data())
def test_null_removes_a_member(target: dict[str, Any], data: st.DataObject) -> None:
    # RFC 7396 §1: "null values in the merge patch are given special meaning to indicate the
    # removal of existing values in the target."
    name = data.draw(st.sampled_from(sorted(target)) if target else json_keys)
    result = merge_patch(target, {name: None})
    assert name not in result
    assert result == {k: v for k, v in target.items() if k != name}


@given(target=json_objects)
def test_empty_patch_is_identity_on_objects(target: dict[str, Any]) -> None:
    assert merge_patch(target, {}) == target


@given(target=json_values)
def test_empty_patch_makes_a_non_object_an_empty_object(target: Any) -> None:
    # RFC 7396 §2: "if Target is not an Object: Target = {}".
    if not isinstance(target, dict):
        assert merge_patch(target, {}) == {}


@given(target=json_values, patch=json_values)
def test_applying_a_patch_twice_is_applying_it_once(target: Any, patch: Any) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once


@given(target=json_values, patch=json_values.filter(lambda v: not isinstance(v, dict)))
def test_non_object_patch_replaces_the_target(target: Any, patch: Any) -> None:
    # RFC 7396 §2: "if Patch is an Object: ... else: return Patch".
    assert merge_patch(target, patch) == patch


@given(target=json_values, patch=json_objects)
def test_object_patch_gives_an_object_without_its_nulls(target: Any, patch: dict[str, Any]) -> None:
    result = merge_patch(target, patch)
    assert isinstance(result, dict)
    for name, value in patch.items():
        assert (name in result) == (value is not None)


# --- target lines: a location on resolution's row (records.targets) ------------------------------

# RFC 6838 §4.2's restricted-name characters, and any text at all: the API takes either.
_RESTRICTED_NAMES = st.text(string.ascii_letters + string.digits + "!#$&^_.+-", min_size=1)
_MEDIA_TYPES = (
    st.none()
    | st.text()
    | st.builds(
        lambda kind, sub, rest: f"{kind}/{sub}{rest}",
        _RESTRICTED_NAMES,
        _RESTRICTED_NAMES,
        st.sampled_from(["", "; charset=utf-8", " ", ";q"]),
    )
)


@st.composite
def stored_locations(draw: st.DrawFn) -> Location:
    """A location ``check_locations`` accepts (any character it lets through in the URL's path:
    no control, separator or unassigned character), with any media type text."""
    path = draw(st.text(st.characters(exclude_categories=("C", "Z"))))
    url = "https://" + draw(st.sampled_from(["a.example", "b.example:8080"])) + "/" + path
    location = Location(url, media_type=draw(_MEDIA_TYPES))
    try:
        check_locations([location])
    except UnacceptableError:
        reject()
    return location


@given(st.lists(stored_locations(), min_size=1, max_size=5), st.sampled_from(["", "7/rooms"]))
def test_target_lines_read_back_as_written(found: list[Location], network: str) -> None:
    # A line: the URL, then a tab and the media type when media_type_of gives one. Every
    # stored URL and every media type reads back, in order; an untyped location is its URL.
    lines = [target_line(loc) for loc in found]
    kinds = tuple(media_type_of(loc) for loc in found)
    urls = tuple(loc.url for loc in found)
    assert read_targets("\n".join(lines)) == (urls, kinds if any(kinds) else ())
    for line, loc, kind in zip(lines, found, kinds, strict=True):
        assert (line == loc.url) == (kind is None)  # no byte more without a media type
    # records.restricted puts the network first, before a tab: the rest is the line again.
    assert [f"{network}\t{line}".partition("\t")[2] for line in lines] == lines


def test_a_url_with_a_tab_or_a_line_break_is_never_stored() -> None:
    # What keeps target lines apart: check_locations refuses what str.isprintable() does not.
    for url in ("https://a.example/x\ty", "https://a.example/x\ny", "https://a.example/\r"):
        with pytest.raises(UnacceptableError):
            check_locations([Location(url)])
