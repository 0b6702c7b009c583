"""A record's other identifiers: URNs of other namespaces (``urn:isbn:``, ``urn:issn:``,
``urn:uuid:`` …) in ``metadata.identifiers``, and the registrant's own local id in
``metadata.local_id``. Each URN is known by its equivalence key, the namespace's own rule
(:meth:`urnkit.urn.URN.equivalence_key`: an ISBN-10 and its ISBN-13 share one), so that any
of its forms finds the record; a local id is unique within the organisation owning the record.

>>> sorted(identifier_keys({"identifiers": ["urn:isbn:0-451-45052-3", "URN:ISSN:03178471"]}))
['urn:isbn:9780451450524', 'urn:issn:0317-8471']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from urnkit.namespaces import validate
from urnkit.resolver.domain.acceptance import Location, Violation
from urnkit.resolver.domain.errors import UnacceptableInputError
from urnkit.syntax import URNSyntaxError
from urnkit.urn import URN

IDENTIFIERS = "identifiers"  # metadata's field: a JSON array of URNs
LOCAL_ID = "local_id"  # metadata's field: the registrant's own identifier, a string
MAX_IDENTIFIERS = 100  # URNs a record may carry in metadata.identifiers
MAX_LOCAL_ID = 255  # characters of a local id


def carries_identifiers(metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` names other identifiers (before they are checked).

    >>> carries_identifiers({"title": "A"}), carries_identifiers({"local_id": "x"})
    (False, True)
    """
    return IDENTIFIERS in metadata or LOCAL_ID in metadata


def identifier_keys(metadata: Mapping[str, Any]) -> set[str]:
    """The equivalence keys of the URNs in ``metadata.identifiers`` (the acceptable ones: a
    record stored before the field was checked keeps what it holds, unindexed).

    >>> identifier_keys({"identifiers": ["urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", 7]})
    {'urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6'}
    """
    given = metadata.get(IDENTIFIERS)
    if not isinstance(given, list):
        return set()
    return {key for text in given if (key := _key(text)) is not None}


def is_identifier(text: str) -> bool:
    """Whether ``text`` is a URN a record may carry in ``metadata.identifiers``: acceptable by
    its namespace's rules, not a URN:NBN.

    >>> is_identifier("urn:issn:0317-8471"), is_identifier("urn:nbn:fi-1"), is_identifier("x")
    (True, False, False)
    """
    return _identifier_reason(text) is None


def local_id(metadata: Mapping[str, Any]) -> str | None:
    """The record's local id, if ``metadata.local_id`` holds an acceptable one.

    >>> local_id({"local_id": "thesis/2024/17"}), local_id({"local_id": ""})
    ('thesis/2024/17', None)
    """
    given = metadata.get(LOCAL_ID)
    return given if isinstance(given, str) and _local_id_reason(given) is None else None


def identifier_key(text: str) -> str | None:
    """What ``text``, searched for, is looked up by: a URN's equivalence key (the URN's
    namespace's rules), or None when ``text`` is no URN (then it is a local id).

    >>> identifier_key("urn:isbn:978-0-451-45052-4"), identifier_key("thesis-17")
    ('urn:isbn:9780451450524', None)
    """
    try:
        return URN.parse(text).equivalence_key()
    except URNSyntaxError:
        return None


def check_identifiers(
    metadata: Mapping[str, Any], location: Location = ("metadata",), document: int = 0
) -> None:
    """Refuse (:class:`UnacceptableInputError`, each place by its JSON pointer) a
    ``metadata.identifiers`` that is not an array of at most :data:`MAX_IDENTIFIERS` URNs, each
    acceptable by its namespace's rules and none a URN:NBN (a URN:NBN is a record of its own),
    or a ``metadata.local_id`` that is not a string of 1 to :data:`MAX_LOCAL_ID` characters
    without control characters and not a URN (a URN belongs in ``identifiers``).

    >>> check_identifiers({"identifiers": ["urn:isbn:0-451-45052-4"]})
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableInputError: /metadata/identifiers/0: not an acceptable ...
    """
    found = list(_violations(metadata, location))
    if found:
        errors = [violation.as_json(document) for violation in found]
        raise UnacceptableInputError(
            "; ".join(f"{e['pointer']}: {e['message']}" for e in errors), errors=errors
        )


def _violations(metadata: Mapping[str, Any], location: Location) -> list[Violation]:
    found = []
    reason: str | None
    if IDENTIFIERS in metadata:
        given, here = metadata[IDENTIFIERS], (*location, IDENTIFIERS)
        if not isinstance(given, list):
            found.append(Violation(here, "must be an array of URNs"))
        elif len(given) > MAX_IDENTIFIERS:
            reason = f"at most {MAX_IDENTIFIERS} identifiers, not {len(given)}"
            found.append(Violation(here, reason))
        else:
            for index, text in enumerate(given):
                reason = _identifier_reason(text)
                if reason is not None:
                    found.append(Violation((*here, index), reason))
    if LOCAL_ID in metadata:
        given = metadata[LOCAL_ID]
        reason = "must be a string" if not isinstance(given, str) else _local_id_reason(given)
        if reason is not None:
            found.append(Violation((*location, LOCAL_ID), reason))
    return found


def _identifier_reason(text: object) -> str | None:
    """Why ``text`` is not an identifier a record may carry; None if it is one."""
    if not isinstance(text, str):
        return "must be a URN, as a string"
    errors = [f for f in validate(text) if f.severity == "error"]
    if errors:
        where = "" if errors[0].position is None else f" at position {errors[0].position}"
        return f"not an acceptable URN{where}: {errors[0].message} ({errors[0].section})"
    if URN.parse(text).nid.lower() == "nbn":
        return "a URN:NBN is registered as a record of its own, not carried by another"
    return None


def _local_id_reason(text: str) -> str | None:
    """Why ``text`` is not a local id; None if it is one."""
    if not 1 <= len(text) <= MAX_LOCAL_ID:
        return f"a local id has 1 to {MAX_LOCAL_ID} characters, not {len(text)}"
    for position, character in enumerate(text):
        if unicodedata.category(character) in ("Cc", "Cs"):
            return f"a control character at position {position}"
    if text[:4].lower() == "urn:":
        return f"a URN belongs in metadata.{IDENTIFIERS}, not in metadata.{LOCAL_ID}"
    return None


def _key(text: object) -> str | None:
    return (
        URN.parse(text).equivalence_key()
        if isinstance(text, str) and _identifier_reason(text) is None
        else None
    )
