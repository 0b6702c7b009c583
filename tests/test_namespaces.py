"""IANA's registry as urnkit packages it, lookup, and the NID classes of RFC 8141 §5.

The classes are checked against a reference written from the RFC's own words (regular
expressions for the §5.1 clauses and the §5.2 ABNF), and against the registry read straight from
the CSV, not through ``urnkit.namespaces``.
"""

from __future__ import annotations

import csv
import datetime
import doctest
import re
import string
import sys
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import nids, recase

from urnkit import namespaces
from urnkit.namespaces import Namespace, NIDClass, classify_nid, lookup, registry, reservation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import update_registry

ROOT = update_registry.ROOT

PACKAGED = files("urnkit.namespaces").joinpath("registry.csv")
ROWS = list(csv.DictReader(PACKAGED.read_text(encoding="utf-8").splitlines()))
REGISTERED = {row["nid"].lower(): row["kind"] for row in ROWS}


# --- the packaged data ---------------------------------------------------------------------------


def test_packaged_csv_is_exactly_what_the_script_makes_from_the_xml() -> None:
    # The packaged data can never drift from its source: data/iana-urn-namespaces.xml.
    made = update_registry.registry_csv(ROOT / "data" / "iana-urn-namespaces.xml")
    assert made.encode("utf-8") == PACKAGED.read_bytes()


def test_registry_has_97_formal_and_8_informal_namespaces() -> None:
    # IANA's registry as of 2026-07-28: "Formal URN Namespaces" and "Informal URN Namespaces".
    assert Counter(row["kind"] for row in ROWS) == {"formal": 97, "informal": 8}
    assert list(ROWS[0]) == ["nid", "kind", "reference", "date", "template"]


def test_csv_is_sorted_by_nid_and_well_formed() -> None:
    nids_in_order = [row["nid"] for row in ROWS]
    assert nids_in_order == sorted(nids_in_order, key=str.lower)
    assert len(set(REGISTERED)) == len(ROWS)
    for row in ROWS:
        assert row["kind"] in ("formal", "informal")
        assert row["reference"], row
        assert row["date"] == "" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"])
        assert row["template"] == "" or row["template"].startswith("https://")


def test_script_renders_references_as_iana_lists_them() -> None:
    rows = {row.nid: row for row in update_registry.read_registry(update_registry.SOURCE)}
    assert rows["nbn"].reference == "RFC 8458"
    assert rows["dvb"].reference == "RFC 5328; RFC 7354"  # several, joined with "; "
    assert rows["ucode"].reference == "RFC 6588; RFC Errata 3188; RFC Errata 3189"
    assert rows["thread"].reference == "Thread Group, Inc. <https://www.threadgroup.org/>"
    assert rows["meta"].reference == "person: Juha Hakala"
    assert rows["urn-7"].reference == "RFC 6050"
    assert rows["urn-1"].reference.endswith("; contact: Michael Mealling")
    # The registration date, not the date of the last update.
    assert (rows["eic"].date, rows["uuid"].date) == ("2021-12-31", "")


def test_script_main_writes_the_csv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "src" / "registry.csv"
    target.parent.mkdir()
    monkeypatch.setattr(update_registry, "ROOT", tmp_path)
    monkeypatch.setattr(update_registry, "TARGET", target)
    assert update_registry.main([str(update_registry.SOURCE)]) == 0
    assert target.read_bytes() == PACKAGED.read_bytes()
    assert capsys.readouterr().out == "wrote src/registry.csv: 97 formal, 8 informal\n"
    assert update_registry.main(["a", "b"]) == 2


def test_script_docstring_examples() -> None:
    assert doctest.testmod(update_registry).failed == 0


# --- lookup --------------------------------------------------------------------------------------


@pytest.mark.parametrize("nid", ["nbn", "NBN", "Nbn", "nBN"])
def test_lookup_is_case_insensitive(nid: str) -> None:
    # RFC 8141 §3: the NID is case-insensitive.
    assert lookup(nid) == Namespace(
        nid="nbn",
        kind="formal",
        reference="RFC 8458",
        date=None,
        template="https://www.iana.org/assignments/urn-formal/nbn",
    )


def test_lookup_parses_dates_and_leaves_absent_fields_none() -> None:
    entry = lookup("3GPP2")
    assert entry is not None
    assert entry.date == datetime.date(2018, 6, 19)
    assert lookup("urn-8") == Namespace(
        "urn-8",
        "informal",
        "urn-8 <https://www.iana.org/assignments/urn-informal/urn-8>; contact: Juanma Garcia",
        datetime.date(2025, 7, 2),
        None,
    )


@pytest.mark.parametrize("nid", ["notregistered", "urn-99", "x-foo", "urn", "", "n b n"])
def test_lookup_of_what_is_not_registered_is_none(nid: str) -> None:
    assert lookup(nid) is None


def test_registry_is_read_only_and_complete() -> None:
    table = registry()
    assert len(table) == len(ROWS)
    assert {key: entry.kind for key, entry in table.items()} == REGISTERED
    with pytest.raises(TypeError):
        table["new"] = table["nbn"]  # type: ignore[index]


