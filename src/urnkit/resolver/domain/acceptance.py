"""What the service accepts: the values both databases store and give back exactly, one rule
for every write (the API's bodies, import, harvest).

A JSON value is refused, with the RFC 6901 JSON pointer of each offending place
(https://www.rfc-editor.org/rfc/rfc6901) and the reason, when it holds

* a lone surrogate (U+D800 to U+DFFF) in a string or a member name: it is no Unicode scalar
  value, cannot be written as UTF-8 (RFC 8259 §8.2, RFC 7493 §2.1) and PostgreSQL refuses it;
* U+0000: PostgreSQL's ``text`` and ``jsonb`` cannot hold it;
* a number that is not finite (``NaN``, ``Infinity``, ``1e400``): JSON has none (RFC 8259 §6);
* a number PostgreSQL's ``jsonb`` gives back as another: it keeps numbers as decimals without
  an exponent, so the float ``1e16`` comes back as the integer ``10000000000000000`` (every
  float of magnitude from 1e16 on) and ``-0.0`` as ``0.0``;
* arrays and objects nested deeper than :data:`MAX_DEPTH`, or a record's metadata longer than
  :data:`MAX_METADATA_BYTES`.

A URN is refused when longer than :data:`MAX_URN_LENGTH` characters.

>>> check_json({"title": "A thesis", "year": 2024})
>>> check_json({"metadata": {"t": "a\\u0000b"}})
Traceback (most recent call last):
...
urnkit.resolver.domain.UnacceptableInputError: /metadata/t: U+0000 cannot be stored ...
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from urnkit.resolver.domain.errors import UnacceptableInputError

MAX_DEPTH = 32
"""Arrays and objects a JSON value nests at most; a record's ``metadata`` counts from its own
object (level 1), everything else from the request body (level 1). Bibliographic metadata
needs a handful; the responses' serializer and the databases' JSON functions fail at a few
hundred."""

MAX_METADATA_BYTES = 64 * 1024
"""The most a record's ``metadata`` takes as compact UTF-8 JSON: 64 KiB. Descriptive metadata
is a few KiB; every read of a record, its history, listings and exports carries it whole."""

MAX_URN_LENGTH = 2000
"""The longest URN, in characters: the width of the ``urn`` and ``equivalence_key`` columns
(``varchar(2000)``; PostgreSQL refuses 2,001, SQLite would store any), and well inside a
PostgreSQL B-tree index entry (2,704 bytes; URNs are ASCII)."""

MAX_REPORTED = 100
"""Offending places named in one refusal; a body may hold many more."""

DOCUMENT = "metadata"  # the member holding a record's metadata, measured on its own
_FLOAT_EXACT_BELOW = 1e16  # from here on repr() writes floats with an exponent

Location = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Violation:
    """One place of a value that is refused: where (``location``, as FastAPI names the places
    of a request: ``("body", "metadata", "a", 0)``) and why."""

    location: Location
    message: str

    def as_json(self, document: int | None = 1) -> dict[str, object]:
        """The shape of the API's 422 errors: the RFC 6901 ``pointer`` into the document
        (the location without its first ``document`` parts; null when the place is in no JSON
        document, as a path parameter), the location, the message.

        >>> Violation(("body", "a/b", 0), "why").as_json()
        {'pointer': '/a~1b/0', 'location': ['body', 'a/b', 0], 'message': 'why'}
        """
        return {
            "pointer": None if document is None else json_pointer(self.location[document:]),
            "location": list(self.location),
            "message": self.message,
        }


def json_pointer(location: Sequence[str | int]) -> str:
    """The RFC 6901 JSON pointer of a location (§3: ``~`` is written ``~0``, ``/`` ``~1``).

    >>> json_pointer(["a~b", "c/d", 0]), json_pointer([])
    ('/a~0b/c~1d/0', '')
    """
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in location)


_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``), so that a name
    holding one can be shown in an answer, which is UTF-8.

    >>> printable("a\\ud800b")
    'a\\\\ud800b'
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _text_reason(text: str) -> str | None:
    if _SURROGATE.search(text):
        return "a lone surrogate (U+D800 to U+DFFF) is no Unicode character (RFC 8259 §8.2)"
    if "\x00" in text:
        return "U+0000 cannot be stored (PostgreSQL's text and jsonb refuse it)"
    return None


def _number_reason(number: float) -> str | None:
    if not math.isfinite(number):
        return "JSON has no NaN or Infinity, and 1e400 is beyond a double (RFC 8259 §6)"
    if abs(number) >= _FLOAT_EXACT_BELOW:
        return (
            "a float from 1e16 up would come back an integer (PostgreSQL's jsonb); send it as one"
        )
    if number == 0 and math.copysign(1, number) < 0:
        return "-0.0 would come back as 0.0 (PostgreSQL's jsonb has no negative zero)"
    return None


def metadata_size(metadata: object) -> int:
    """The bytes of ``metadata`` as compact UTF-8 JSON, which :data:`MAX_METADATA_BYTES` limits.

    >>> metadata_size({"t": "é"})
    10
    """
    return len(_COMPACT_TEXT.encode(metadata).encode("utf-8"))


_COMPACT_TEXT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps's own


def violations(value: object, location: Location = ()) -> Iterator[Violation]:
    """Every place of the JSON ``value`` (at ``location``) that is refused, names included; a
    value at a ``metadata`` location is a record's metadata, measured on its own."""
    document = bool(location) and location[-1] == DOCUMENT
    yield from _walk(value, location, 1, document, document)


