"""``urnkit check``: whether texts are URNs, and where and why those that are not fail.

Arguments are checked one by one; ``--file`` reads blocks of whole lines, never the whole
input, and checks them on ``--jobs`` processes. Checking is :func:`urnkit.diagnose`, or
:func:`urnkit.validate` with ``--strict``.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import signal
import stat
import sys
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from dataclasses import asdict
from multiprocessing.pool import AsyncResult
from typing import Any, NamedTuple

from urnkit.commandline import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Commands,
    Help,
    Progress,
    command,
    count,
    fail,
    open_input,
    unreadable,
)
from urnkit.findings import Finding, is_acceptable
from urnkit.namespaces import validate
from urnkit.syntax import Diagnosis, Mode, URNSyntaxError, caret_lines, diagnose, is_valid

CHUNK_BYTES = 1 << 20  # ``check --file`` hands input to workers in blocks of whole lines this big


_CHECK = Help(
    "Check that texts are URNs; say where and why those that are not fail.",
    "With URN arguments: prints 'ok  URN' for each valid one, and for each invalid one the\n"
    "reason, rule and RFC section, with a caret under the first character at fault.\n\n"
    "With --file: one URN per line, as UTF-8. Only the line ending (\\n or \\r\\n) is\n"
    "stripped; blank lines are skipped and not counted. Prints\n"
    "'FILE:LINE:COLUMN: reason [rule, section]' for each invalid line (LINE and COLUMN\n"
    "from 1), then 'N checked, V valid, I invalid' on stderr. Input of any size is read in\n"
    "blocks, never whole. When stderr is a terminal, it shows progress meanwhile.\n\n"
    "--json prints one JSON object per URN checked: line (with --file), input, valid, and\n"
    "when invalid: position (from 0, as in the library), reason, rule and section.\n\n"
    "--strict checks more than syntax: the NID must be registered with IANA and not\n"
    "reserved (RFC 8141 §1, §5), and the NSS must follow its namespace's rules, where\n"
    "urnkit knows them. Each finding is printed as 'severity at position P: message\n"
    "[code, section]' (with --file: 'FILE:LINE:COLUMN: severity: message [code,\n"
    "section]'); errors make a text invalid, warnings do not. With --json, each object\n"
    "has line (with --file), input, valid and findings: a list of code, severity,\n"
    "message, position (from 0, or null) and section.",
    (
        "0  every text is a URN (with --strict: no finding is an error)",
        "1  some text is not a URN",
        "2  usage error, or FILE cannot be read",
    ),
)


# A byte that is not UTF-8 (read as a lone surrogate, "surrogateescape") is U+FFFD in JSON,
# one character for one, so that positions still count in "input" and the reason names the
# byte: a lone surrogate's escape (\udcfc) is JSON that strict readers refuse (RFC 8259 §8.2).
_NOT_UTF8 = dict.fromkeys(range(0xDC80, 0xDD00), 0xFFFD)


def _record(text: str, diagnosis: Diagnosis | None, line: int | None = None) -> str:
    """One ``check --json`` line: the verdict on ``text``, with where and why when it is invalid.

    >>> _record("urn:ex:a", None, 3)
    '{"line": 3, "input": "urn:ex:a", "valid": true}'
    >>> _record(b"urn:ex:\\xfc".decode("utf-8", "surrogateescape"), None)[:34]
    '{"input": "urn:ex:\\\\ufffd", "valid"'
    """
    record: dict[str, Any] = {} if line is None else {"line": line}
    record.update(input=text.translate(_NOT_UTF8), valid=diagnosis is None)
    if diagnosis is not None:
        record.update(
            position=diagnosis.position,
            reason=diagnosis.reason,
            rule=diagnosis.rule,
            section=diagnosis.section,
        )
    return json.dumps(record)


def _strict_record(text: str, findings: list[Finding], line: int | None = None) -> str:
    """One ``check --strict --json`` line: the verdict on ``text`` and every finding.

    >>> _strict_record("urn:ex:a", [])
    '{"input": "urn:ex:a", "valid": true, "findings": []}'
    """
    record: dict[str, Any] = {} if line is None else {"line": line}
    record.update(
        input=text.translate(_NOT_UTF8),
        valid=is_acceptable(findings),
        findings=[
            asdict(finding) | {"message": finding.message.translate(_NOT_UTF8)}
            for finding in findings
        ],
    )
    return json.dumps(record)


def finding_lines(text: str, findings: list[Finding]) -> str:
    """The findings on ``text``, indented, each with a caret under its position if it has one.

    >>> print(finding_lines("urn:x-a:b", validate("urn:x-a:b")))  # doctest: +ELLIPSIS
      error at position 4: the NID "x-a" is reserved: ... [nid.reserved, RFC 8141 §5.1, Appendix C]
        urn:x-a:b
            ^
    """
    lines = []
    for finding in findings:
        lines.append(f"  {finding}")
        if finding.position is not None:
            lines.append("    " + caret_lines(text, finding.position).replace("\n", "\n    "))
    return "\n".join(lines)


class ChunkTask(NamedTuple):
    """A block of whole lines of a ``check --file`` input, and how to report on it."""

    block: bytes
    first_line: int
    name: str
    mode: Mode
    as_json: bool
    strict: bool = False  # urnkit.validate(strict=True) rather than syntax only


class ChunkResult(NamedTuple):
    """What checking one block found: counts and the output text, ready to write."""

    size: int
    lines: int
    checked: int
    valid: int
    output: str
    warned: int = 0  # with ``strict``: texts with warnings (valid or not)


def check_chunk(task: ChunkTask) -> ChunkResult:
    """Check each non-blank line of a block; runs in worker processes, so it returns plain data.

    >>> result = check_chunk(ChunkTask(b"urn:ex:a\\r\\n\\nurn:ex:a b\\n", 7, "f", "rfc8141", False))
    >>> result.lines, result.checked, result.valid
    (3, 2, 1)
    >>> print(result.output, end="")
    f:9:9: U+0020 (a space) is not allowed in the NSS [NSS, RFC 8141 §2.2]
    """
    lines = task.block.decode("utf-8", "surrogateescape").split("\n")
    if lines[-1] == "":  # the block ends with a line ending, not with a last line without one
        lines.pop()
    out = []
    checked = valid = warned = 0
    for number, line in enumerate(lines, task.first_line):
        text = line[:-1] if line.endswith("\r") else line
        if not text:
            continue
        checked += 1
        if task.strict:
            findings = validate(text, strict=True)
            valid += is_acceptable(findings)
            warned += any(finding.severity == "warning" for finding in findings)
            if task.as_json:
                out.append(_strict_record(text, findings, number))
            else:
                out += (_file_finding(task.name, number, finding) for finding in findings)
            continue
        diagnosis = None if is_valid(text, mode=task.mode) else diagnose(text, mode=task.mode)
        if diagnosis is None:
            valid += 1
        if task.as_json:
            out.append(_record(text, diagnosis, number))
        elif diagnosis is not None:
            out.append(
                f"{task.name}:{number}:{diagnosis.position + 1}: {diagnosis.reason} "
                f"[{diagnosis.rule}, {diagnosis.section}]"
            )
    output = "\n".join(out) + "\n" if out else ""
    return ChunkResult(len(task.block), len(lines), checked, valid, output, warned)


def _file_finding(name: str, line: int, finding: Finding) -> str:
    """A finding as ``FILE:LINE:COLUMN: severity: message [code, section]`` (no COLUMN when it
    has no position).

    >>> _file_finding("f", 2, validate("urn:fi-x:y")[0])  # doctest: +ELLIPSIS
    'f:2:5: error: the NID "fi-x" is reserved: ... [nid.reserved, RFC 8141 §5.1]'
    """
    where = f"{name}:{line}" + ("" if finding.position is None else f":{finding.position + 1}")
    return f"{where}: {finding.severity}: {finding.message} [{finding.code}, {finding.section}]"


def _blocks(stream: io.BufferedReader) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines, each with the number of its first line; never the whole input.

    ``read1`` returns what a pipe has ready, so piped input is checked as it arrives.

    >>> list(_blocks(io.BytesIO(b"a\\nb\\n\\nc")))
    [(b'a\\nb\\n\\n', 1), (b'c', 4)]
    """
    first_line, partial = 1, bytearray()  # ``partial``: a line begun but not yet ended
    while data := stream.read1(CHUNK_BYTES):
        cut = data.rfind(b"\n") + 1
        if cut:
            block = bytes(partial + data[:cut])
            partial[:] = data[cut:]
            yield block, first_line
            first_line += block.count(b"\n")
        else:
            partial += data
    if partial:
        yield bytes(partial), first_line


