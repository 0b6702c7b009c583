"""The common namespace modules: uuid, isbn, issn, oid, ietf, example, doi.

Each test names its source: RFC 9562 (UUID), RFC 3187 and the ISBN Agency's registration (ISBN,
ISO 2108), RFC 3044 and the ISSN Centre's registration (ISSN, ISO 3297), RFC 3061 and ITU-T
X.660 (OID), RFC 2648 and RFC 3553 (IETF), RFC 6963 (example), the DOI registration (DOI).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference import Parts
from strategies import respelled, urns

from urnkit import namespaces
from urnkit.findings import Finding
from urnkit.namespaces import doi, example, ietf, isbn, issn, oid
from urnkit.namespaces import uuid as uuid_ns
from urnkit.urn import URN

MODULES: dict[str, ModuleType] = {
    "uuid": uuid_ns,
    "isbn": isbn,
    "issn": issn,
    "oid": oid,
    "ietf": ietf,
    "example": example,
    "doi": doi,
}


def codes(text: str, *, strict: bool = False) -> list[tuple[str, str, int | None]]:
    """(code, severity, position) of the namespace module's findings, via urnkit's validate."""
    return [
        (f.code, f.severity, f.position)
        for f in namespaces.validate(text, strict=strict)
        if not f.code.startswith(("syntax.", "nid."))
    ]


# --- every module: registration and "equivalence only merges" (RFC 8141 §3) ----------------------


@pytest.mark.parametrize("nid", MODULES)
def test_each_module_registers_its_verbs(nid: str) -> None:
    module = MODULES[nid]
    assert namespaces._validators[nid] is module.validate
    import urnkit.urn

    assert urnkit.urn._equivalence_rules[nid] is module.equivalence_key


_PCT = st.tuples(
    st.sampled_from("0123456789abcdefABCDEF"), st.sampled_from("0123456789abcdefABCDEF")
)
_HEX = st.text("0123456789abcdefABCDEF", min_size=1, max_size=12)

# NSSs shaped like each namespace's, so that the rules' interesting branches are taken; each is
# valid RFC 8141 NSS text.
_SHAPED: dict[str, st.SearchStrategy[str]] = {
    "uuid": st.uuids().map(str).map(lambda s: s.upper()) | st.uuids().map(str),
    "isbn": st.sampled_from(
        ["0-451-45052-3", "978-0-451-45052-4", "0451450523", "080442957x", "979-10-90636-07-1"]
    )
    | st.text("0123456789-", min_size=1, max_size=17).filter(lambda s: s[0] != "-"),
    "issn": st.sampled_from(["0167-6423", "01676423", "0002-936x", "0002936X", "0167-642X"])
    | st.from_regex(r"\A[0-9]{4}-?[0-9]{3}[0-9Xx]\Z"),
    "oid": st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,4}){0,5}\Z"),
    "ietf": st.sampled_from(["rfc:2648", "RFC:2648", "id:ietf-urn-ietf-07", "params:xml:ns:x"]),
    "example": st.just("a123,z456"),
    "doi": st.sampled_from(["10.1000/182", "10.1000/ABC", "10.1000/abc"]),
}


@st.composite
def in_namespace(draw: st.DrawFn, nid: str) -> Parts:
    """A valid URN with NID ``nid`` (any case): a NSS of the namespace's shape, one drawn from
    RFC 8141's grammar, or the two joined by "/" (which keeps percent-encodings in play)."""
    parts = draw(urns("rfc8141"))
    shaped = draw(_SHAPED[nid])
    nss = draw(st.sampled_from([shaped, parts.nss, f"{shaped}/{parts.nss}"]))
    recased = "".join(c.swapcase() if draw(st.booleans()) else c for c in nid)
    return replace(parts, nid=recased, nss=nss)


@pytest.mark.parametrize("nid", MODULES)
@given(data=st.data())
def test_equivalence_only_merges(nid: str, data: st.DataObject) -> None:
    # RFC 8141 §3: a namespace's rules "MUST NOT result in treating two URNs as not 'the
    # same' if the procedure here says they are URN-equivalent".
    parts = data.draw(in_namespace(nid))
    other = data.draw(respelled(parts, "rfc8141"))
    first, second = URN.parse(parts.text), URN.parse(other)
    assert first == second
    assert hash(first) == hash(second)