def _walk(
    value: object, location: Location, depth: int, inside: bool, root: bool = False
) -> Iterator[Violation]:
    """``root``: the value is a record's metadata; ``inside``: it is in one. Its size is
    measured once the rest holds (serializing a value nested beyond the limit could fail)."""
    if root:
        found = list(_walk(value, location, depth, inside))
        yield from found
        size = 0 if found or not isinstance(value, dict) else metadata_size(value)
        if size > MAX_METADATA_BYTES:
            yield Violation(
                location, f"metadata of {size} bytes; at most {MAX_METADATA_BYTES} are stored"
            )
        return
    if isinstance(value, str):
        reason = _text_reason(value)
        if reason:
            yield Violation(location, reason)
    elif isinstance(value, float):
        reason = _number_reason(value)
        if reason:
            yield Violation(location, reason)
    elif isinstance(value, dict | list):
        if depth > MAX_DEPTH:
            yield Violation(location, f"nested deeper than {MAX_DEPTH} arrays and objects")
            return
        yield from _members(value, location, depth, inside)


def _members(
    value: dict[str, object] | list[object], location: Location, depth: int, inside: bool
) -> Iterator[Violation]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*location, index), depth + 1, inside)
        return
    for name, item in value.items():
        where = (*location, printable(name))
        reason = _text_reason(name)
        if reason:
            yield Violation(where, "the name: " + reason)
        if name == DOCUMENT and not inside:  # a record's metadata, counted on its own
            yield from _walk(item, where, 1, True, True)
        else:
            yield from _walk(item, where, depth + 1, inside)


_BAD_TEXT = re.compile("[\x00\ud800-\udfff]").search  # what _text_reason refuses


def acceptable(value: object, depth: int = 1, inside: bool = False) -> bool:
    """Whether :func:`violations` finds nothing in ``value`` (at ``depth``, ``inside`` a
    record's metadata or not): the same rules, answered yes or no without naming places, for
    the common case, which an import meets on every row: naming places costs several times more.

    >>> acceptable({"metadata": {"title": "x"}}), acceptable({"n": float("inf")})
    (True, False)
    """
    if isinstance(value, str):
        return _BAD_TEXT(value) is None
    if isinstance(value, float):
        return _number_reason(value) is None
    if not isinstance(value, dict | list):
        return True
    if depth > MAX_DEPTH:
        return False
    items: Iterable[Any] = value
    if isinstance(value, dict):
        if any(_BAD_TEXT(name) is not None for name in value):
            return False
        items = value.values()
        if DOCUMENT in value and not inside:
            document = value[DOCUMENT]
            if not acceptable(document, 1, True):
                return False
            if isinstance(document, dict) and metadata_size(document) > MAX_METADATA_BYTES:
                return False
            items = (item for name, item in value.items() if name != DOCUMENT)
    # Texts and integers, most of a row, are answered here: a call each took half the time.
    for item in items:
        kind = type(item)
        if kind is str:
            if _BAD_TEXT(item) is not None:
                return False
        elif kind is not int and not acceptable(item, depth + 1, inside):
            return False
    return True


def check_json(value: object, location: Location = (), document: int = 0, what: str = "") -> None:
    """Refuse the JSON ``value`` (at ``location``) with :class:`UnacceptableInputError` if any
    place of it is refused; its ``errors`` name each (up to :data:`MAX_REPORTED`), their
    pointers into the document that ``location`` without its first ``document`` parts is in,
    and ``what`` begins its detail."""
    if not location and acceptable(value):  # the common case, without walking out places
        return
    found = []
    for violation in violations(value, location):
        found.append(violation.as_json(document))
        if len(found) == MAX_REPORTED:
            break
    if found:
        raise UnacceptableInputError(
            what + "; ".join(f"{e['pointer'] or '/'}: {e['message']}" for e in found),
            errors=found,
        )


def check_urn_length(text: str, location: Location = ("urn",), document: int | None = 0) -> None:
    """Refuse a URN longer than :data:`MAX_URN_LENGTH` characters (at ``location``, as
    :func:`check_json` names places).

    >>> check_urn_length("urn:nbn:fi-" + "x" * 2000)
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableInputError: /urn: a URN of 2011 characters; at most 2000 ...
    """
    if len(text) > MAX_URN_LENGTH:
        message = f"a URN of {len(text)} characters; at most {MAX_URN_LENGTH} are stored"
        error = Violation(location, message).as_json(document)
        where = json_pointer(location) if document is None else error["pointer"]
        raise UnacceptableInputError(f"{where}: {message}", errors=[error])


def check_record(fields: Mapping[str, object]) -> None:
    """Refuse a record given as JSON (an import's row, a harvested record: ``urn``,
    ``metadata`` and the rest) holding what :func:`check_json` refuses, or a URN longer than
    :data:`MAX_URN_LENGTH`; the refusal begins with the URN.

    >>> check_record({"urn": "urn:nbn:fi:lib-1", "metadata": {"n": float("nan")}})
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableInputError: urn:nbn:fi:lib-1: /metadata/n: JSON has no ...
    """
    urn = fields.get("urn")
    if isinstance(urn, str):
        check_urn_length(urn)
    check_json(fields, what=f"{printable(str(urn))[:MAX_URN_LENGTH]}: ")