def _results(tasks: Iterable[ChunkTask], jobs: int) -> Generator[ChunkResult, None, None]:
    """``map(check_chunk, tasks)``, on ``jobs`` processes when more than one: in order, with at
    most ``2 * jobs`` blocks in flight (``Pool.imap`` would read the whole input ahead)."""
    if jobs == 1:
        yield from map(check_chunk, tasks)
        return
    # Workers ignore Ctrl-C: this process gets it, and leaving the block stops them.
    ignore_interrupt = (signal.SIGINT, signal.SIG_IGN)
    with multiprocessing.Pool(jobs, signal.signal, ignore_interrupt) as pool:
        pending: deque[AsyncResult[ChunkResult]] = deque()
        for task in tasks:
            pending.append(pool.apply_async(check_chunk, (task,)))
            if len(pending) == 2 * jobs:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _size(stream: io.BufferedReader) -> int | None:
    """The size of a regular file, None for a pipe or terminal."""
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _check_file(name: str, mode: Mode, as_json: bool, jobs: int, strict: bool) -> int:
    label = "<stdin>" if name == "-" else name
    try:
        opened = open_input(name)
    except OSError as error:
        return unreadable(name, error)
    checked = valid = lines = warned = 0
    with opened as stream:
        tasks = (
            ChunkTask(block, first, label, mode, as_json, strict)
            for block, first in _blocks(stream)
        )
        progress = Progress(sys.stderr, _size(stream)) if sys.stderr.isatty() else None
        shared_terminal = sys.stdout.isatty()
        try:
            with closing(_results(tasks, jobs)) as results:
                for result in results:
                    checked += result.checked
                    valid += result.valid
                    warned += result.warned
                    lines += result.lines
                    if result.output:
                        if progress is not None and shared_terminal:
                            progress.clear()
                        sys.stdout.write(result.output)
                        sys.stdout.flush()
                    if progress is not None:
                        progress.advance(result.size, result.lines)
        finally:
            if progress is not None:
                progress.clear()
    blank = lines - checked
    warnings = f", {warned} with warnings" if strict else ""
    skipped = f", {blank} blank line{'s' * (blank != 1)} skipped" if blank else ""
    sys.stderr.write(
        f"{checked} checked, {valid} valid, {checked - valid} invalid{warnings}{skipped}\n"
    )
    return EXIT_OK if valid == checked else EXIT_INVALID


