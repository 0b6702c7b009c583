"""URN:NBN (RFC 8458): splitting, findings strict and lenient, national rules, equivalence."""

from __future__ import annotations

import builtins
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import ALNUM, PCHAR, pct_encoded

import urnkit.namespaces.nbn
from urnkit import URN, URNSyntaxError, is_acceptable, namespaces
from urnkit.namespaces import namespace_fields
from urnkit.namespaces.nbn import NBN, dnb_check_digit, equivalence_key, parse, validate


def codes(text: str, *, strict: bool = False) -> list[tuple[str, str]]:
    return [(finding.severity, finding.code) for finding in validate(text, strict=strict)]


# --- RFC 8458's own examples ---------------------------------------------------------------------

# RFC 8458 §4.3, "Examples", verbatim.
RFC_EXAMPLES = {
    "URN:NBN:fi-fe201003181510": NBN("fi", (), "fi", "fe201003181510"),
    "urn:nbn:ch:bel-9039": NBN("ch", ("bel",), "ch:bel", "9039"),
    "urn:nbn:se:uu:diva-3475": NBN("se", ("uu", "diva"), "se:uu:diva", "3475"),
    "urn:nbn:hu-3006": NBN("hu", (), "hu", "3006"),
}


@pytest.mark.parametrize(("text", "expected"), RFC_EXAMPLES.items())
def test_rfc_examples_split_at_the_first_hyphen(text: str, expected: NBN) -> None:
    # RFC 8458 §4.2: nbn-nss = prefix "-" nbn-string; prefix = iso-cc *( ":" subspc ), and a
    # subspc holds no hyphen, so the first hyphen ends the prefix.
    assert parse(text) == expected
    assert parse(URN.parse(text)) == expected


@pytest.mark.parametrize("text", RFC_EXAMPLES)
def test_rfc_examples_are_valid_strict(text: str) -> None:
    # RFC 8458 §4.2, §4.3. urn:nbn:ch:bel-9039 even carries a correct DNB check digit.
    assert validate(text, strict=True) == []
    assert urnkit.validate(text, strict=True) == []


# --- real URN:NBNs -------------------------------------------------------------------------------

REAL = {
    # Finland (National Library of Finland, urn.fi)
    "URN:NBN:fi:tty-201905101555": NBN("fi", ("tty",), "fi:tty", "201905101555"),
    "urn:nbn:fi:lb-2021041522": NBN("fi", ("lb",), "fi:lb", "2021041522"),
    "urn:nbn:fi:csc-kata00001000000000000226": NBN(
        "fi", ("csc",), "fi:csc", "kata00001000000000000226"
    ),
    # Germany (DNB), with correct check digits
    "urn:nbn:de:gbv:089-3321752945": NBN("de", ("gbv", "089"), "de:gbv:089", "3321752945"),
    "urn:nbn:de:kobv:83-opus4-39397": NBN("de", ("kobv", "83"), "de:kobv:83", "opus4-39397"),
    "urn:nbn:de:bsz:ch1-qucosa-86443": NBN("de", ("bsz", "ch1"), "de:bsz:ch1", "qucosa-86443"),
    "urn:nbn:de:hebis:30:3-429197": NBN("de", ("hebis", "30", "3"), "de:hebis:30:3", "429197"),
    "urn:nbn:de:0030-drops-130471": NBN("de", ("0030",), "de:0030", "drops-130471"),
    "urn:nbn:de:101:1-201102033592": NBN("de", ("101", "1"), "de:101:1", "201102033592"),
    # Sweden (KB, urn.kb.se)
    "urn:nbn:se:kth:diva-141328": NBN("se", ("kth", "diva"), "se:kth:diva", "141328"),
    "urn:nbn:se:kb:dig-17390055": NBN("se", ("kb", "dig"), "se:kb:dig", "17390055"),
    # Norway (National Library of Norway, urn.nb.no)
    "URN:NBN:no-nb_digibok_2013060406055": NBN("no", (), "no", "nb_digibok_2013060406055"),
    "URN:NBN:no-79895": NBN("no", (), "no", "79895"),
    # The Netherlands (KB, persistent-identifier.nl)
    "urn:nbn:nl:ui:13-jsk-7ek": NBN("nl", ("ui", "13"), "nl:ui:13", "jsk-7ek"),
    "URN:NBN:NL:UI:10-1-115852": NBN("NL", ("UI", "10"), "NL:UI:10", "1-115852"),
    # Czech Republic (National Library, CzIDLo)
    "urn:nbn:cz:mzk-0005ol": NBN("cz", ("mzk",), "cz:mzk", "0005ol"),
    # Austria (OBVSG), with correct DNB check digits
    "urn:nbn:at:at-ubl:3-2681": NBN("at", ("at",), "at:at", "ubl:3-2681"),
    "urn:nbn:at:AT-WBR-7003": NBN("at", ("AT",), "at:AT", "WBR-7003"),
    "urn:nbn:at:at-ubtuw:1-2637": NBN("at", ("at",), "at:at", "ubtuw:1-2637"),
    # Switzerland (resolved by DNB), with correct DNB check digits
    "urn:nbn:ch:serval-BIB_57AAC24FE1154": NBN("ch", ("serval",), "ch:serval", "BIB_57AAC24FE1154"),
    "urn:nbn:ch:rero-006-122207": NBN("ch", ("rero",), "ch:rero", "006-122207"),
}


