"""The ``urnkit`` command, black-box: arguments in; stdout, stderr and exit status out.

Most tests call ``main([...])`` in-process; those under "a real process" run ``python -m urnkit``
for what only a process shows: piped stdin, worker processes, a closed pipe, a non-terminal
stderr.
"""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from importlib.metadata import version
from pathlib import Path

import pytest

from urnkit import URN, Finding, commandline, namespaces
from urnkit.cli import check, main

Outcome = tuple[int, str, str]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """Exit status, stdout and stderr of ``urnkit argv...``."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def stdin_of(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


# --- check URN... -------------------------------------------------------------------------------


def test_check_valid_urns_print_ok_and_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "check", "urn:example:a123,z456", "URN:NBN:fi-fe201003181510")
    assert (status, err) == (0, "")
    assert out == "ok  urn:example:a123,z456\nok  URN:NBN:fi-fe201003181510\n"


def test_check_invalid_prints_reason_and_caret_under_the_position(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # RFC 8141 §2.2: a space is not in the NSS repertoire; position 13 is the space.
    status, out, _ = run(capsys, "check", "urn:example:a b")
    assert status == 1
    assert out.splitlines() == [
        "not a URN at position 13: U+0020 (a space) is not allowed in the NSS [NSS, RFC 8141 §2.2]",
        "  urn:example:a b",
        "               ^",
    ]


def test_check_one_invalid_among_valid_exits_1_and_keeps_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # RFC 8141 §2: '?' after the NSS must start '?+' or '?='.
    status, out, _ = run(capsys, "check", "urn:ex:a", "urn:ex:a?b", "urn:ex:c")
    assert status == 1
    lines = out.splitlines()
    assert lines[0] == "ok  urn:ex:a"
    assert lines[1].startswith("not a URN at position 9: a '?' after the NSS")
    assert lines[-1] == "ok  urn:ex:c"


def test_check_json_for_arguments_has_no_line_number(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "check", "--json", "urn:ex:a", "urn:ex-:a")
    assert status == 1
    first, second = (json.loads(line) for line in out.splitlines())
    assert first == {"input": "urn:ex:a", "valid": True}
    # RFC 8141 §2: the NID ends with a letter or digit; position 7 is the ':' after '-'.
    assert second["valid"] is False
    assert (second["position"], second["rule"]) == (7, "NID")
    assert "line" not in second


def test_check_mode_rfc2141_accepts_a_one_letter_nid(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 8141 §2 requires a NID of 2 or more characters; RFC 2141 §2 allowed 1.
    assert run(capsys, "check", "urn:a:b")[0] == 1
    assert run(capsys, "check", "--mode", "rfc2141", "urn:a:b") == (0, "ok  urn:a:b\n", "")


def test_check_mode_rfc2141_rejects_components(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 8141 §2.3.1 r-components do not exist in RFC 2141, where '?' is reserved (§2.3.2).
    assert run(capsys, "check", "urn:ex:a?+r")[0] == 0
    status, out, _ = run(capsys, "check", "--mode", "rfc2141", "urn:ex:a?+r")
    assert status == 1
    assert "[NSS, RFC 2141 §2.3.2]" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check"], "one of the arguments URN --file is required"),
        (["check", "urn:ex:a", "--file", "x.txt"], "not allowed with argument URN"),
        (["check", "--jobs", "2", "urn:ex:a"], "--jobs applies to --file only"),
        (["check", "--file", "x.txt", "--jobs", "0"], "1 or more: '0'"),
        (["check", "--mode", "rfc3986", "urn:ex:a"], "invalid choice: 'rfc3986'"),
        (["check", "--strict", "--mode", "rfc2141", "urn:ex:a"], "--strict applies to RFC 8141"),
        (["info"], "the following arguments are required: URN"),
        (["info", "--mode", "rfc2141", "urn:ex:a"], "unrecognized arguments: --mode"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert message in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--version")
    assert (status, out) == (0, f"urnkit {version('urnkit')}\n")


def test_check_help_says_blank_lines_are_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "check", "--help")
    assert status == 0
    assert "blank lines are skipped" in " ".join(out.split())
    assert "2  usage error, or FILE cannot be read" in out


# --- check --strict -----------------------------------------------------------------------------


def with_warning_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A namespace module for "isbn" that warns about every NSS with a hyphen."""

    def rules(urn: URN, *, strict: bool) -> list[Finding]:
        if "-" not in urn.nss:
            return []
        return [Finding("isbn.hyphen", "warning", "hyphens are ignored", 9, "ISBN template")]

    monkeypatch.setattr(namespaces, "_validators", {"isbn": rules})