def _check(args: argparse.Namespace) -> int:
    if args.strict and args.mode != "rfc8141":
        return fail("check: --strict applies to RFC 8141 (--mode rfc8141) only", EXIT_USAGE)
    if args.file is not None:
        return _check_file(args.file, args.mode, args.json, args.jobs, args.strict)
    if args.jobs != 1:
        return fail("check: --jobs applies to --file only", EXIT_USAGE)
    if args.strict:
        return _check_strict(args.urns, args.json)
    status = EXIT_OK
    for text in args.urns:
        diagnosis = diagnose(text, mode=args.mode)
        if diagnosis is not None:
            status = EXIT_INVALID
        if args.json:
            print(_record(text, diagnosis))
        elif diagnosis is None:
            print(f"ok  {text}")
        else:
            print(URNSyntaxError(text, diagnosis))
    return status


def _check_strict(texts: list[str], as_json: bool) -> int:
    status = EXIT_OK
    for text in texts:
        findings = validate(text, strict=True)
        acceptable = is_acceptable(findings)
        if not acceptable:
            status = EXIT_INVALID
        if as_json:
            print(_strict_record(text, findings))
            continue
        print(f"ok  {text}" if acceptable else f"not a URN: {text}")
        if findings:
            print(finding_lines(text, findings))
    return status


def add_commands(commands: Commands) -> None:
    """Add ``check``."""
    check = command(commands, "check", _check, _CHECK, mode=True)
    sources = check.add_mutually_exclusive_group(required=True)
    sources.add_argument("urns", nargs="*", default=[], metavar="URN", help="texts to check")
    sources.add_argument("--file", metavar="FILE", help="check each line of FILE ('-': stdin)")
    check.add_argument(
        "--jobs",
        type=count,
        default=1,
        metavar="N",
        help="with --file: check on N processes, output in input order (default: 1)",
    )
    check.add_argument("--json", action="store_true", help="print JSON lines")
    check.add_argument(
        "--strict",
        action="store_true",
        help="check NID registration and namespace rules too; unregistered NIDs are errors",
    )