@pytest.mark.parametrize("nid", MODULES)
@given(data=st.data())
def test_equivalence_key_is_idempotent(nid: str, data: st.DataObject) -> None:
    # A key is a canonical form: applying the rule to it again changes nothing.
    key = URN.parse(data.draw(in_namespace(nid)).text).equivalence_key()
    assert MODULES[nid].equivalence_key(key) == key


@pytest.mark.parametrize("nid", MODULES)
def test_equivalence_key_rejects_another_namespaces_key(nid: str) -> None:
    with pytest.raises(ValueError, match="RFC 8141 §3 key"):
        MODULES[nid].equivalence_key("urn:other:x")


@pytest.mark.parametrize("nid", MODULES)
def test_verbs_reject_another_nid(nid: str) -> None:
    module = MODULES[nid]
    for verb in (module.parse, module.validate):
        with pytest.raises(ValueError, match="not a URN:"):
            verb("urn:other:x")


# --- uuid: RFC 9562 ------------------------------------------------------------------------------


def test_uuid_is_case_insensitive() -> None:
    # RFC 9562 §4: hex digits "are case insensitive on input". RFC 9562 §7 / RFC 4122 §3 example.
    upper = "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"
    assert URN.parse(upper) == URN.parse(upper.lower())
    assert URN.parse(upper).equivalence_key() == upper.lower()
    assert codes(upper) == []


def test_uuid_fields() -> None:
    # RFC 9562 §4.1 (variant), §4.2 (version), §5.9 Nil, §5.10 Max; the RFC's v7 example (§A.6).
    v1 = uuid_ns.parse("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    assert (v1.version, v1.variant) == (1, "RFC 9562")
    v7 = uuid_ns.parse("urn:uuid:017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
    assert (v7.version, v7.variant, str(v7.uuid)) == (
        7,
        "RFC 9562",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
    )
    nil = uuid_ns.parse("urn:uuid:00000000-0000-0000-0000-000000000000")
    maximum = uuid_ns.parse("urn:uuid:FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    assert (nil.version, nil.variant, maximum.version, maximum.variant) == (
        None,
        "NCS",
        None,
        "future",
    )
    assert codes("urn:uuid:00000000-0000-0000-0000-000000000000") == []
    assert namespaces.namespace_fields(URN.parse("urn:uuid:x")) == {}


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bfg", 44),  # not hex
        ("urn:uuid:f81d4fae7dec-11d0-a765-00a0c91e6bf6", 17),  # hyphen missing
        ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf", 44),  # one digit short
        ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6a", 45),  # one digit long
        ("urn:uuid:%7Bf81d4fae-7dec-11d0-a765-00a0c91e6bf6%7D", 9),  # braces, encoded
        ("urn:uuid:f81d4fae7dec11d0a76500a0c91e6bf6", 17),  # 32 digits, no hyphens
    ],
)
def test_uuid_syntax_findings(text: str, position: int) -> None:
    # RFC 9562 §4: the string form is 8-4-4-4-12 hex digits with hyphens, nothing else.
    assert codes(text) == [("uuid.syntax", "error", position)]
    with pytest.raises(ValueError, match="8-4-4-4-12"):
        uuid_ns.parse(text)


def test_uuid_invalid_nss_keeps_its_case() -> None:
    assert URN.parse("urn:uuid:ABC") != URN.parse("urn:uuid:abc")


# --- isbn: RFC 3187, the ISBN Agency's registration, ISO 2108 -----------------------------------


def test_isbn10_and_isbn13_are_equivalent() -> None:
    # The ISBN Agency's namespace registration: ISBN-10 -> ISBN-13, hyphens ignored.
    # RFC 3187's own example book, ISBN 0-451-45052-3 = 978-0-451-45052-4.
    forms = ["urn:isbn:0-451-45052-3", "URN:ISBN:0451450523", "urn:isbn:978-0-451-45052-4"]
    assert len({URN.parse(form) for form in forms}) == 1
    assert URN.parse(forms[0]).equivalence_key() == "urn:isbn:9780451450524"
    assert [codes(form) for form in forms] == [[], [], []]


