"""URN:UUID (RFC 9562, which obsoletes RFC 4122): validate, compare, parse.

The NSS is a UUID in its string form, 8-4-4-4-12 hexadecimal digits (RFC 9562 §4). "The
hexadecimal values "a" through "f" are output as lowercase characters and are case insensitive
on input" (§4), so URN-equivalence folds a UUID to lower case. The Nil and Max UUIDs (§5.9,
§5.10) are UUIDs like any other.

>>> from urnkit.urn import URN
>>> u = "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"
>>> URN.parse(u) == URN.parse(u.lower()), parse(u).version, parse(u).variant
(True, 1, 'RFC 9562')
>>> [(f.code, f.position) for f in validate("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bfg")]
[('uuid.syntax', 44)]
"""

from __future__ import annotations

import re
import uuid as _uuid
from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, first_mismatch, key_nss, nss_start
from urnkit.urn import URN, register_equivalence_rule

NID = "uuid"
SYNTAX = "uuid.syntax"
_SECTION = "RFC 9562 §4"
_PATTERN = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")

# RFC 9562 §4.1, Table 1: the variant field's meanings; the standard library's names for them.
_VARIANTS = {
    _uuid.RESERVED_NCS: "NCS",
    _uuid.RFC_4122: "RFC 9562",
    _uuid.RESERVED_MICROSOFT: "Microsoft",
    _uuid.RESERVED_FUTURE: "future",
}


@dataclass(frozen=True, slots=True)
class UUIDName:
    """A URN:UUID's fields: the UUID, its version (RFC 9562 §4.2; None unless the variant is
    RFC 9562's) and its variant (§4.1: "NCS", "RFC 9562", "Microsoft" or "future").

    >>> parse("urn:uuid:00000000-0000-0000-0000-000000000000")
    UUIDName(uuid=UUID('00000000-0000-0000-0000-000000000000'), version=None, variant='NCS')
    """

    uuid: _uuid.UUID
    version: int | None
    variant: str


def parse(urn_or_text: URN | str) -> UUIDName:
    """The UUID of a URN:UUID and its version and variant.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:UUID or its NSS is not a UUID (RFC 9562 §4).

    >>> parse("urn:uuid:ffffffff-ffff-ffff-ffff-ffffffffffff").variant
    'future'
    """
    nss = as_urn(urn_or_text, NID).nss
    if _UUID.fullmatch(nss) is None:
        raise ValueError(f"not a UUID in the 8-4-4-4-12 form of {_SECTION}: {nss!r}")
    value = _uuid.UUID(nss)
    return UUIDName(value, value.version, _VARIANTS[value.variant])


def _fields(urn: URN) -> Mapping[str, object]:
    try:
        name = parse(urn)
    except ValueError:
        return {}
    return {"uuid": str(name.uuid), "version": name.version, "variant": name.variant}


def equivalence_key(key: str) -> str:
    """RFC 9562 §4 on an RFC 8141 §3 key: a UUID's hex digits are case-insensitive, so a NSS
    that is a UUID is folded to lower case; any other NSS keeps its key.

    >>> equivalence_key("urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6")
    'urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6'
    """
    nss = key_nss(key, NID)
    return f"urn:{NID}:{nss.lower()}" if _UUID.fullmatch(nss) else key


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings of RFC 9562 §4 for a URN:UUID: ``uuid.syntax`` (an error, at the first
    character that breaks the 8-4-4-4-12 form) or none. ``strict`` changes nothing.

    >>> validate("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    []
    """
    urn = as_urn(urn, NID)
    mismatch = first_mismatch(urn.nss, _PATTERN)
    if mismatch is None:
        return []
    message = "the NSS of a URN:UUID is a UUID: 8-4-4-4-12 hexadecimal digits with hyphens"
    return [Finding(SYNTAX, "error", message, nss_start(urn) + mismatch, _SECTION)]


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = ["SYNTAX", "UUIDName", "equivalence_key", "parse", "validate"]