# --- classify_nid --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nid", "expected"),
    [
        # RFC 8141 §5.1: registered formal namespaces, in any case (§3).
        ("nbn", NIDClass.FORMAL),
        ("ISBN", NIDClass.FORMAL),
        ("example", NIDClass.FORMAL),  # RFC 6963
        ("3gpp", NIDClass.FORMAL),
        # RFC 8141 §5.2: registered informal namespaces, "urn-" Number.
        ("urn-1", NIDClass.INFORMAL),
        ("URN-7", NIDClass.INFORMAL),
        ("urn-8", NIDClass.INFORMAL),
        # RFC 8141 §1: well-formed but not registered.
        ("notregistered", NIDClass.UNREGISTERED),
        ("a1-b", NIDClass.UNREGISTERED),  # a digit: not ALPHA ALPHA "-"
        ("abc", NIDClass.UNREGISTERED),
        ("x1-y", NIDClass.UNREGISTERED),
        ("urnx", NIDClass.UNREGISTERED),
        # RFC 8141 §5.2: a well-formed informal NID that IANA has not assigned is free.
        ("urn-9", NIDClass.UNREGISTERED),
        ("urn-99", NIDClass.UNREGISTERED),
        ("urn-1000000", NIDClass.UNREGISTERED),
        # RFC 8141 §5.1 (2), §5.2: "urn-" begins only "urn-" Number, without leading zeros.
        ("urn-0", NIDClass.RESERVED),
        ("urn-01", NIDClass.RESERVED),
        ("urn-007", NIDClass.RESERVED),
        ("urn-a", NIDClass.RESERVED),
        ("urn-1a", NIDClass.RESERVED),
        ("urn--1", NIDClass.RESERVED),
        # RFC 2141 §2: the NID "urn" itself.
        ("urn", NIDClass.RESERVED),
        ("URN", NIDClass.RESERVED),
        # RFC 8141 §5.1 (4) and Appendix C: "X-", experimental, in any case.
        ("x-foo", NIDClass.RESERVED),
        ("X-Foo", NIDClass.RESERVED),
        ("x-1", NIDClass.RESERVED),
        # RFC 8141 §5.1 (3): two letters and a hyphen (country codes) or two (A-labels).
        ("fi-abc", NIDClass.RESERVED),
        ("DE-1", NIDClass.RESERVED),
        ("xn--abc", NIDClass.RESERVED),
        ("XN--ABC", NIDClass.RESERVED),
        ("ab--c", NIDClass.RESERVED),
        # RFC 8141 §5.1 (3): "It MUST be more than two characters long".
        ("fi", NIDClass.RESERVED),
        ("42", NIDClass.RESERVED),
        ("x1", NIDClass.RESERVED),
    ],
)
def test_classify_nid(nid: str, expected: NIDClass) -> None:
    assert classify_nid(nid) is expected


@pytest.mark.parametrize(
    ("nid", "clause", "section"),
    [
        ("urn", "urn", "RFC 2141 §2"),
        ("urn-0", "urn-prefix", "RFC 8141 §5.1, §5.2"),  # RFC 8141 §5.2: Number = DigitNonZero …
        ("urn-01", "urn-prefix", "RFC 8141 §5.1, §5.2"),
        ("X-abc", "experimental", "RFC 8141 §5.1, Appendix C"),
        ("fi-abc", "country-code", "RFC 8141 §5.1"),
        ("xn--abc", "a-label", "RFC 8141 §5.1"),
        ("fi", "two-characters", "RFC 8141 §5.1"),
    ],
)
def test_reservation_names_the_clause_and_section(nid: str, clause: str, section: str) -> None:
    reserved = reservation(nid)
    assert reserved is not None
    assert (reserved.clause, reserved.section) == (clause, section)
    assert reserved.reason


@pytest.mark.parametrize("nid", ["nbn", "urn-99", "urn-7", "abc", "a1-b"])
def test_reservation_is_none_for_nids_that_can_be_registered(nid: str) -> None:
    assert reservation(nid) is None


@pytest.mark.parametrize(
    "text",
    ["", "a", "-ab", "ab-", "a:b", "a b", "ä1", "a" * 33, "urn:nbn", "nbn\n", "ab_c"],
)
def test_classify_nid_rejects_what_is_not_a_nid(text: str) -> None:
    # RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum)
    with pytest.raises(ValueError, match="not a NID"):
        classify_nid(text)
    with pytest.raises(ValueError, match="not a NID"):
        reservation(text)


def test_every_class_carries_its_section() -> None:
    assert {member.value: member.section for member in NIDClass} == {
        "formal": "RFC 8141 §5.1",
        "informal": "RFC 8141 §5.2",
        "unregistered": "RFC 8141 §1",
        "reserved": "RFC 8141 §5.1",
    }
    # The values are the strings: a class compares, formats and serializes as its name.
    assert NIDClass("formal") is NIDClass.FORMAL
    assert (str(NIDClass.RESERVED), f"{NIDClass.INFORMAL}") == ("reserved", "informal")


