"""The ``urnkit`` command: a thin adapter from the command line to the library.

Each command is one library call: ``check`` is :func:`urnkit.diagnose` (:func:`urnkit.validate`
with ``--strict``), ``parse`` and ``normalize`` are :meth:`urnkit.URN.parse` and
:meth:`~urnkit.URN.normalize`, ``compare`` is URN-equivalence (RFC 8141 §3), ``find`` is
:func:`urnkit.find_urns`, ``explain`` is :func:`urnkit.explain`, ``info`` gathers what
:mod:`urnkit.namespaces` knows about a URN, and ``template check`` and ``template new`` are
:func:`urnkit.registration.check` and :func:`urnkit.registration.blank`. This module only reads
input, formats output and picks exit statuses.

>>> main(["normalize", "URN:EXAMPLE:a%2c"])
urn:example:a%2C
0
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
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import AbstractContextManager, closing, nullcontext
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from multiprocessing.pool import AsyncResult
from time import monotonic
from typing import IO, Any, NamedTuple, cast

from urnkit import registration
from urnkit.explain import explain
from urnkit.find import find_urns
from urnkit.findings import Finding, is_acceptable
from urnkit.namespaces import classify_nid, lookup, namespace_fields, reservation, validate
from urnkit.syntax import MODES, Diagnosis, Mode, URNSyntaxError, caret_lines, diagnose, is_valid
from urnkit.urn import URN

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141  # 128 + SIGINT, 128 + SIGPIPE, as shells report
CHUNK_BYTES = 1 << 20  # ``check --file`` hands input to workers in blocks of whole lines this big
PROGRESS_INTERVAL = 0.1  # seconds between progress redraws: at most ten a second

_EQUIVALENCE_SECTION: dict[Mode, str] = {"rfc8141": "RFC 8141 §3", "rfc2141": "RFC 2141 §5"}


def _record(text: str, diagnosis: Diagnosis | None, line: int | None = None) -> str:
    """One ``check --json`` line: the verdict on ``text``, with where and why when it is invalid.

    >>> _record("urn:ex:a", None, 3)
    '{"line": 3, "input": "urn:ex:a", "valid": true}'
    """
    record: dict[str, Any] = {} if line is None else {"line": line}
    record.update(input=text, valid=diagnosis is None)
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
        input=text,
        valid=is_acceptable(findings),
        findings=[asdict(finding) for finding in findings],
    )
    return json.dumps(record)


def _finding_lines(text: str, findings: list[Finding]) -> str:
    """The findings on ``text``, indented, each with a caret under its position if it has one.

    >>> print(_finding_lines("urn:x-a:b", validate("urn:x-a:b")))  # doctest: +ELLIPSIS
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


def _amount(size: int) -> str:
    """A byte count for humans.

    >>> _amount(512), _amount(1536), _amount(5 * 2**30)
    ('512 B', '1.5 KiB', '5.0 GiB')
    """
    if size < 1024:
        return f"{size} B"
    scaled, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if scaled < 1024:
            break
        scaled, unit = scaled / 1024, bigger
    return f"{scaled:.1f} {unit}"


class Progress:
    """A one-line progress report on a terminal, redrawn at most every ``PROGRESS_INTERVAL``."""

    def __init__(self, stream: IO[str], total: int | None) -> None:
        self.stream = stream
        self.total = total
        self.done = self.lines = self.width = 0
        self.start = self.drawn = monotonic()

    def advance(self, size: int, lines: int) -> None:
        """Count ``size`` more bytes and ``lines`` more lines; redraw if it is time."""
        self.done += size
        self.lines += lines
        now = monotonic()
        if now - self.drawn >= PROGRESS_INTERVAL:
            self.drawn = now
            rate = self.lines / max(now - self.start, 1e-9)
            read = _amount(self.done)
            if self.total:
                part = min(self.done / self.total, 1.0)
                bar = "#" * round(20 * part)
                read = f"[{bar:<20}] {part:4.0%}  {read} of {_amount(self.total)}"
            self._show(f"{read}  {self.lines:,} lines  {rate:,.0f} lines/s")

    def clear(self) -> None:
        """Erase the report, if one is shown."""
        self._show("")

    def _show(self, text: str) -> None:
        if text or self.width:
            self.stream.write("\r" + text.ljust(self.width) + ("\r" if not text else ""))
            self.stream.flush()
            self.width = len(text)


def _open(name: str) -> AbstractContextManager[io.BufferedReader]:
    """The bytes of the file ``name``, closed on leaving ``with``; stdin for ``-``, left open."""
    if name == "-":
        return nullcontext(cast(io.BufferedReader, sys.stdin.buffer))
    return open(name, "rb")