def test_isbn_lower_case_x_is_the_check_digit_ten() -> None:
    # ISO 2108: the ISBN-10 check character X is 10; x is the same character.
    assert codes("urn:isbn:0-8044-2957-x") == []
    assert URN.parse("urn:isbn:080442957x") == URN.parse("urn:isbn:978-0-8044-2957-3")


def test_invalid_isbn_is_not_merged() -> None:
    # Only a valid ISBN is converted: 0-451-45052-4 has a wrong check digit, and converting it
    # would give the ISBN-13 of 0-451-45052-3.
    assert URN.parse("urn:isbn:0-451-45052-4") != URN.parse("urn:isbn:0-451-45052-3")
    assert URN.parse("urn:isbn:0-451-45052-4").equivalence_key() == "urn:isbn:0-451-45052-4"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("urn:isbn:0-451-45052-4", [("isbn.check-digit", "error", 21)]),
        ("urn:isbn:978-0-451-45052-5", [("isbn.check-digit", "error", 25)]),
        ("urn:isbn:0-451-4505a-3", [("isbn.syntax", "error", 19)]),
        ("urn:isbn:978045145052X", [("isbn.syntax", "error", 21)]),  # X only ends an ISBN-10
        ("urn:isbn:045145052", [("isbn.length", "error", 9)]),
        ("urn:isbn:9770451450524", [("isbn.prefix", "error", 9)]),
        ("urn:isbn:979-10-90636-07-1", []),
    ],
)
def test_isbn_findings(text: str, expected: list[tuple[str, str, int]]) -> None:
    assert codes(text) == expected
    assert codes(text, strict=True) == expected


def test_isbn_fields() -> None:
    fields = isbn.parse("urn:isbn:0-451-45052-3")
    assert fields == isbn.ISBN("9780451450524", "0451450523", "978", "0", "451", "45052")
    assert isbn.parse("urn:isbn:979-10-90636-07-1").isbn10 is None  # 979: no ISBN-10
    assert namespaces.namespace_fields(URN.parse("urn:isbn:0451450524")) == {}
    with pytest.raises(ValueError, match="not a valid ISBN"):
        isbn.parse("urn:isbn:0451450524")


@given(st.text("0123456789", min_size=9, max_size=9), st.sampled_from("0123456789X"))
def test_isbn10_arithmetic_agrees_with_stdnum(first9: str, check: str) -> None:
    import stdnum.isbn

    candidate = first9 + check
    assert (isbn._isbn13(candidate) is not None) == stdnum.isbn.is_valid(candidate)


@given(st.sampled_from(["978", "979", "977"]), st.text("0123456789", min_size=10, max_size=10))
def test_isbn13_arithmetic_agrees_with_stdnum(prefix: str, rest: str) -> None:
    import stdnum.isbn

    candidate = prefix + rest
    assert (isbn._isbn13(candidate) is not None) == stdnum.isbn.is_valid(candidate)


# --- issn: RFC 3044, the ISSN Centre's registration, ISO 3297 ------------------------------------


def test_issn_hyphen_optional_and_x_is_upper_x() -> None:
    # The ISSN namespace's registration: hyphen optional, x = X. 0002-936X: American Journal of
    # Nursing; 0167-6423: Science of Computer Programming.
    assert URN.parse("urn:issn:0002-936x") == URN.parse("urn:ISSN:0002936X")
    assert URN.parse("urn:issn:01676423") == URN.parse("urn:issn:0167-6423")
    assert URN.parse("urn:issn:01676423").equivalence_key() == "urn:issn:0167-6423"
    assert codes("urn:issn:0002-936x") == codes("urn:issn:01676423") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("urn:issn:0167-642x", [("issn.check-digit", "error", 17)]),
        ("urn:issn:0167-6424", [("issn.check-digit", "error", 17)]),
        ("urn:issn:0167-64", [("issn.syntax", "error", 16)]),
        ("urn:issn:0167-64x3", [("issn.syntax", "error", 16)]),
        ("urn:issn:0167--6423", [("issn.syntax", "error", 14)]),
        ("urn:issn:ISSN0167-6423", [("issn.syntax", "error", 9)]),
    ],
)
def test_issn_findings(text: str, expected: list[tuple[str, str, int]]) -> None:
    assert codes(text) == expected