def test_check_strict_reports_nid_policy_findings(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys, "check", "--strict", "urn:nbn:fi-fe201003181510", "urn:x-foo:bar", "urn:zz-a:b"
    )
    assert (status, err) == (1, "")
    assert out.splitlines() == [
        "ok  urn:nbn:fi-fe201003181510",
        "not a URN: urn:x-foo:bar",
        # RFC 8141 Appendix C: experimental namespaces are not valid URNs.
        '  error at position 4: the NID "x-foo" is reserved: "X-" marked the experimental '
        "namespaces of RFC 3406, which RFC 8141 removed; names in them are not valid URNs "
        "[nid.reserved, RFC 8141 §5.1, Appendix C]",
        "    urn:x-foo:bar",
        "        ^",
        "not a URN: urn:zz-a:b",
        # RFC 8141 §5.1 (3): two letters and a hyphen.
        '  error at position 4: the NID "zz-a" is reserved: NIDs beginning with two letters and a '
        "hyphen are reserved for national namespaces based on ISO 3166-1 alpha-2 country codes "
        "[nid.reserved, RFC 8141 §5.1]",
        "    urn:zz-a:b",
        "        ^",
    ]


def test_check_without_strict_is_syntax_only(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 8141 §1: an unregistered NID makes it no URN, but only --strict looks.
    assert run(capsys, "check", "urn:notregistered:x", "urn:x-foo:bar")[0] == 0
    status, out, _ = run(capsys, "check", "--strict", "urn:notregistered:x")
    assert status == 1
    assert "[nid.unregistered, RFC 8141 §1]" in out


def test_check_strict_syntax_error_shows_position_and_caret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "check", "--strict", "urn:example:a b")
    assert status == 1
    assert out.splitlines() == [
        "not a URN: urn:example:a b",
        "  error at position 13: U+0020 (a space) is not allowed in the NSS "
        "[syntax.invalid, RFC 8141 §2.2]",
        "    urn:example:a b",
        "                 ^",
    ]