def _check_file(name: str, mode: Mode, as_json: bool, jobs: int, strict: bool) -> int:
    label = "<stdin>" if name == "-" else name
    try:
        opened = _open(name)
    except OSError as error:
        return _fail(f"cannot read {name}: {error.strerror}", EXIT_USAGE)
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
        return _fail("check: --strict applies to RFC 8141 (--mode rfc8141) only", EXIT_USAGE)
    if args.file is not None:
        return _check_file(args.file, args.mode, args.json, args.jobs, args.strict)
    if args.jobs != 1:
        return _fail("check: --jobs applies to --file only", EXIT_USAGE)
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
            print(_finding_lines(text, findings))
    return status


def _fail(message: str, status: int) -> int:
    print(f"urnkit: {message}", file=sys.stderr)
    return status


def _parse(args: argparse.Namespace) -> int:
    try:
        urn = URN.parse(args.urn, mode=args.mode)
    except URNSyntaxError as error:
        return _fail(str(error), EXIT_INVALID)
    fields = {
        "scheme": urn.scheme,
        "nid": urn.nid,
        "nss": urn.nss,
        "r_component": urn.r_component,
        "q_component": urn.q_component,
        "f_component": urn.f_component,
        "assigned_name": urn.assigned_name,
        "equivalence_key": urn.equivalence_key(),
        "display": urn.display(),
    }
    if args.json:
        print(json.dumps(fields))
    else:
        for key, value in fields.items():
            shown = "(absent)" if value is None else value or "(empty)"
            print(f"{key:<16} {shown}")
    return EXIT_OK