@pytest.mark.parametrize("row", ROWS, ids=[row["nid"] for row in ROWS])
def test_every_registered_nid_classifies_as_its_kind(row: dict[str, str]) -> None:
    # RFC 8141 §5.1, §5.2: IANA's two sub-registries.
    assert classify_nid(row["nid"]).value == row["kind"]
    assert classify_nid(row["nid"].upper()).value == row["kind"]


def test_no_registered_nid_has_a_reserved_shape_but_informal_ones() -> None:
    # A fact about the data as of 2026-07-28: the registered NIDs keep the §5.1/§5.2 rules.
    for nid, kind in REGISTERED.items():
        if kind == "informal":
            assert re.fullmatch(r"urn-[1-9][0-9]*", nid), nid  # RFC 8141 §5.2
        else:
            assert namespaces._reservation(nid) is None, nid  # RFC 8141 §5.1


def test_registration_wins_over_a_reserved_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    # Were IANA to list a NID of a reserved shape (a national registration, say), it is registered.
    entry = Namespace("fi-national", "formal", "none", None, None)
    monkeypatch.setattr(namespaces, "_registry", lambda: {"fi-national": entry})
    assert classify_nid("FI-National") is NIDClass.FORMAL
    assert namespaces.validate("urn:fi-national:x") == []


# --- properties ----------------------------------------------------------------------------------

_ALPHA = string.ascii_lowercase


def expected_class(nid: str) -> str:
    """The class of a well-formed NID, from the words of RFC 8141 §5.1, §5.2 and RFC 2141 §2."""
    key = nid.lower()
    if key in REGISTERED:
        return REGISTERED[key]
    reserved = (
        key == "urn"  # RFC 2141 §2
        or (key.startswith("urn-") and not re.fullmatch(r"urn-[1-9][0-9]*", key))  # §5.1 (2)
        or re.match(r"x-", key) is not None  # §5.1 (4)
        or re.match(r"[a-z][a-z]-", key) is not None  # §5.1 (3), with "xn--"
        or len(key) == 2  # §5.1 (3): "more than two characters long"
    )
    return "reserved" if reserved else "unregistered"


_LDH_TAIL = st.text(string.ascii_letters + string.digits + "-", max_size=8).map(lambda s: s + "0")
# NIDs near every boundary: registered ones, the reserved prefixes, "urn-" and numbers.
_NIDS = st.one_of(
    nids(),
    st.sampled_from(sorted(REGISTERED)),
    st.tuples(
        st.sampled_from(["urn-", "urn-0", "urn-1", "x-", "xn--", "ab-", "a1-", "urn", "ur-"]),
        _LDH_TAIL | st.integers(0, 10**6).map(str),
    ).map("".join),
    st.sampled_from(_ALPHA + string.digits).flatmap(
        lambda first: st.sampled_from(_ALPHA + string.digits).map(lambda second: first + second)
    ),
).filter(lambda nid: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]", nid) is not None)


@st.composite
def _recased(draw: st.DrawFn, nid: str) -> str:
    return recase(draw, nid)


@given(st.data(), _NIDS)
def test_every_well_formed_nid_has_one_class_in_any_case(data: st.DataObject, nid: str) -> None:
    found = classify_nid(nid)
    assert found.value == expected_class(nid)
    # RFC 8141 §3: NIDs are case-insensitive, and so is their class.
    assert classify_nid(data.draw(_recased(nid))) is found
    # Exactly one class: registered (formal or informal), else reserved or unregistered.
    registered = lookup(nid) is not None
    assert registered == (found in (NIDClass.FORMAL, NIDClass.INFORMAL))
    if not registered:
        assert (reservation(nid) is not None) == (found is NIDClass.RESERVED)


@given(st.sampled_from(["x-", "X-"]), _LDH_TAIL)
def test_experimental_nids_are_reserved(prefix: str, tail: str) -> None:
    # RFC 8141 Appendix C: "strings conforming to URN syntax within experimental URN
    # namespaces are not valid URNs".
    assert classify_nid(prefix + tail) is NIDClass.RESERVED


@given(
    st.text(string.ascii_letters, min_size=2, max_size=2),
    st.sampled_from(["-", "--"]),
    _LDH_TAIL.filter(lambda tail: not tail.startswith("-")),  # the hyphens are all drawn above
)
def test_two_letters_and_a_hyphen_are_reserved(letters: str, hyphens: str, tail: str) -> None:
    # RFC 8141 §5.1 (3): ALPHA ALPHA "-" (country codes); ALPHA ALPHA "--" (A-labels, "xn--").
    reserved = reservation(letters + hyphens + tail)
    assert reserved is not None
    assert reserved.clause == ("a-label" if hyphens == "--" else "country-code")


@given(st.integers(1, 10**20))
def test_urn_dash_number_is_informal_or_unregistered_never_reserved(number: int) -> None:
    # RFC 8141 §5.2: InformalNamespaceName = "urn-" Number; Number has no leading zero.
    assert classify_nid(f"urn-{number}") in (NIDClass.INFORMAL, NIDClass.UNREGISTERED)
    assert classify_nid(f"urn-0{number}") is NIDClass.RESERVED