def test_issn_fields() -> None:
    assert issn.parse("urn:issn:0002936x") == issn.ISSN("0002-936X", "X")
    assert namespaces.namespace_fields(URN.parse("urn:issn:abc")) == {}


@given(st.text("0123456789", min_size=7, max_size=7))
def test_issn_check_character_agrees_with_stdnum(first7: str) -> None:
    import stdnum.issn

    assert issn._check_character(first7) == stdnum.issn.calc_check_digit(first7)


# --- python-stdnum missing -----------------------------------------------------------------------


@pytest.fixture
def without_stdnum(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("stdnum", "stdnum.isbn", "stdnum.issn", "stdnum.ean"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.usefixtures("without_stdnum")
def test_without_stdnum_check_digits_are_unchecked() -> None:
    # The core imports the standard library only; the check digits need urnkit[checks].
    for text, code in [
        ("urn:isbn:0-451-45052-4", "isbn.check-unchecked"),
        ("urn:issn:0167-642x", "issn.check-unchecked"),
    ]:
        [finding] = namespaces.validate(text)
        assert (finding.code, finding.severity, finding.position) == (code, "warning", None)
        assert "urnkit[checks]" in finding.message
    # Syntax is still checked, and equivalence does not depend on optional packages.
    assert codes("urn:isbn:04514") == [("isbn.length", "error", 9)]
    assert URN.parse("urn:isbn:0451450523") == URN.parse("urn:isbn:9780451450524")
    fields = isbn.parse("urn:isbn:0451450523")
    assert (fields.isbn13, fields.registration_group, fields.registrant) == (
        "9780451450524",
        None,
        None,
    )


# --- oid: RFC 3061, ITU-T X.660 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("urn:oid:1.3.6.1.4.1.311", []),
        ("urn:oid:0", []),  # "0" alone is a number (RFC 3061 §2: number = DIGIT / ...)
        ("urn:oid:2.999.1", []),  # under 2 the second arc is unbounded (X.660)
        ("urn:oid:1.39", []),
        ("urn:oid:1.40", [("oid.second-arc", "error", 10)]),
        ("urn:oid:0.100", [("oid.second-arc", "error", 10)]),
        ("urn:oid:3.1", [("oid.first-arc", "error", 8)]),
        ("urn:oid:1.03.6", [("oid.leading-zero", "error", 10)]),
        ("urn:oid:01.3", [("oid.leading-zero", "error", 8)]),
        ("urn:oid:1..2", [("oid.syntax", "error", 10)]),
        ("urn:oid:1.2.", [("oid.syntax", "error", 12)]),
        ("urn:oid:.1", [("oid.syntax", "error", 8)]),
        ("urn:oid:1.x", [("oid.syntax", "error", 10)]),
    ],
)
def test_oid_findings(text: str, expected: list[tuple[str, str, int]]) -> None:
    assert codes(text) == expected


def test_oid_fields_and_equivalence() -> None:
    assert oid.parse("urn:oid:1.3.6.1") == oid.OID((1, 3, 6, 1))
    with pytest.raises(ValueError, match="leading zeros"):
        oid.parse("urn:oid:1.03")
    # RFC 3061 adds no equivalence: leading zeros are not numbers to compare.
    assert URN.parse("urn:oid:1.03") != URN.parse("urn:oid:1.3")