def test_check_strict_prints_warnings_and_exits_0(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_warning_rule(monkeypatch)
    status, out, _ = run(capsys, "check", "--strict", "urn:isbn:0-451-45052-3")
    assert status == 0
    assert out.splitlines() == [
        "ok  urn:isbn:0-451-45052-3",
        "  warning at position 9: hyphens are ignored [isbn.hyphen, ISBN template]",
        "    urn:isbn:0-451-45052-3",
        "             ^",
    ]


def test_check_strict_json_has_the_findings(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "check", "--strict", "--json", "urn:isbn:0451450523", "urn:urn-0:x"
    )
    assert status == 1
    first, second = (json.loads(line) for line in out.splitlines())
    assert first == {"input": "urn:isbn:0451450523", "valid": True, "findings": []}
    assert second["valid"] is False
    # RFC 8141 §5.2: Number has no leading zero, and "urn-" begins only informal NIDs (§5.1).
    assert second["findings"] == [
        {
            "code": "nid.reserved",
            "severity": "error",
            "message": 'the NID "urn-0" is reserved: "urn-" begins only informal NIDs, "urn-" '
            "and a number without leading zeros",
            "position": 4,
            "section": "RFC 8141 §5.1, §5.2",
        }
    ]


def test_check_strict_file_reports_each_finding_and_counts_warnings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with_warning_rule(monkeypatch)
    path = tmp_path / "urns.txt"
    path.write_text(
        "urn:nbn:fi-fe201003181510\n"
        "urn:isbn:0-451-45052-3\n"  # a warning: valid
        "\n"
        "urn:unknown:a\n"  # RFC 8141 §1: unregistered, an error when strict
        "urn:ex:a b\n"  # RFC 8141 §2.2
    )
    status, out, err = run(capsys, "check", "--strict", "--file", str(path))
    assert status == 1
    assert out.splitlines() == [
        f"{path}:2:10: warning: hyphens are ignored [isbn.hyphen, ISBN template]",
        f'{path}:4:5: error: the NID "unknown" is not registered with IANA; without a registered '
        "NID, a string is not a URN [nid.unregistered, RFC 8141 §1]",
        f"{path}:5:9: error: U+0020 (a space) is not allowed in the NSS "
        "[syntax.invalid, RFC 8141 §2.2]",
    ]
    assert err == "4 checked, 2 valid, 2 invalid, 1 with warnings, 1 blank line skipped\n"


def test_check_strict_file_json_and_jobs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "urns.txt"
    path.write_text("urn:ietf:rfc:8141\nurn:x-y:z\nurn:ex:\n" * 1000)
    one = run(capsys, "check", "--strict", "--file", str(path), "--json")
    assert one == run(capsys, "check", "--strict", "--file", str(path), "--json", "--jobs", "2")
    status, out, err = one
    assert status == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [record["valid"] for record in records[:3]] == [True, False, False]
    assert [finding["code"] for record in records[:3] for finding in record["findings"]] == [
        "nid.reserved",
        "syntax.invalid",
    ]
    assert records[2]["line"] == 3
    assert err == "3000 checked, 1000 valid, 2000 invalid, 0 with warnings\n"


def test_check_strict_file_line_of_a_finding_without_position() -> None:
    finding = Finding("nbn.no-hyphen", "error", "no hyphen", None, "RFC 8458 §4.2")
    assert (
        check._file_finding("f", 3, finding)
        == "f:3: error: no hyphen [nbn.no-hyphen, RFC 8458 §4.2]"
    )


# --- info ---------------------------------------------------------------------------------------


def test_info_shows_the_registry_entry_and_no_findings(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "info", "URN:NBN:fi-fe201003181510")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "urn              URN:NBN:fi-fe201003181510",
        "nid              NBN",
        "nid_class        formal (RFC 8141 §5.1)",
        "namespace        formal, RFC 8458",
        "registered       (date not given)",
        "template         https://www.iana.org/assignments/urn-formal/nbn",
        "fields.country   fi",
        "fields.subnamespaces ()",
        "fields.prefix    fi",
        "fields.nbn_string fe201003181510",
        "findings         none",
    ]


def test_info_of_an_unregistered_nid_warns_and_strict_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "info", "urn:urn-99:x")
    assert status == 0
    lines = out.splitlines()
    # RFC 8141 §5.2: the form of an informal NID, not assigned by IANA: unregistered (§1).
    assert lines[2:6] == [
        "nid_class        unregistered (RFC 8141 §1)",
        "namespace        (not in IANA's registry)",
        "fields           (no namespace module for this NID)",
        "findings         1",
    ]
    assert lines[6].startswith('  warning at position 4: the NID "urn-99" has the form')
    status, out, _ = run(capsys, "info", "--strict", "urn:urn-99:x")
    assert status == 1
    assert '  error at position 4: the NID "urn-99"' in out


def test_info_of_a_reserved_nid_names_the_clause_section(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "info", "urn:xn--abc:d")
    assert status == 1
    # RFC 8141 §5.1 (3): "xn--" is reserved for DNS A-labels.
    assert "nid_class        reserved (RFC 8141 §5.1)\n" in out
    assert "[nid.reserved, RFC 8141 §5.1]" in out