@pytest.mark.parametrize(("text", "expected"), REAL.items())
def test_real_urn_nbns_split_right_and_are_valid_strict(text: str, expected: NBN) -> None:
    # RFC 8458 §4.2
    assert parse(text) == expected
    assert validate(text, strict=True) == []
    assert urnkit.validate(text, strict=True) == []


CROATIAN = ["urn:nbn:hr:168:748382", "urn:nbn:hr:168:865107", "URN:NBN:HR:188:496570"]


@pytest.mark.parametrize("text", CROATIAN)
def test_croatian_urn_nbns_without_hyphen_parse_leniently(text: str) -> None:
    # RFC 8458 §4.2: the hyphen is not optional in the ABNF; Croatian URN:NBNs have none. The
    # lenient reading splits at the last colon: hr:<institution>:<number>.
    nbn = parse(text)
    assert nbn.country.lower() == "hr"
    assert len(nbn.subnamespaces) == 1
    assert nbn.prefix == f"{nbn.country}:{nbn.subnamespaces[0]}"
    assert nbn.nbn_string == text.rsplit(":", 1)[1]
    assert codes(text) == [("warning", "nbn.no-hyphen")]
    assert codes(text, strict=True) == [("error", "nbn.no-hyphen")]
    assert is_acceptable(urnkit.validate(text))
    assert not is_acceptable(urnkit.validate(text, strict=True))


def test_no_hyphen_finding_points_where_the_hyphen_was_expected() -> None:
    # RFC 8458 §4.2
    (finding,) = validate("urn:nbn:hr:168:748382")
    assert finding.position == len("urn:nbn:hr:168")
    assert finding.section == "RFC 8458 §4.2"


def test_no_hyphen_and_no_colon_is_all_country_with_an_empty_nbn_string() -> None:
    # RFC 8458 §4.2: nothing is left for the NBN string.
    assert parse("urn:nbn:fi") == NBN("fi", (), "fi", "")
    assert codes("urn:nbn:fi") == [("warning", "nbn.no-hyphen"), ("error", "nbn.empty-nbn-string")]


def test_the_parser_ignores_components() -> None:
    # RFC 8141 §2.3: components are not part of the NSS.
    assert parse("urn:nbn:fi-a?+r?=q#f") == NBN("fi", (), "fi", "a")


# --- non-NBN input -------------------------------------------------------------------------------


def test_parse_rejects_other_namespaces_and_non_urns() -> None:
    with pytest.raises(ValueError, match="not a URN:NBN"):
        parse("urn:isbn:0451450523")
    with pytest.raises(URNSyntaxError):
        parse("nbn:fi-123")
    with pytest.raises(ValueError, match="not a URN:NBN"):
        validate("urn:isbn:0451450523")


@pytest.mark.parametrize("text", ["urn:nbn:f-1", "urn:nbn:fin-1", "urn:nbn:12-3", "urn:nbn:-1"])
def test_nss_without_a_two_letter_country_code(text: str) -> None:
    # RFC 8458 §4.2: iso-cc = 2ALPHA.
    with pytest.raises(ValueError, match="two-letter"):
        parse(text)
    assert codes(text) == [("error", "nbn.country")]
    (finding,) = validate(text)
    assert finding.position == len("urn:nbn:")
    assert namespace_fields(URN.parse(text)) == {}


# --- the country code ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["urn:nbn:jj-1", "urn:nbn:uk-1", "urn:nbn:EU:x-1"])
def test_unknown_country_code_is_an_error(text: str) -> None:
    # RFC 8458 §4.2: iso-cc is an "Alpha-2 country code as assigned by part 1 of ISO 3166".
    assert codes(text) == [("error", "nbn.country")]
    assert codes(text, strict=True) == [("error", "nbn.country")]


