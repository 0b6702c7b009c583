"""urnkit: Uniform Resource Names to the letter of RFC 8141, with RFC 2141 as a legacy mode.

>>> import urnkit
>>> urnkit.is_valid("urn:example:a123,z456")
True
>>> urnkit.URN.parse("URN:EXAMPLE:a123,z456") == urnkit.URN.parse("urn:example:a123,z456")
True
>>> [finding.code for finding in urnkit.validate("urn:x-foo:bar")]
['nid.reserved']
"""

from urnkit.encoding import decode, display, encode_nss
from urnkit.explain import Explanation, explain
from urnkit.find import URNMatch, find_urns
from urnkit.findings import Finding, Severity, is_acceptable
from urnkit.namespaces import NIDClass, classify_nid, validate
from urnkit.syntax import Diagnosis, Mode, URNSyntaxError, diagnose, is_valid
from urnkit.urn import URN, equivalent, register_equivalence_rule

__all__ = [
    "URN",
    "Diagnosis",
    "Explanation",
    "Finding",
    "Mode",
    "NIDClass",
    "Severity",
    "URNMatch",
    "URNSyntaxError",
    "classify_nid",
    "decode",
    "diagnose",
    "display",
    "encode_nss",
    "equivalent",
    "explain",
    "find_urns",
    "is_acceptable",
    "is_valid",
    "register_equivalence_rule",
    "validate",
]