def test_info_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        namespaces, "_fields_parsers", {"urn-7": lambda urn: {"parts": urn.nss.split(":")}}
    )
    status, out, _ = run(capsys, "info", "--json", "urn:urn-7:a:b")
    assert status == 0
    assert json.loads(out) == {
        "urn": "urn:urn-7:a:b",
        "nid": "urn-7",
        "nid_class": "informal",
        "nid_class_section": "RFC 8141 §5.2",
        "namespace": {
            "nid": "urn-7",
            "kind": "informal",
            "reference": "RFC 6050",
            "date": None,
            "template": None,
        },
        "fields": {"parts": ["a", "b"]},
        "valid": True,
        "findings": [],
    }
    status, out, _ = run(capsys, "info", "--json", "urn:x-a:b")
    assert status == 1
    record = json.loads(out)
    assert (record["nid_class"], record["nid_class_section"]) == (
        "reserved",
        "RFC 8141 §5.1, Appendix C",
    )
    assert (record["namespace"], record["valid"]) == (None, False)


def test_info_shows_namespace_fields(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(namespaces, "_fields_parsers", {"nbn": lambda urn: {"country": "fi"}})
    status, out, _ = run(capsys, "info", "urn:nbn:fi-fe201003181510")
    assert status == 0
    assert "fields.country   fi\n" in out


def test_info_of_a_text_that_is_not_a_urn_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "info", "urn:nbn:a b")
    assert (status, out) == (1, "")
    assert err.startswith("urnkit: not a URN at position 9: U+0020 (a space)")


# --- check --file -------------------------------------------------------------------------------


def test_check_file_reports_file_line_column_and_a_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "urns.txt"
    path.write_bytes(
        b"urn:ex:ok\r\n"  # CRLF: the line ending is stripped
        b"\n"  # blank: skipped, not counted
        b"urn:ex:a b\n"  # RFC 8141 §2.2: space at position 8, column 9
        b"urn:ex:trailing \n"  # only the line ending is stripped, so the space is an error
        b"urn:x:y"  # RFC 8141 §2: one-letter NID; last line without a line ending
    )
    status, out, err = run(capsys, "check", "--file", str(path))
    assert status == 1
    assert out.splitlines() == [
        f"{path}:3:9: U+0020 (a space) is not allowed in the NSS [NSS, RFC 8141 §2.2]",
        f"{path}:4:16: U+0020 (a space) is not allowed in the NSS [NSS, RFC 8141 §2.2]",
        f"{path}:5:6: the NID must have at least 2 characters (alphanum 0*30(ldh) alphanum) "
        "[NID, RFC 8141 §2]",
    ]
    assert err == "4 checked, 1 valid, 3 invalid, 1 blank line skipped\n"


def test_check_file_all_valid_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "urns.txt"
    path.write_text("urn:isbn:0451450523\nurn:ietf:rfc:8141\n")
    assert run(capsys, "check", "--file", str(path)) == (0, "", "2 checked, 2 valid, 0 invalid\n")


def test_check_file_names_a_byte_that_is_not_utf8(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("urn:ex:Müller\n".encode("latin-1"))
    status, out, _ = run(capsys, "check", "--file", str(path))
    assert status == 1
    assert (
        out == f"{path}:1:9: byte 0xFC (not UTF-8) is not allowed in the NSS [NSS, RFC 8141 §2.2]\n"
    )


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_check_json_of_a_line_that_is_not_utf8_is_json_any_reader_takes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, strict: list[str]
) -> None:
    # RFC 8259 §8.1-8.2: JSON is UTF-8, and a lone surrogate's escape (the byte as Python
    # reads it, \udcfc) is what strict readers refuse. The byte is U+FFFD, one for one.
    path = tmp_path / "latin1.txt"
    path.write_bytes("urn:ex:Müller\n\xff\xfeurn:x\n".encode("latin-1"))
    status, out, _ = run(capsys, "check", "--file", str(path), "--json", *strict)
    assert status == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [record["input"] for record in records] == ["urn:ex:M\ufffdller", "\ufffd\ufffdurn:x"]
    for record in records:
        text = json.dumps(record, ensure_ascii=False)
        assert text.encode("utf-8").decode("utf-8") == text  # no lone surrogate anywhere
        position = record.get("position", (record.get("findings") or [{}])[0].get("position"))
        assert record["input"][position] == "\ufffd"