# --- ietf: RFC 2648, RFC 3553 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "strict", "expected"),
    [
        ("urn:ietf:rfc:2648", False, []),
        ("urn:ietf:RFC:2648", False, []),  # RFC 5234 §2.3: quoted strings match either case
        ("urn:ietf:std:66", False, []),
        ("urn:ietf:bcp:66", False, []),
        ("urn:ietf:fyi:1", False, []),
        ("urn:ietf:id:ietf-urn-ietf-07", False, []),
        ("urn:ietf:mtg:41-urn", False, []),
        ("urn:ietf:params:xml:ns:netconf:base:1.0", False, []),  # RFC 3553 §3
        ("urn:ietf:rfc:26a", False, [("ietf.number", "error", 15)]),
        ("urn:ietf:rfc", False, [("ietf.number", "error", 12)]),
        ("urn:ietf:id:a.b", False, [("ietf.name", "warning", 13)]),
        ("urn:ietf:id:a.b", True, [("ietf.name", "error", 13)]),
        ("urn:ietf:params:dns::soa", False, [("ietf.params-empty-part", "error", 20)]),
        ("urn:ietf:foo:bar", False, [("ietf.unknown-series", "warning", 9)]),
    ],
)
def test_ietf_findings(text: str, strict: bool, expected: list[tuple[str, str, int]]) -> None:
    # RFC 2648 §2 ABNF; RFC 3553 §3 params; RFC 6924: further sub-namespaces are registered.
    assert codes(text, strict=strict) == expected


def test_ietf_fields_and_equivalence() -> None:
    assert ietf.parse("urn:ietf:RFC:2648") == ietf.IETFName("rfc", "2648", 2648, ("2648",))
    assert ietf.parse("urn:ietf:params:dns:rr-type-codes:soa").parts == (
        "dns",
        "rr-type-codes",
        "soa",
    )
    # Left at RFC 8141 §3: RFC 2648's lexical-equivalence rule could not be confirmed.
    assert URN.parse("urn:ietf:RFC:2648") != URN.parse("urn:ietf:rfc:2648")


# --- example: RFC 6963 ---------------------------------------------------------------------------


def test_example_has_no_rules() -> None:
    # RFC 6963 adds nothing to RFC 8141: RFC 8141 §3.2's examples, verbatim.
    assert codes("urn:example:a123,z456") == []
    assert dict(example.parse("urn:example:a123,z456")) == {}
    assert URN.parse("URN:EXAMPLE:a123,z456") == URN.parse("urn:example:a123,z456")
    assert URN.parse("urn:example:a123,z456") != URN.parse("urn:example:A123,z456")
    assert URN.parse("urn:example:a123,z456%2d") == URN.parse("urn:example:a123,z456%2D")


# --- doi: the DOI namespace registration ---------------------------------------------------------


def test_doi_is_case_insensitive_for_ascii() -> None:
    # DOI names are case-insensitive (DOI Handbook §2.4); percent-encodings stay as §3 made them.
    assert URN.parse("urn:doi:10.1000/abc") == URN.parse("URN:DOI:10.1000/ABC")
    assert URN.parse("urn:doi:10.1000/a%c3%a9") == URN.parse("urn:doi:10.1000/A%C3%A9")
    assert URN.parse("urn:doi:10.1000/x%2fy").equivalence_key() == "urn:doi:10.1000/X%2FY"
    assert URN.parse("urn:doi:10.1000/a%2fb") != URN.parse("urn:doi:10.1000/a/b")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("urn:doi:10.1000/182", []),
        ("urn:doi:10.1038/nphys1170", []),
        ("urn:doi:11.1000/182", [("doi.prefix", "error", 8)]),
        ("urn:doi:10./182", [("doi.prefix", "error", 11)]),
        ("urn:doi:10.1000", [("doi.suffix", "error", 15)]),
        ("urn:doi:10.1000/", [("doi.suffix", "error", 16)]),
    ],
)
def test_doi_findings(text: str, expected: list[tuple[str, str, int]]) -> None:
    assert codes(text) == expected


def test_doi_fields() -> None:
    assert doi.parse("urn:doi:10.1000/182") == doi.DOI("10.1000/182", "10.1000", "1000", "182")
    assert namespaces.namespace_fields(URN.parse("urn:doi:10.1000")) == {}


def test_findings_are_findings() -> None:
    [finding] = namespaces.validate("urn:uuid:x")
    assert isinstance(finding, Finding)
    assert finding.section == "RFC 9562 §4"
