"""URN:EXAMPLE (RFC 6963): the namespace for examples in documentation.

RFC 6963 §3 leaves the NSS to RFC 8141's syntax and sets no rules of its own: every
syntactically valid NSS is acceptable, nothing is found, no fields are read, and equivalence
is RFC 8141 §3's. The module exists so that every registered namespace urnkit knows of answers
the same verbs.

>>> validate("urn:example:a123,z456"), dict(parse("urn:example:a123,z456"))
([], {})
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, key_nss
from urnkit.urn import URN, register_equivalence_rule

NID = "example"
_NO_FIELDS: Mapping[str, object] = MappingProxyType({})


def parse(urn_or_text: URN | str) -> Mapping[str, object]:
    """No fields: RFC 6963 gives the NSS no structure.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:EXAMPLE.
    """
    as_urn(urn_or_text, NID)
    return _NO_FIELDS


def _fields(urn: URN) -> Mapping[str, object]:
    return parse(urn)


def equivalence_key(key: str) -> str:
    """Plain RFC 8141 §3: the key as it is.

    >>> equivalence_key("urn:example:a123%2Cz456")
    'urn:example:a123%2Cz456'
    """
    key_nss(key, NID)
    return key


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """No findings: RFC 6963 adds no rules to RFC 8141's syntax."""
    as_urn(urn, NID)
    return []


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = ["equivalence_key", "parse", "validate"]