def test_check_file_that_cannot_be_read_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "missing.txt"
    status, out, err = run(capsys, "check", "--file", str(missing))
    assert (status, out) == (2, "")
    assert err == f"urnkit: cannot read {missing}: No such file or directory\n"


def test_check_file_dash_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin_of(monkeypatch, b"urn:ex:a\nurn:ex:%zz\n")
    status, out, err = run(capsys, "check", "--file", "-")
    assert status == 1
    # RFC 3986 §2.1: '%' must be followed by two hex digits.
    assert out.startswith("<stdin>:2:9: '%' must be followed by two hex digits; found 'z'")
    assert err == "2 checked, 1 valid, 1 invalid\n"


def test_check_file_json_has_one_object_per_checked_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "urns.txt"
    path.write_text("urn:ex:a\n\nurn:ex:a?=\nurn:ex:ü\n", encoding="utf-8")
    status, out, _ = run(capsys, "check", "--file", str(path), "--json")
    assert status == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [record["line"] for record in records] == [1, 3, 4]
    assert records[0] == {"line": 1, "input": "urn:ex:a", "valid": True}
    # RFC 8141 §2.3.2: the q-component needs at least one character; position is 0-based.
    assert records[1] == {
        "line": 3,
        "input": "urn:ex:a?=",
        "valid": False,
        "position": 10,
        "reason": "the text ends where the q-component needs at least one character",
        "rule": "q-component",
        "section": "RFC 8141 §2.3.2",
    }
    assert (records[2]["input"], records[2]["position"]) == ("urn:ex:ü", 7)


