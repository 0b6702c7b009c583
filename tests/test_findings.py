"""``urnkit.validate``: syntax, then NID policy, then the namespace's own rules, as findings."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from strategies import mutated, texts
from urn_strategies import urns

import urnkit
from urnkit import URN, Finding, diagnose, is_acceptable, namespaces, validate
from urnkit.namespaces import namespace_fields, register_fields, register_validator


@pytest.fixture(autouse=True)
def no_namespace_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validators and fields parsers registered by a test vanish after it."""
    monkeypatch.setattr(namespaces, "_validators", {})
    monkeypatch.setattr(namespaces, "_fields_parsers", {})


def codes(text: str, *, strict: bool = False) -> list[tuple[str, str]]:
    return [(finding.severity, finding.code) for finding in validate(text, strict=strict)]


# --- NID policy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "urn:nbn:fi-fe201003181510",  # RFC 8458
        "URN:NBN:fi-fe201003181510",  # RFC 8141 §3: scheme and NID in any case
        "urn:example:a123,z456",  # RFC 6963
        "urn:isbn:0451450523",
        "urn:urn-7:x",  # RFC 8141 §5.2: a registered informal NID (RFC 6050)
        "urn:ietf:rfc:8141?+r?=q#f",
    ],
)
def test_registered_nids_have_no_findings_lenient_or_strict(text: str) -> None:
    assert validate(text) == []
    assert validate(text, strict=True) == []


@pytest.mark.parametrize("text", ["urn:notregistered:x", "urn:urn-99:x", "urn:a1-b:c"])
def test_unregistered_nid_is_a_warning_lenient_and_an_error_strict(text: str) -> None:
    # RFC 8141 §1: "In order for the name to be a valid URN, the namespace identifier (NID)
    # needs to be registered".
    assert codes(text) == [("warning", "nid.unregistered")]
    assert codes(text, strict=True) == [("error", "nid.unregistered")]
    assert is_acceptable(validate(text))
    assert not is_acceptable(validate(text, strict=True))


def test_unregistered_finding_says_where_and_why() -> None:
    (finding,) = validate("urn:NotRegistered:x")
    assert finding == Finding(
        "nid.unregistered",
        "warning",
        'the NID "NotRegistered" is not registered with IANA; without a registered NID, '
        "a string is not a URN",
        4,
        "RFC 8141 §1",
    )


def test_unassigned_informal_nid_cites_the_informal_syntax() -> None:
    # RFC 8141 §5.2: "urn-" Number is an informal NID's form; IANA assigns them in sequence.
    (finding,) = validate("urn:urn-99:x")
    assert finding.section == "RFC 8141 §1, §5.2"
    assert "form of an informal NID" in finding.message


@pytest.mark.parametrize(
    ("text", "section", "words"),
    [
        # RFC 8141 §5.1 (4), Appendix C: "not valid URNs".
        ("urn:x-foo:bar", "RFC 8141 §5.1, Appendix C", "experimental"),
        ("urn:X-Foo:bar", "RFC 8141 §5.1, Appendix C", "experimental"),
        # RFC 8141 §5.1 (3): "xn--", two letters and two hyphens, for DNS A-labels.
        ("urn:xn--abc:d", "RFC 8141 §5.1", "A-labels"),
        # RFC 8141 §5.1 (3): two letters and a hyphen, for ISO 3166-1 alpha-2 country codes.
        ("urn:fi-abc:d", "RFC 8141 §5.1", "country codes"),
        # RFC 8141 §5.1 (3): more than two characters.
        ("urn:fi:x", "RFC 8141 §5.1", "more than two characters"),
        # RFC 8141 §5.1 (2), §5.2: "urn-" and a Number without leading zero.
        ("urn:urn-0:x", "RFC 8141 §5.1, §5.2", "without leading zeros"),
        ("urn:urn-01:x", "RFC 8141 §5.1, §5.2", "without leading zeros"),
        # RFC 2141 §2: the NID "urn".
        ("urn:urn:x", "RFC 2141 §2", 'scheme name "urn"'),
    ],
)
def test_reserved_nid_is_an_error_lenient_and_strict(text: str, section: str, words: str) -> None:
    for strict in (False, True):
        (finding,) = validate(text, strict=strict)
        assert (finding.code, finding.severity, finding.position) == ("nid.reserved", "error", 4)
        assert finding.section == section
        assert words in finding.message
        assert finding.message.startswith(f'the NID "{text.split(":")[1]}" is reserved: ')