def _normalize(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for text in args.urns:
        try:
            print(URN.parse(text, mode=args.mode).normalize())
        except URNSyntaxError as error:
            status = _fail(str(error), EXIT_INVALID)
    return status


def _compare(args: argparse.Namespace) -> int:
    urns, status = [], EXIT_OK
    for text in (args.a, args.b):
        try:
            urns.append(URN.parse(text, mode=args.mode))
        except URNSyntaxError as error:
            status = _fail(str(error), EXIT_USAGE)
    if status != EXIT_OK:
        return status
    first, second = urns
    verdict = "equivalent" if first == second else "not equivalent"
    print(f"{verdict} ({_EQUIVALENCE_SECTION[args.mode]})")
    for letter, urn in zip("AB", urns, strict=True):
        print(f"  {letter}: {urn}\n     equivalence key: {urn.equivalence_key()}")
    return EXIT_OK if first == second else EXIT_INVALID


def _find(args: argparse.Namespace) -> int:
    try:
        opened = _open(args.file)
    except OSError as error:
        return _fail(f"cannot read {args.file}: {error.strerror}", EXIT_USAGE)
    found = False
    with opened as stream:
        # Lines end at "\n" only, as in ``check --file``; undecodable bytes never join a URN.
        text = io.TextIOWrapper(stream, "utf-8", "surrogateescape", newline="\n")
        for number, line in enumerate(text, 1):
            for match in find_urns(line, mode=args.mode):
                sys.stdout.write(f"{number}:{match.start + 1}: {match.text}\n")
                found = True
        text.detach()  # leave the stream, stdin included, to its owner
    return EXIT_OK if found else EXIT_INVALID


def _explain(args: argparse.Namespace) -> int:
    print("\n\n".join(str(explain(text)) for text in args.urns))
    return EXIT_OK


def _info(args: argparse.Namespace) -> int:
    try:
        urn = URN.parse(args.urn)
    except URNSyntaxError as error:
        return _fail(str(error), EXIT_INVALID)
    nid_class = classify_nid(urn.nid)
    reserved = reservation(urn.nid)
    namespace = lookup(urn.nid)
    fields = namespace_fields(urn)
    findings = validate(args.urn, strict=args.strict)
    info: dict[str, Any] = {
        "urn": args.urn,
        "nid": urn.nid,
        "nid_class": nid_class.value,
        "nid_class_section": nid_class.section if reserved is None else reserved.section,
        "namespace": None
        if namespace is None
        else {
            "nid": namespace.nid,
            "kind": namespace.kind,
            "reference": namespace.reference,
            "date": None if namespace.date is None else namespace.date.isoformat(),
            "template": namespace.template,
        },
        "fields": None if fields is None else dict(fields),
        "valid": is_acceptable(findings),
        "findings": [asdict(finding) for finding in findings],
    }
    if args.json:
        print(json.dumps(info, default=str))
    else:
        print(f"{'urn':<16} {urn}")
        print(f"{'nid':<16} {urn.nid}")
        print(f"{'nid_class':<16} {info['nid_class']} ({info['nid_class_section']})")
        if namespace is None:
            print(f"{'namespace':<16} (not in IANA's registry)")
        else:
            print(f"{'namespace':<16} {namespace.kind}, {namespace.reference}")
            print(f"{'registered':<16} {info['namespace']['date'] or '(date not given)'}")
            print(f"{'template':<16} {namespace.template or '(none linked)'}")
        if fields is None:
            print(f"{'fields':<16} (no namespace module for this NID)")
        for key, value in (fields or {}).items():
            print(f"{'fields.' + key:<16} {value}")
        print(f"{'findings':<16} {len(findings) or 'none'}")
        if findings:
            print(_finding_lines(args.urn, findings))
    return EXIT_OK if info["valid"] else EXIT_INVALID


def _template_check(args: argparse.Namespace) -> int:
    label = "<stdin>" if args.file == "-" else args.file
    try:
        with _open(args.file) as stream:
            text = stream.read().decode("utf-8", "surrogateescape")
    except OSError as error:
        return _fail(f"cannot read {args.file}: {error.strerror}", EXIT_USAGE)
    findings = registration.check(text)
    for finding in findings:
        line = 1 if finding.position is None else text.count("\n", 0, finding.position) + 1
        print(
            f"{label}:{line}: {finding.severity}: {finding.message} "
            f"[{finding.code}, {finding.section}]"
        )
    return EXIT_OK if is_acceptable(findings) else EXIT_INVALID


def _template_new(args: argparse.Namespace) -> int:
    sys.stdout.write(registration.blank(args.kind))
    return EXIT_OK


def _jobs(text: str) -> int:
    """A count given on the command line: a whole number, 1 or more.

    >>> _jobs("4")
    4
    """
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number, 1 or more: {text!r}")
    return jobs


def _version() -> str:
    try:
        return version("urnkit")
    except PackageNotFoundError:
        return "(not installed)"


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], int],
    summary: str,
    details: str,
    statuses: tuple[str, ...],
    *,
    mode: bool = True,
    group: str = "",
) -> argparse.ArgumentParser:
    """Add the command ``run`` names (``_check`` -> ``check``), its help and exit statuses.

    In a ``group`` of commands, the group's name leaves the name: ``_template_new`` -> ``new``;
    other underscores become hyphens: ``_admin_create_org`` -> ``create-org``.
    """
    parser = commands.add_parser(
        run.__name__.lstrip("_").removeprefix(f"{group}_").replace("_", "-"),
        help=summary,
        description=f"{summary}\n\n{details}",
        epilog="exit status:\n" + "\n".join(f"  {status}" for status in statuses),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=run)
    if mode:
        parser.add_argument(
            "--mode",
            choices=MODES,
            default="rfc8141",
            help="the grammar: rfc8141 (default), or the legacy rfc2141 (no components)",
        )
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``urnkit`` command, with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="urnkit",
        description="Uniform Resource Names to the letter of RFC 8141 (and RFC 2141).",
        epilog="exit status:\n"
        "  0  success\n"
        "  1  a negative answer: some text is not a URN, the URNs are not equivalent, or no\n"
        "     URN was found\n"
        "  2  usage error, a file that cannot be read, or (compare) a text that is not a URN\n\n"
        "Run 'urnkit COMMAND --help' for a command's input, output and exit status.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"urnkit {_version()}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    check = _command(
        commands,
        _check,
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
    sources = check.add_mutually_exclusive_group(required=True)
    sources.add_argument("urns", nargs="*", default=[], metavar="URN", help="texts to check")
    sources.add_argument("--file", metavar="FILE", help="check each line of FILE ('-': stdin)")
    check.add_argument(
        "--jobs",
        type=_jobs,
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

    parse = _command(
        commands,
        _parse,
        "Show the parts of a URN.",
        "Prints scheme, nid, nss, r_component, q_component, f_component, assigned_name,\n"
        "equivalence_key (RFC 8141 §3) and display (RFC 8141 §4.4).",
        ("0  the text is a URN", "1  it is not (explained on stderr)", "2  usage error"),
    )
    parse.add_argument("urn", metavar="URN")
    parse.add_argument("--json", action="store_true", help="print one JSON object (null: absent)")

    normalize = _command(
        commands,
        _normalize,
        "Print each URN normalized (RFC 8141 §3).",
        "Lower-case scheme and NID, upper-case hex digits in percent-encodings; nothing is\n"
        "decoded, components are kept.",
        (
            "0  every text is a URN",
            "1  some text is not (explained on stderr)",
            "2  usage error",
        ),
    )
    normalize.add_argument("urns", nargs="+", metavar="URN")

    compare = _command(
        commands,
        _compare,
        "Say whether two URNs are URN-equivalent (RFC 8141 §3).",
        "Prints the verdict and each URN's equivalence key: its assigned-name with scheme and\n"
        "NID in lower case and percent-encodings in upper case. Components do not count.",
        (
            "0  A and B are equivalent",
            "1  they are not",
            "2  usage error, or A or B is not a URN (explained on stderr)",
        ),
    )
    compare.add_argument("a", metavar="A")
    compare.add_argument("b", metavar="B")

    find = _command(
        commands,
        _find,
        "Print every URN in a text file.",
        "Prints 'LINE:COLUMN: URN' (both from 1) for each URN found, line by line, as UTF-8;\n"
        "a URN does not span lines. Trailing punctuation and enclosing marks are left out.",
        ("0  some URN was found", "1  none was found", "2  usage error, or FILE cannot be read"),
    )
    find.add_argument("file", metavar="FILE", help="the text to search ('-': stdin)")

    explain_ = _command(
        commands,
        _explain,
        "Judge texts under both RFC 8141 and RFC 2141, and say why the verdicts differ.",
        "Prints each text, each grammar's verdict, and the RFC 8141 Appendix B changes behind\n"
        "a difference.",
        ("0  whatever the verdicts", "2  usage error"),
        mode=False,
    )
    explain_.add_argument("urns", nargs="+", metavar="URN")

    info = _command(
        commands,
        _info,
        "Show what urnkit knows about a URN: its namespace, NID class, fields and findings.",
        "Prints the NID, its class (formal, informal, unregistered or reserved, with the RFC\n"
        "section), the namespace's entry in IANA's registry, the fields its namespace module\n"
        "reads from the NSS (if urnkit has one for the NID) and every finding of\n"
        "urnkit.validate: lenient unless --strict, where an unregistered NID is an error.",
        (
            "0  no finding is an error",
            "1  some finding is an error, or the text is not a URN (explained on stderr)",
            "2  usage error",
        ),
        mode=False,
    )
    info.add_argument("urn", metavar="URN")
    info.add_argument("--strict", action="store_true", help="the strict view (see check)")
    info.add_argument("--json", action="store_true", help="print one JSON object (null: absent)")

    template = commands.add_parser(
        "template",
        help="Check or start a registration template (RFC 8141 Appendix A, RFC 4395 §5.4).",
        description="Registration templates: a URN namespace's (RFC 8141 Appendix A) or a URI\n"
        "scheme's (RFC 4395 §5.4), as plain text: 'Label: value' fields, values indented below.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    templates = template.add_subparsers(title="commands", metavar="COMMAND", required=True)
    template_check = _command(
        templates,
        _template_check,
        "Check a registration template: every field, and the rules the RFCs set for each.",
        "Which template FILE is comes from its first field label. Prints nothing when all is\n"
        "well, else 'FILE:LINE: severity: message [code, section]' for each finding, LINE\n"
        "from 1 (a missing field is reported where it belongs). Errors break a rule of the\n"
        "RFC; warnings point at what RFC 8141 §6.4 asks a section to cover and seems absent.",
        (
            "0  no finding is an error",
            "1  some finding is an error",
            "2  usage error, or FILE cannot be read",
        ),
        mode=False,
        group="template",
    )
    template_check.add_argument("file", metavar="FILE", help="the template ('-': stdin)")
    template_new = _command(
        templates,
        _template_new,
        "Print a blank registration template to fill in.",
        "Every field of the template, in order, with an empty value.",
        ("0  printed", "2  usage error"),
        mode=False,
        group="template",
    )
    template_new.add_argument(
        "--kind",
        choices=registration.KINDS,
        required=True,
        help="urn-namespace (RFC 8141 Appendix A) or uri-scheme (RFC 4395 §5.4)",
    )

    from urnkit.resolver.cli import add_commands  # the resolver's commands need urnkit.cli

    add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``urnkit`` command with ``argv`` (default: ``sys.argv[1:]``); return its status.

    >>> main(["compare", "URN:EXAMPLE:a", "urn:example:a?=q"])
    equivalent (RFC 8141 §3)
      A: URN:EXAMPLE:a
         equivalence key: urn:example:a
      B: urn:example:a?=q
         equivalence key: urn:example:a
    0
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error argparse has reported
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # echoed input may hold undecodable bytes
            stream.reconfigure(errors="backslashreplace")
    try:
        return cast(int, args.run(args))
    except BrokenPipeError:
        # The reader left (``urnkit find big.txt | head``): stop quietly, as Unix filters do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