def test_check_file_numbers_lines_across_blocks(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Blocks of 16 bytes: lines straddle blocks, and one line is longer than several blocks.
    monkeypatch.setattr(check, "CHUNK_BYTES", 16)
    long_bad = "urn:ex:" + "x" * 50 + " y"
    lines = ["urn:ex:a", "", "urn:ex:b b", long_bad, "urn:ex:c", "urn:x:d"]
    path = tmp_path / "urns.txt"
    path.write_text("\n".join(lines) + "\n")
    status, out, err = run(capsys, "check", "--file", str(path))
    assert status == 1
    assert [line.split(": ")[0] for line in out.splitlines()] == [
        f"{path}:3:9",
        f"{path}:4:58",
        f"{path}:6:6",
    ]
    assert err == "5 checked, 2 valid, 3 invalid, 1 blank line skipped\n"


def _big_file(path: Path, count: int) -> tuple[int, int, int]:
    """Write ``count`` lines of valid, invalid and blank lines; return checked, valid, blank."""
    checked = valid = blank = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        for i in range(count):
            if i % 1000 == 999:
                line, blank = "", blank + 1
            elif i % 7 == 3:
                line, checked = f"urn:example:item {i}", checked + 1  # RFC 8141 §2.2
            elif i % 11 == 5:
                line, checked = f"urn:nbn-:{i}", checked + 1  # RFC 8141 §2: NID ends in '-'
            else:
                line, checked, valid = f"urn:nbn:fi-fe{i:09d}", checked + 1, valid + 1
            out.write(line + ("\r\n" if i % 3 else "\n"))
    return checked, valid, blank


def test_check_big_file_with_two_jobs_gives_the_output_of_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "big.txt"
    checked, valid, blank = _big_file(path, 200_000)
    one = run(capsys, "check", "--file", str(path))
    two = run(capsys, "check", "--file", str(path), "--jobs", "2")
    assert one == two
    status, out, err = one
    assert status == 1
    invalid = checked - valid
    assert (
        err == f"{checked} checked, {valid} valid, {invalid} invalid, {blank} blank lines skipped\n"
    )
    reported = [int(line.split(":")[1]) for line in out.splitlines()]
    assert len(reported) == checked - valid
    assert reported == sorted(reported)
    # Line 199,994 (i = 199,993; 199,993 % 7 == 3) is well past the first 1 MiB block.
    assert f"{path}:199994:17: U+0020 (a space)" in out


def test_check_file_json_with_two_jobs_gives_the_output_of_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(check, "CHUNK_BYTES", 1 << 16)  # about 20 blocks, many in flight at once
    path = tmp_path / "big.txt"
    checked, valid, _ = _big_file(path, 60_000)
    one = run(capsys, "check", "--file", str(path), "--json")
    assert one == run(capsys, "check", "--file", str(path), "--json", "--jobs", "2")
    records = [json.loads(line) for line in one[1].splitlines()]
    assert len(records) == checked
    assert sum(record["valid"] for record in records) == valid
    assert [record["line"] for record in records[-2:]] == [59_998, 59_999]  # 60,000 is blank


def test_check_file_with_jobs_reads_ahead_only_a_few_blocks() -> None:
    # Bounded memory: the input is pulled as results are taken, not read ahead whole.
    pulled = 0

    def tasks() -> Iterator[check.ChunkTask]:
        nonlocal pulled
        for first_line in range(1, 101):
            pulled += 1
            yield check.ChunkTask(b"urn:ex:a\n", first_line, "f", "rfc8141", False)

    with closing(check._results(tasks(), 2)) as results:
        assert next(results).checked == 1
        assert pulled <= 4
        assert sum(result.checked for result in results) == 99
    assert pulled == 100


def test_check_file_shows_no_progress_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(check, "CHUNK_BYTES", 64)
    # A redraw is always due.
    monkeypatch.setattr(commandline, "monotonic", itertools.count().__next__)
    path = tmp_path / "urns.txt"
    path.write_text("urn:ex:a\n" * 100)
    assert run(capsys, "check", "--file", str(path)) == (
        0,
        "",
        "100 checked, 100 valid, 0 invalid\n",
    )


def test_check_file_progress_on_a_terminal_is_drawn_then_cleared(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(check, "CHUNK_BYTES", 64)
    monkeypatch.setattr(commandline, "monotonic", itertools.count().__next__)  # one second a call
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    path = tmp_path / "urns.txt"
    path.write_text("urn:ex:a\n" * 100)  # 900 bytes
    assert main(["check", "--file", str(path)]) == 0
    *frames, cleared, summary = terminal.getvalue().split("\r")
    assert frames[0] == ""
    assert frames[-1].startswith("[####################] 100%  900 B of 900 B  100 lines  ")
    assert all(frame.rstrip().endswith(" lines/s") for frame in frames[1:])
    assert cleared.strip() == ""
    assert len(cleared) >= len(frames[-1].rstrip())
    assert summary == "100 checked, 100 valid, 0 invalid\n"
    assert capsys.readouterr().out == ""


def test_check_file_progress_is_redrawn_at_most_ten_times_a_second(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(check, "CHUNK_BYTES", 9)  # one line a block: 100 blocks
    clock = (0.025 * tick for tick in itertools.count())  # 40 blocks a second: 2.5 s in all
    monkeypatch.setattr(commandline, "monotonic", clock.__next__)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    path = tmp_path / "urns.txt"
    path.write_text("urn:ex:a\n" * 100)
    assert main(["check", "--file", str(path)]) == 0
    draws = terminal.getvalue().count("lines/s")
    assert 12 <= draws <= 25  # 2.5 s at most ten a second


# --- parse, normalize, compare ------------------------------------------------------------------


def test_parse_shows_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "parse", "URN:Example:M%c3%bcller?+r?=q#")
    assert status == 0
    assert out.splitlines() == [
        "scheme           URN",
        "nid              Example",
        "nss              M%c3%bcller",
        "r_component      r",
        "q_component      q",
        "f_component      (empty)",  # RFC 8141 §2.3.3: '#' with nothing after it is present
        "assigned_name    URN:Example:M%c3%bcller",
        "equivalence_key  urn:example:M%C3%BCller",  # RFC 8141 §3
        "display          URN:Example:Müller?+r?=q#",  # RFC 8141 §4.4
    ]


def test_parse_json_has_null_for_absent_components(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "parse", "--json", "urn:ex:a%2f?=lang=fi")
    assert status == 0
    assert json.loads(out) == {
        "scheme": "urn",
        "nid": "ex",
        "nss": "a%2f",
        "r_component": None,
        "q_component": "lang=fi",
        "f_component": None,
        "assigned_name": "urn:ex:a%2f",
        "equivalence_key": "urn:ex:a%2F",
        "display": "urn:ex:a%2f?=lang=fi",
    }


def test_parse_invalid_explains_on_stderr_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "parse", "urn:ex")
    assert (status, out) == (1, "")
    assert err.splitlines() == [
        "urnkit: not a URN at position 6: the text ends inside the NID; ':' and an NSS must "
        "follow [NID, RFC 8141 §2]",
        "  urn:ex",
        "        ^",
    ]


def test_parse_mode_rfc2141(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 2141 has no components: '?' is reserved in its NSS (RFC 2141 §2.3.2).
    assert run(capsys, "parse", "--mode", "rfc2141", "urn:ex:a?=q")[0] == 1
    assert "nid              x" in run(capsys, "parse", "--mode", "rfc2141", "urn:x:y")[1]


def test_normalize_each_urn(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 8141 §3: scheme and NID to lower case, percent-encoding hex digits to upper case,
    # the rest of the NSS and the components kept.
    status, out, err = run(capsys, "normalize", "URN:EXAMPLE:Ab%2f?=q%3a", "urn:isbn:0451450523")
    assert (status, err) == (0, "")
    assert out == "urn:example:Ab%2F?=q%3A\nurn:isbn:0451450523\n"


def test_normalize_reports_invalid_ones_and_still_prints_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "normalize", "urn:X:y", "URN:EX:a")
    assert (status, out) == (1, "urn:ex:a\n")
    assert err.startswith("urnkit: not a URN at position 5:")
    assert run(capsys, "normalize", "--mode", "rfc2141", "urn:X:y") == (0, "urn:x:y\n", "")


def test_compare_equivalent_exits_0_and_shows_both_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # RFC 8141 §3: case of scheme, NID and %-escapes does not count, nor do components.
    status, out, _ = run(capsys, "compare", "URN:EXAMPLE:a%2c?+r", "urn:example:a%2C#f")
    assert status == 0
    assert out.splitlines() == [
        "equivalent (RFC 8141 §3)",
        "  A: URN:EXAMPLE:a%2c?+r",
        "     equivalence key: urn:example:a%2C",
        "  B: urn:example:a%2C#f",
        "     equivalence key: urn:example:a%2C",
    ]


def test_compare_not_equivalent_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    # RFC 8141 §3: the NSS is compared case-sensitively.
    status, out, _ = run(capsys, "compare", "urn:example:A", "urn:example:a")
    assert status == 1
    assert out.startswith("not equivalent (RFC 8141 §3)\n")


def test_compare_invalid_input_exits_2_and_names_each(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "compare", "urn:a:b", "urn:c")
    assert (status, out) == (2, "")
    assert err.count("urnkit: not a URN") == 2


def test_compare_mode_rfc2141(capsys: pytest.CaptureFixture[str]) -> None:
    # A one-letter NID is RFC 2141 only; RFC 2141 §5 makes "URN:" and the NID case-insensitive.
    status, out, _ = run(capsys, "compare", "--mode", "rfc2141", "URN:A:b", "urn:a:b")
    assert status == 0
    assert out.startswith("equivalent (RFC 2141 §5)\n")


# --- find, explain ------------------------------------------------------------------------------


def test_find_prints_line_and_column_of_each_urn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "text.txt"
    path.write_text(
        "Nothing here.\n"
        "See <URN:ISBN:0451450523>, or (urn:example:a/b).\n"
        "Ends a sentence: urn:ietf:rfc:8141.\n",
        encoding="utf-8",
    )
    status, out, _ = run(capsys, "find", str(path))
    assert status == 0
    assert out == (
        "2:6: URN:ISBN:0451450523\n"
        "2:32: urn:example:a/b\n"  # RFC 8141 §2: '/' is allowed in the NSS
        "3:18: urn:ietf:rfc:8141\n"
    )


def test_find_mode_rfc2141_stops_at_a_slash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # RFC 2141 §2.3.2: '/' is reserved, so the URN ends before it.
    stdin_of(monkeypatch, b"x urn:example:a/b\n")
    assert run(capsys, "find", "--mode", "rfc2141", "-") == (0, "1:3: urn:example:a\n", "")


def test_find_counts_columns_in_characters_and_lines_at_newlines_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin_of(monkeypatch, "ä\rö urn:ex:a\nüber urn:ex:b\n".encode())
    assert run(capsys, "find", "-") == (0, "1:5: urn:ex:a\n2:6: urn:ex:b\n", "")


def test_find_nothing_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "text.txt"
    path.write_text("urn: is a scheme; urn:x:y is not a URN under RFC 8141\n")
    assert run(capsys, "find", str(path)) == (1, "", "")


def test_explain_shows_both_grammars_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "explain", "urn:a:b", "urn:ex:a~b")
    assert status == 0
    first, second = out.split("\n\n")
    assert first.splitlines()[:3] == [
        "urn:a:b",
        "  RFC 8141: invalid at position 5: the NID must have at least 2 characters "
        "(alphanum 0*30(ldh) alphanum) [NID, RFC 8141 §2]",
        "  RFC 2141: valid",
    ]
    # RFC 8141 Appendix B.1: '~' joined the NSS repertoire.
    assert "  RFC 8141: valid\n" in second
    assert "RFC 8141 Appendix B.1" in second


def test_demo_file_has_valid_urns_and_one_of_each_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    demo = Path(__file__).resolve().parent.parent / "examples" / "demo-urns.txt"
    status, out, err = run(capsys, "check", "--json", "--file", str(demo))
    assert status == 1
    rules = sorted(
        record["rule"] for record in map(json.loads, out.splitlines()) if not record["valid"]
    )
    assert rules == ["NID", "NID", "NSS", "pct-encoded", "rq-components"]
    assert err.endswith(" valid, 5 invalid\n")


# --- a real process -----------------------------------------------------------------------------


def urnkit(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``python -m urnkit argv...`` with ``stdin``; stderr is a pipe, not a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "urnkit", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def test_process_exit_statuses() -> None:
    assert urnkit("check", "urn:ex:a").returncode == 0
    assert urnkit("check", "urn:ex:a b").returncode == 1
    assert urnkit("check").returncode == 2
    assert urnkit("compare", "urn:ex:a", "URN:EX:a").returncode == 0


def test_process_piped_stdin_with_jobs_and_no_progress() -> None:
    lines = [f"urn:ex:{i}" if i % 5 else f"urn:ex:{i}?" for i in range(1, 50_001)]
    done = urnkit("check", "--file", "-", "--jobs", "2", stdin="\n".join(lines))
    assert done.returncode == 1
    reported = done.stdout.splitlines()
    assert len(reported) == 10_000
    assert reported[0].startswith("<stdin>:5:10: ")  # RFC 8141 §2: a lone '?' at the end
    assert reported[-1].startswith("<stdin>:50000:14: ")
    assert done.stderr == "50000 checked, 40000 valid, 10000 invalid\n"  # no progress, no '\r'


def test_process_stops_quietly_when_the_reader_goes_away(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    # About 9 MB of output, written a block at a time: more than a pipe holds, in two writes.
    path.write_text("urn:ex:a b\n" * 100_000)
    with subprocess.Popen(
        [sys.executable, "-m", "urnkit", "check", "--file", str(path), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.readline().startswith(f"{path}:1:9: ".encode())
        process.stdout.close()  # like `| head -1`
        err = process.stderr.read()
    assert process.returncode == 141
    assert b"Traceback" not in err
