"""The DDDS rules of resolver discovery (RFC 3402, RFC 3403, RFC 3404) and the forwarding
table's URL templates, as pure functions: no DNS, no database."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import UnacceptableError
from urnkit.resolver.domain.forwarding import check_template, forward_url, normalize_country
from urnkit.resolver.services.discovery import (
    Rule,
    Substitution,
    discover,
    is_resolution_service,
    parse_nameserver,
)
from urnkit.urn import URN

# --- RFC 3402 §3.2: subst_expr = delim-char ere delim-char repl delim-char *flags ---------------


def test_the_rfc_3404_example_expression() -> None:
    # RFC 3404's example rule for urn:cid: the domain after the "@".
    expression = Substitution.parse(r"!^urn:cid:.+@([^\.]+\.)(.*)$!\2!i")
    assert expression.apply("urn:cid:199606121851.1@bar.example.com") == "example.com"
    assert expression.apply("URN:CID:x@bar.example.com") == "example.com"  # the "i" flag
    assert expression.apply("urn:isbn:1") is None  # no match: the rule does not apply


def test_an_escaped_delimiter_is_the_delimiter_itself() -> None:
    expression = Substitution.parse(r"/^a\/(.*)$/x\/\1/")
    assert expression.apply("a/b") == "x/b"


def test_without_the_i_flag_case_counts() -> None:
    assert Substitution.parse("!^urn:cid:(.*)$!\\1!").apply("URN:CID:x") is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("1a1b1", "position 0: '1' cannot be the delimiter"),
        ("iaibi", "cannot be the delimiter"),
        ("\\a\\b\\", "cannot be the delimiter"),
        ("!abc", "ends before its delimiter"),
        ("!a!b", "ends before its delimiter"),
        ("!a!b!x", "position 5: flags 'x'"),
        ("!a(!b!", "the ERE"),
        ("!(a)!\\2!", "refers to \\2, but the ERE has 1 group"),
    ],
)
def test_a_malformed_expression_is_refused_saying_where(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        Substitution.parse(text)


# Delimiters that are neither special in the ERE below nor excluded by the grammar.
DELIMITERS = st.sampled_from(
    sorted(set(string.punctuation + string.ascii_letters) - set("\\^$.()*+?[]{}|i"))
)
LITERALS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\\\n"), max_size=20)


def _escaped(text: str, delimiter: str) -> str:
    return text.replace(delimiter, "\\" + delimiter)


@given(DELIMITERS, LITERALS, LITERALS, st.text(alphabet=st.characters(exclude_characters="\n")))
def test_the_replacement_is_its_text_with_the_groups_filled(
    delimiter: str, before: str, after: str, subject: str
) -> None:
    # RFC 3402 §3.2: any delimiter; "\N" is group N; an escaped delimiter is literal.
    repl = f"{_escaped(before, delimiter)}\\1{_escaped(after, delimiter)}"
    text = f"{delimiter}^(.*)${delimiter}{repl}{delimiter}"
    assert Substitution.parse(text).apply(subject) == before + subject + after


@given(st.text(max_size=40))
def test_any_text_is_an_expression_or_a_value_error(text: str) -> None:
    try:
        expression = Substitution.parse(text)
    except ValueError:
        return  # refused, saying why: what the parametrized cases above check
    assert text[0] not in "123456789i\\"
    assert expression.pattern.groups >= max(
        (part for part in expression.replacement if isinstance(part, int)), default=0
    )


# --- RFC 3403 §4.1 and RFC 3404: rules, orders, services ----------------------------------------


def _lookup(
    zone: dict[str, list[Rule]], asked: list[str] | None = None
) -> Callable[[str], Sequence[Rule]]:
    """The NAPTR records of ``zone``, noting each name asked in ``asked``."""

    def lookup(name: str) -> Sequence[Rule]:
        if asked is not None:
            asked.append(name)
        return zone.get(name, [])

    return lookup


def test_rules_are_taken_by_order_then_preference() -> None:
    zone = {
        "nbn.urn.arpa": [
            Rule(200, 1, "u", "http+N2L", "!^(.*)$!https://order200.example/\\1!", "."),
            Rule(100, 20, "u", "http+N2L", "!^(.*)$!https://pref20.example/\\1!", "."),
            Rule(100, 10, "u", "http+N2L", "!^urn:nbn:zz-(.*)$!https://pref10.example/\\1!", "."),
        ]
    }
    assert (
        discover("urn:nbn:xx-1", "urn.arpa", _lookup(zone)) == "https://pref20.example/urn:nbn:xx-1"
    )
    assert discover("urn:nbn:zz-1", "urn.arpa", _lookup(zone)) == "https://pref10.example/1"


def test_a_non_terminal_rule_leads_on_and_every_regexp_sees_the_original_urn() -> None:
    asked: list[str] = []
    zone = {
        "nbn.urn.arpa": [Rule(100, 10, "", "", "!^urn:nbn:(..)-.*$!\\1.nbn.urn.arpa!i", ".")],
        "se.nbn.urn.arpa": [Rule(100, 10, "", "", "", "resolvers.example.")],
        "resolvers.example": [
            Rule(100, 10, "U", "HTTPS+N2R", "!^urn:nbn:se-(.*)$!https://r.example/\\1!i", ".")
        ],
    }
    assert discover("URN:NBN:se-7", "urn.arpa.", _lookup(zone, asked)) == "https://r.example/7"
    assert asked == ["nbn.urn.arpa", "se.nbn.urn.arpa", "resolvers.example"]


@pytest.mark.parametrize(
    "rules",
    [
        [Rule(100, 10, "s", "http+N2L", "", "_http._tcp.example.")],  # SRV: not followed
        [Rule(100, 10, "a", "http+N2L", "", "host.example.")],  # A: not followed
        [Rule(100, 10, "x", "http+N2L", "!^(.*)$!https://x.example/\\1!", ".")],  # unknown flag
        [Rule(100, 10, "u", "ftp+N2L", "!^(.*)$!ftp://x.example/\\1!", ".")],  # not the web
        [Rule(100, 10, "u", "http+N2L", "!^(.*)$!mailto:\\1!", ".")],  # not an http(s) URI
        [Rule(100, 10, "u", "http+I2L", "!^(.*)$!https://x.example/\\1!", ".")],  # not N2L/N2R
        [Rule(100, 10, "u", "http+N2L", "!^(.*$!https://x.example/\\1!", ".")],  # broken regexp
        [Rule(100, 10, "", "", "", "nbn.urn.arpa.")],  # a loop
    ],
)
def test_rules_this_resolver_cannot_follow_find_nothing(rules: list[Rule]) -> None:
    assert discover("urn:nbn:xx-1", "urn.arpa", _lookup({"nbn.urn.arpa": rules})) is None


def test_a_chain_longer_than_the_bound_finds_nothing() -> None:
    zone = {f"{n}.example": [Rule(1, 1, "", "", "", f"{n + 1}.example.")] for n in range(20)}
    zone["nbn.urn.arpa"] = [Rule(1, 1, "", "", "", "0.example.")]
    zone["5.example"] = [Rule(1, 1, "u", "http+N2L", "!^(.*)$!https://end.example/\\1!", ".")]
    assert discover("urn:nbn:xx-1", "urn.arpa", _lookup(zone), max_steps=7) == (
        "https://end.example/urn:nbn:xx-1"
    )
    assert discover("urn:nbn:xx-1", "urn.arpa", _lookup(zone), max_steps=6) is None


@pytest.mark.parametrize(
    ("services", "resolution"),
    [
        ("http+N2L", True),
        ("https+N2R+N2C", True),
        ("HTTP+N2C+N2L", True),
        ("http+N2C", False),
        ("z3950+N2L+N2C", False),
        ("rcds+N2C", False),
        ("E2U+http", True),
        ("E2U+web:https", True),
        ("E2U+sip", False),
        ("", False),
    ],
)
def test_resolution_services(services: str, resolution: bool) -> None:
    assert is_resolution_service(services) is resolution


@pytest.mark.parametrize(
    "text", ["localhost:53", "127.0.0.1:x", "127.0.0.1:0", "1.2.3.4:5:6", "[::1]:70000"]
)
def test_a_nameserver_is_an_address_and_a_port(text: str) -> None:
    with pytest.raises(ValueError, match="IP address and a port"):
        parse_nameserver(text)


# --- the forwarding table's templates ------------------------------------------------------------

NBN_STRINGS = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/"),
    min_size=1,
    max_size=30,
).filter(lambda s: not s.startswith("/"))
PERCENT = st.sampled_from(["%2F", "%3F", "%25", "%C3%A4"])


@given(NBN_STRINGS, PERCENT)
def test_in_a_query_the_urn_decodes_back_to_itself(nbn_string: str, octet: str) -> None:
    urn = f"urn:nbn:se:kb-{nbn_string}{octet}"
    URN.parse(urn)  # a URN, as resolution has it
    url = forward_url("https://urn.kb.se/resolve?urn={urn}&x=1", urn)
    assert parse_qs(urlsplit(url).query) == {"urn": [urn], "x": ["1"]}


@given(NBN_STRINGS)
def test_in_a_path_the_urn_is_put_as_it_is(nbn_string: str) -> None:
    urn = f"URN:NBN:fi-{nbn_string}"
    assert urlsplit(forward_url("https://urn.fi/{urn}", urn)).path == "/" + urn


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:8080/{urn}",
        "http://localhost/r?u={urn}",
        "http://[::1]/{urn}",
        "https://r.example/{urn}",
    ],
)
def test_https_or_a_loopback_host(template: str) -> None:
    assert check_template(template) == template


@pytest.mark.parametrize("template", ["http://10.0.0.1/{urn}", "http://127.0.0.1.example/{urn}"])
def test_plain_http_elsewhere_is_refused(template: str) -> None:
    with pytest.raises(UnacceptableError, match="must be https"):
        check_template(template)


def test_country_codes_are_lower_case_iso_3166() -> None:
    assert normalize_country("SE") == "se"
    for code in ("zz", "xk", "s", "sé", "s1"):
        with pytest.raises(UnacceptableError, match="not a country code"):
            normalize_country(code)
