"""Inputs from a peer's test table, judged by urnkit and by the independent reference.

The inputs (not their verdicts: that table predates RFC 8141 and judges by RFC 2141) are taken
from the test table of the Go library go-urn (leodido/go-urn, testingtable.go). Each is run in
both modes; urnkit's verdict, error position and parts must equal the reference's, and a few
verdicts that RFC 8141 and RFC 2141 decide differently are stated outright.
"""

from __future__ import annotations

import pytest
import reference

from urnkit import URN, Mode, diagnose, equivalent, is_valid

GO_URN_INPUTS = [
    "urn:simple:simple",
    "URN:foo:a123,456",
    "urn:foo:a123,456",
    "urn:FOO:a123,456",
    "urn:foo:A123,456",
    "urn:foo:a123%2C456",
    "URN:FOO:a123%2c456",
    "URN:FOO:ABC%FFabc123%2c456",
    "URN:FOO:ABC%FFabc123%2C456%9A",
    "urn:ietf:params:scim:schemas:core:2.0:User",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:userName",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:meta.lastModified",
    "urn:a:b",
    "urn:a::",
    "urn:a:-",
    "URN:simple:simple",
    "Urn:simple:simple",
    "urn:urna:simple",
    "urn:burnout:nss",
    "urn:burn:nss",
    "urn:urnurnurn:x",
    "urn:abcdefghilmnopqrstuvzabcdefghilm:x",
    "URN:123:x",
    "URN:1ab:x",
    "URN:a1b:x",
    "URN:a12:x",
    "URN:cd2:x",
    "URN:abcd-:x",
    "URN:abcd-abcd:x",
    "URN:a123-456z:x",
    "urn:urnx:urn",
    "urn:urnurnurn:urn",
    "urn:hey:urnurnurn",
    "urn:ciao:a:b:c",
    "urn:aaa:x:y:",
    "urn:ciao:-",
    "urn:ciao::",
    "urn:colon:::::nss",
    "urn:ciao:!",
    "urn:ciao:!!*",
    "urn:ciao:-!:-,:x",
    "urn:ciao:=@",
    "urn:ciao:@!=%2C(xyz)+a,b.*@g=$_'",
    "URN:hexes:%25",
    "URN:x:abc%1Dz%2F%3az",
    "URN:-xxx:x",
    "URN:---xxx:x",
    "urn::colon:nss",
    "urn::::nss",
    "urn:abcdefghilmnopqrstuvzabcdefghilmn:specificstring",
    "URN:a!?:x",
    "URN:@,:x",
    "URN:#,:x",
    "URN:bc'.@:x",
    "urn:urn:NSS",
    "urn:white space:NSS",
    "urn:concat:no spaces",
    "urn:a:%",
    "urn:a:?",
    "urn:a:#",
    "urn:a:/",
    "urn:",
    "urn::",
    "urn:a",
    "urn:a:",
]
MODES: tuple[Mode, ...] = ("rfc8141", "rfc2141")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", GO_URN_INPUTS)
def test_peer_inputs_agree_with_the_reference(text: str, mode: Mode) -> None:
    expected = reference.parse(text, mode)
    assert is_valid(text, mode=mode) is (expected is not None)
    diagnosis = diagnose(text, mode=mode)
    assert (None if diagnosis is None else diagnosis.position) == reference.error_position(
        text, mode
    )
    if expected is not None:
        urn = URN.parse(text, mode=mode)
        assert (urn.nid, urn.nss, urn.assigned_name) == (
            expected.nid,
            expected.nss,
            expected.assigned_name,
        )


@pytest.mark.parametrize(
    ("text", "rfc8141", "rfc2141"),
    [
        ("urn:a:b", False, True),  # RFC 8141 §2: NID has 2 to 32 characters; RFC 2141 §2: 1 to 32
        ("URN:abcd-:x", False, True),  # RFC 8141 Appendix B.1: no "-" at the end of the NID
        ("urn:urn:NSS", True, False),  # RFC 2141 §2 reserves the NID "urn"; RFC 8141's ABNF not
        ("urn:ciao:=@", True, True),  # pchar and <trans> both hold "=" and "@"
        ("urn:a:/", False, False),  # RFC 8141 §2: the NSS begins with a pchar, not "/"
        ("urn:ab:/", False, False),
    ],
)
def test_verdicts_where_the_peer_table_is_outdated(text: str, rfc8141: bool, rfc2141: bool) -> None:
    assert is_valid(text, mode="rfc8141") is rfc8141
    assert is_valid(text, mode="rfc2141") is rfc2141


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [  # RFC 8141 §3 / RFC 2141 §5: the peer's equivalence pairs, with the RFCs' verdicts
        ("urn:foo:a123%2C456", "URN:FOO:a123%2c456", True),
        ("urn:foo:AbC123%2C456", "URN:FOO:AbC123%2c456", True),
        ("urn:foo:AbC123%2C456%1f", "URN:FOO:AbC123%2c456%1f", True),
        ("URN:foo:a123,456", "urn:foo:a123,456", True),
        ("URN:foo:a123,456", "urn:FOO:a123,456", True),
        ("urn:foo:a123,456", "urn:FOO:a123,456", True),
        ("urn:foo:A123,456", "URN:foo:a123,456", False),
        ("urn:foo:A123,456", "urn:foo:a123,456", False),
        ("urn:foo:A123,456", "urn:FOO:a123,456", False),
    ],
)
def test_peer_equivalence_pairs(a: str, b: str, same: bool) -> None:
    for mode in MODES:
        assert equivalent(a, b, mode=mode) is same