# --- syntax --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "section"),
    [
        ("urn:example:a b", 13, "RFC 8141 §2.2"),  # a space in the NSS
        ("urn:ab-:c", 7, "RFC 8141 §2, Appendix B"),  # the NID ends with '-'
        ("urn:x-foo", 9, "RFC 8141 §2"),  # no ':' and NSS: syntax first, not the NID
        ("urn:example:a?b", 14, "RFC 8141 §2"),
        ("http://example.com", 0, "RFC 8141 §2"),
    ],
)
def test_syntax_error_is_one_error_with_the_diagnosis(
    text: str, position: int, section: str
) -> None:
    diagnosis = diagnose(text)
    assert diagnosis is not None
    expected = Finding("syntax.invalid", "error", diagnosis.reason, position, section)
    assert validate(text) == [expected]
    assert validate(text, strict=True) == [expected]


@given(mutated(texts("rfc8141")))
def test_a_text_that_is_not_a_urn_gets_exactly_its_diagnosis(text: str) -> None:
    diagnosis = diagnose(text)
    findings = validate(text)
    if diagnosis is None:
        assert all(finding.code != "syntax.invalid" for finding in findings)
    else:
        assert findings == [
            Finding(
                "syntax.invalid", "error", diagnosis.reason, diagnosis.position, diagnosis.section
            )
        ]


@given(urns())
def test_a_urn_gets_at_most_one_nid_finding_at_position_4(text: str) -> None:
    nid_class = urnkit.classify_nid(URN.parse(text).nid)
    lenient, strict = validate(text), validate(text, strict=True)
    assert len(lenient) == len(strict) <= 1
    assert all(finding.position == 4 for finding in lenient + strict)
    # RFC 8141 §1: only registered NIDs pass; §5.1: reserved ones never do.
    assert is_acceptable(strict) == (nid_class in ("formal", "informal"))
    assert is_acceptable(lenient) == (nid_class != "reserved")


# --- findings ------------------------------------------------------------------------------------


def test_finding_is_frozen_and_prints_as_one_line() -> None:
    finding = Finding("nbn.check-digit", "warning", "wrong check digit", 24, "RFC 8458 §4.2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.code = "x"  # type: ignore[misc]
    assert (
        str(finding) == "warning at position 24: wrong check digit [nbn.check-digit, RFC 8458 §4.2]"
    )
    positionless = dataclasses.replace(finding, position=None)
    assert str(positionless) == "warning: wrong check digit [nbn.check-digit, RFC 8458 §4.2]"


def test_acceptable_means_no_error() -> None:
    warning = Finding("a.b", "warning", "w", None, "RFC 8141 §1")
    error = Finding("a.c", "error", "e", None, "RFC 8141 §1")
    assert is_acceptable([])
    assert is_acceptable([warning, warning])
    assert not is_acceptable([warning, error])
    assert not is_acceptable(iter([error]))


# --- namespace modules ---------------------------------------------------------------------------


def test_a_registered_validator_adds_its_findings_and_sees_strict() -> None:
    calls: list[tuple[str, bool]] = []

    def nbn_rules(urn: URN, *, strict: bool) -> list[Finding]:
        calls.append((str(urn), strict))
        severity: urnkit.Severity = "error" if strict else "warning"
        return [Finding("nbn.no-hyphen", severity, "no hyphen", None, "RFC 8458 §4.2")]

    register_validator("NBN", nbn_rules)  # any case
    assert codes("urn:nbn:hr:168:748382") == [("warning", "nbn.no-hyphen")]
    assert codes("URN:Nbn:hr:168:748382", strict=True) == [("error", "nbn.no-hyphen")]
    assert calls == [("urn:nbn:hr:168:748382", False), ("URN:Nbn:hr:168:748382", True)]
    # Not called for other NIDs, nor for texts that are not URNs.
    assert validate("urn:isbn:0451450523") == []
    assert codes("urn:nbn:a b") == [("error", "syntax.invalid")]
    assert len(calls) == 2


def test_namespace_findings_follow_the_nid_finding() -> None:
    def rules(urn: URN, *, strict: bool) -> list[Finding]:
        return [Finding("zzz.rule", "warning", "w", 8, "RFC 0")]

    register_validator("zzz", rules)
    assert codes("urn:zzz:x") == [("warning", "nid.unregistered"), ("warning", "zzz.rule")]


def test_registering_another_validator_for_a_nid_is_refused() -> None:
    def first(urn: URN, *, strict: bool) -> list[Finding]:
        return []

    def second(urn: URN, *, strict: bool) -> list[Finding]:
        return []

    register_validator("nbn", first)
    register_validator("NBN", first)  # the same again: harmless
    with pytest.raises(ValueError, match="registered already"):
        register_validator("Nbn", second)


def test_fields_come_from_the_registered_parser() -> None:
    urn = URN.parse("urn:nbn:fi-fe201003181510")
    assert namespace_fields(urn) is None
    register_fields("nbn", lambda urn: {"country": urn.nss[:2]})
    assert namespace_fields(urn) == {"country": "fi"}
    with pytest.raises(ValueError, match="registered already"):
        register_fields("NBN", lambda urn: {})