@pytest.mark.parametrize("code", ["AA", "qm", "QZ", "xa", "XX", "xz", "zz"])
def test_user_assigned_country_code_is_a_warning(code: str) -> None:
    # RFC 8458 §4.2; ISO 3166-1 leaves AA, QM-QZ, XA-XZ and ZZ for user assignment.
    text = f"urn:nbn:{code}-123"
    assert codes(text) == [("warning", "nbn.country-user-assigned")]
    assert codes(text, strict=True) == [("warning", "nbn.country-user-assigned")]


def test_country_codes_are_case_insensitive() -> None:
    # RFC 8458 §4.2: "The entire prefix is case insensitive."
    assert validate("urn:nbn:FI-123") == validate("urn:nbn:Fi-123") == []


@pytest.fixture
def no_pycountry(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycountry cannot be imported, as when urnkit[checks] is not installed."""
    real_import = builtins.__import__

    def failing_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pycountry" or name.startswith("pycountry."):
            raise ImportError("No module named 'pycountry'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pycountry", raising=False)
    monkeypatch.setattr(builtins, "__import__", failing_import)


@pytest.mark.usefixtures("no_pycountry")
def test_without_pycountry_country_codes_are_unchecked() -> None:
    # RFC 8458 §4.2: the code cannot be checked against ISO 3166-1 without the data.
    for text in ("urn:nbn:fi-123", "urn:nbn:jj-123"):
        (finding,) = validate(text, strict=True)
        assert (finding.code, finding.severity) == ("nbn.country-unchecked", "warning")
        assert "install urnkit[checks]" in finding.message
        assert finding.position == len("urn:nbn:")
    # user-assigned codes are known without pycountry
    assert codes("urn:nbn:xx-1") == [("warning", "nbn.country-user-assigned")]


def test_with_pycountry_country_codes_are_checked() -> None:
    pytest.importorskip("pycountry")
    assert codes("urn:nbn:jj-123") == [("error", "nbn.country")]


# --- sub-namespaces, NBN string, components ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("urn:nbn:de::x-1", 11),  # empty
        ("urn:nbn:de:a.b-1", 11),
        ("urn:nbn:fi:ok:a_b-1", 14),
        ("urn:nbn:fi:a%41-1", 11),
    ],
)
def test_malformed_subnamespace(text: str, position: int) -> None:
    # RFC 8458 §4.2: subspc = 1*(ALPHA / DIGIT); §4.3: no colons or hyphens.
    findings = [f for f in validate(text, strict=True) if f.code == "nbn.subnamespace"]
    assert [(f.severity, f.position) for f in findings] == [("error", position)]
    assert [f.severity for f in validate(text) if f.code == "nbn.subnamespace"] == ["warning"]


def test_empty_nbn_string_is_an_error_lenient_too() -> None:
    # RFC 8458 §4.2: nbn-string = path-rootless, which is never empty.
    assert codes("urn:nbn:fi-") == [("error", "nbn.empty-nbn-string")]
    (finding,) = validate("urn:nbn:fi-")
    assert finding.position == len("urn:nbn:fi-")


def test_nbn_string_must_be_path_rootless() -> None:
    # RFC 8458 §4.2 and RFC 3986 §3.3: path-rootless = segment-nz *( "/" segment ).
    assert codes("urn:nbn:fi-/a", strict=True) == [("error", "nbn.nbn-string")]
    assert codes("urn:nbn:fi-/a") == [("warning", "nbn.nbn-string")]
    assert validate("urn:nbn:fi-a//b%2F-c:d", strict=True) == []


def test_r_and_q_components_are_warnings() -> None:
    # RFC 8458 §4.2.1: "URN:NBN resolvers do not currently support the use of either
    # r-component or q-component."
    text = "urn:nbn:fi-fe201003181510?+res?=q=1#f"
    findings = validate(text, strict=True)
    assert [(f.severity, f.code, f.position) for f in findings] == [
        ("warning", "nbn.r-component", text.index("?+")),
        ("warning", "nbn.q-component", text.index("?=")),
    ]
    assert {f.section for f in findings} == {"RFC 8458 §4.2.1"}
    assert validate("urn:nbn:fi-fe201003181510#page=2") == []  # RFC 8458 §4.2.2


# --- national rules: DNB check digit -------------------------------------------------------------


def test_dnb_worked_example_gives_5() -> None:
    # DNB, "Beschreibung des Algorithmus zur Berechnung der URN-Prüfziffer".
    assert dnb_check_digit("urn:nbn:de:gbv:089-332175294") == "5"
    assert dnb_check_digit("URN:NBN:DE:GBV:089-332175294") == "5"


def test_dnb_check_digit_rejects_characters_outside_its_table() -> None:
    with pytest.raises(ValueError, match="no code"):
        dnb_check_digit("urn:nbn:de:x-a%20")
    with pytest.raises(ValueError, match="empty"):
        dnb_check_digit("")


@pytest.mark.parametrize(
    "text",
    [
        "urn:nbn:de:gbv:089-3321752940",
        "urn:nbn:at:at-ubl:3-2680",
        "urn:nbn:ch:bel-9038",
        "urn:nbn:de:101:1-2022072702462487314192",  # DNB's own newer URNs have no check digit
        "urn:nbn:de:101:1-2019072802401757702913",
        "urn:nbn:de:gbv:089-332175294x",  # not a digit at all
        "urn:nbn:de:x-a~1",  # "~" is not in DNB's table
    ],
)
def test_wrong_dnb_check_digit_is_a_warning(text: str) -> None:
    # RFC 8458 §4.1: national libraries set their own assignment policy; DNB's includes a check
    # digit for URN:NBNs under de (and those it resolves for at and ch).
    for strict in (False, True):
        (finding,) = validate(text, strict=strict)
        assert (finding.code, finding.severity) == ("nbn.check-digit", "warning")
        assert finding.position == len(text) - 1
    assert is_acceptable(urnkit.validate(text, strict=True))


def test_check_digit_is_computed_on_the_assigned_name_only() -> None:
    # RFC 8141 §2.3: components are not part of the name.
    assert validate("urn:nbn:de:gbv:089-3321752945#x") == []


def test_other_countries_have_no_check_digit_rule() -> None:
    assert validate("urn:nbn:fi-fe2010031815109") == []


@given(st.text("abcdefghijklmnopqrstuvwxyz0123456789-._/:+", min_size=1, max_size=30))
def test_appended_dnb_digit_always_validates(tail: str) -> None:
    # DNB's check digit, appended to any NBN string made of its characters, checks.
    base = f"urn:nbn:de:gbv:089-{tail.lstrip('/')}"
    text = base + dnb_check_digit(base)
    assert [f for f in validate(text) if f.code == "nbn.check-digit"] == []
    assert [f for f in validate(text.upper()) if f.code == "nbn.check-digit"] == []


# --- national rules: the Czech format ------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["urn:nbn:cz:mzk-0005ol", "urn:nbn:cz:aba001-0001r3", "URN:NBN:CZ:NK-00ABCD"]
)
def test_czech_format(text: str) -> None:
    assert validate(text, strict=True) == []


@pytest.mark.parametrize(
    "text",
    [
        "urn:nbn:cz:edep-000014375",  # 9 characters
        "urn:nbn:cz:a-123456",  # registrar code too short
        "urn:nbn:cz:abcdefg-123456",  # registrar code too long
        "urn:nbn:cz:mzk-0005o_",
        "urn:nbn:cz-123456",
    ],
)
def test_czech_format_is_a_warning(text: str) -> None:
    # RFC 8458 §4.1: the Czech National Library's policy, cz:<registrar>-<6 base-36 characters>.
    findings = [f for f in validate(text, strict=True) if f.code == "nbn.cz-format"]
    assert [(f.severity, f.position) for f in findings] == [("warning", len("urn:nbn:"))]


def test_national_rules_are_data_looked_up_by_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    # The longest matching prefix wins: a rule for de:gbv replaces the one for de.
    def nothing(urn: URN, nbn: NBN) -> list[urnkit.Finding]:
        return []

    rules = {**urnkit.namespaces.nbn.NATIONAL_RULES, "de:gbv": nothing}
    monkeypatch.setattr(urnkit.namespaces.nbn, "NATIONAL_RULES", rules)
    assert validate("urn:nbn:DE:GBV:089-3321752940") == []
    assert codes("urn:nbn:de:kobv:83-opus4-39390") == [("warning", "nbn.check-digit")]


# --- equivalence ---------------------------------------------------------------------------------


def test_prefix_case_is_folded_nbn_string_case_is_kept() -> None:
    # RFC 8458 §4.3: "convert all characters in the prefix ... to a single case"; NBN strings
    # "MUST" be treated "as case sensitive".
    a = URN.parse("URN:NBN:FI-fe201003181510")
    assert a == URN.parse("urn:nbn:fi-fe201003181510")
    assert hash(a) == hash(URN.parse("urn:nbn:fi-fe201003181510"))
    assert a != URN.parse("urn:nbn:fi-FE201003181510")
    assert urnkit.equivalent("URN:NBN:FI:ABC-x", "urn:nbn:fi:abc-x")
    assert not urnkit.equivalent("URN:NBN:FI:ABC-x", "urn:nbn:fi:abc-X")
    assert URN.parse("urn:nbn:SE:UU:DIVA-3475") == URN.parse("urn:nbn:se:uu:diva-3475")


def test_equivalence_key_on_section_3_keys() -> None:
    # RFC 8458 §4.3, steps 1-3: "urn:nbn:" and percent-encodings come folded by RFC 8141 §3.
    assert equivalence_key("urn:nbn:DE:Gbv:089-Ab%2F-C") == "urn:nbn:de:gbv:089-Ab%2F-C"
    assert equivalence_key("urn:nbn:HR:168:748382") == "urn:nbn:hr:168:748382"
    assert equivalence_key("urn:nbn:FI") == "urn:nbn:fi"
    assert equivalence_key("urn:nbn:FI:x:Abc") == "urn:nbn:fi:x:Abc"  # as parse() splits it
    with pytest.raises(ValueError, match="not the RFC 8141 §3 key"):
        equivalence_key("urn:isbn:123")


def test_module_registers_its_rules() -> None:
    assert namespaces._validators["nbn"] is validate
    assert namespace_fields(URN.parse("urn:nbn:se:uu:diva-3475")) == {
        "country": "se",
        "subnamespaces": ("uu", "diva"),
        "prefix": "se:uu:diva",
        "nbn_string": "3475",
    }


_LETTERS_DIGITS = st.text(ALNUM, min_size=1, max_size=6)
_NBN_STRING_UNIT = st.sampled_from(PCHAR + "/") | pct_encoded()


@st.composite
def urn_nbns(draw: st.DrawFn) -> str:
    """``urn:nbn:<NSS>`` with a prefix per RFC 8458 §4.2 and an NBN string of any pchar, or
    (sometimes) any RFC 8141 NSS at all."""
    country = draw(
        st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2)
    )
    subnamespaces = draw(st.lists(_LETTERS_DIGITS, max_size=3))
    first = draw(st.sampled_from(PCHAR) | pct_encoded())
    rest = draw(st.lists(_NBN_STRING_UNIT, max_size=12))
    delimiter = draw(st.sampled_from(["-", "-", "-", ":"]))
    return "urn:nbn:" + ":".join([country, *subnamespaces]) + delimiter + first + "".join(rest)


def _recase(data: st.DataObject, text: str) -> str:
    """``text`` with the case of each letter chosen at random."""
    flips = data.draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(ch.swapcase() if flip else ch for ch, flip in zip(text, flips, strict=True))


def _section_3_respelling(data: st.DataObject, text: str) -> str:
    """``text`` with scheme, NID and percent-encoded hex digits recased (RFC 8141 §3)."""
    head, nss = text[:8], text[8:]
    parts = nss.split("%")
    respelled = [parts[0]] + [_recase(data, part[:2]) + part[2:] for part in parts[1:]]
    return _recase(data, head) + "%".join(respelled)


@given(st.data(), urn_nbns())
def test_nbn_equivalence_only_merges(data: st.DataObject, text: str) -> None:
    # RFC 8141 §3: a namespace's rules may only merge URNs §3 calls different, never split §3's
    # equal ones.
    other = _section_3_respelling(data, text)
    a, b = URN.parse(text), URN.parse(other)
    assert a.normalize().assigned_name == b.normalize().assigned_name
    assert a == b
    assert hash(a) == hash(b)


@given(st.data(), urn_nbns())
def test_prefix_case_changes_keep_equality(data: st.DataObject, text: str) -> None:
    # RFC 8458 §4.3: the prefix is case-insensitive.
    prefix = parse(text).prefix
    end = len("urn:nbn:") + len(prefix)
    other = text[:8] + _recase(data, prefix) + text[end:]
    assert URN.parse(text) == URN.parse(other)
    assert parse(other).prefix.lower() == prefix.lower()
    assert parse(other).nbn_string == parse(text).nbn_string


@given(urn_nbns())
def test_nbn_string_case_changes_break_equality(text: str) -> None:
    # RFC 8458 §4.2: parsers "MUST treat these as case sensitive".
    nbn = parse(text)
    start = len(text) - len(nbn.nbn_string)
    unencoded = [i for i in range(start, len(text)) if "%" not in text[max(start, i - 2) : i]]
    letters = [i for i in unencoded if text[i].isalpha()]
    if letters:
        i = letters[0]
        other = text[:i] + text[i].swapcase() + text[i + 1 :]
        assert URN.parse(text) != URN.parse(other)
