"""The rows of an import file, CSV or NDJSON, with their line numbers: what ``urnkit import``
and a registrant's upload (:mod:`~urnkit.resolver.services.uploads`) read.

>>> import io
>>> rows = csv_rows(io.BytesIO(b"urn,url\\nurn:nbn:fi:demo-1,https://example.org/1\\n"), print)
>>> [(line, row["urn"], row["locations"]) for line, row in rows]
[(2, 'urn:nbn:fi:demo-1', [{'url': 'https://example.org/1'}])]
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO

from urnkit.resolver.domain import (
    MAX_DEPTH,
    MAX_URN_LENGTH,
    STATUSES,
    InvalidURNError,
    Location,
    Principal,
    Record,
    ResolverError,
    Status,
    UnacceptableError,
    check_identifiers,
    check_record,
    check_registrable,
    check_resolvable,
    check_urn_length,
    parse_urn,
    prefix_of,
    printable,
)
from urnkit.resolver.services.access import Delegation, holder_of
from urnkit.resolver.services.locations import check_locations

CELL_LIMIT = 2**31 - 1
"""The csv module's field limit while a file is read: its default, 128 KiB, is less than an
exported record's locations cell can hold; a longer cell is refused with its row
(:data:`MAX_CELL`), not by the reader, which cannot go on after it."""

MAX_CELL = 2**21
"""The most characters a cell (CSV) or a line (NDJSON) holds: no field of a record needs more
(a hundred locations of the longest URLs and labels make some 530,000)."""

Reject = Callable[[int, Any, str], None]
"""Told of a row that cannot be imported: its line, the row (or the line's text), the reason."""

_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def format_of(name: str, chosen: str | None) -> str:
    """The format of a file: ``chosen`` if given, else by the suffix of its ``name``.

    >>> format_of("records.CSV", None), format_of("x.jsonl", None), format_of("x", "csv")
    ('csv', 'ndjson', 'csv')
    """
    if chosen:
        return chosen
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    raise ValueError(
        f"cannot tell the format of {name!r} from its name: say whether it is csv or ndjson"
    )


def nests_deeper(text: str, deepest: int) -> bool:
    """Whether the arrays and objects of the JSON ``text`` nest deeper than ``deepest``,
    found without parsing it (strings skipped), which would recurse once a level.

    >>> nests_deeper('{"a": [1, {"b": "[[["}]}', 3), nests_deeper("[" * 100_000, 32)
    (False, True)
    """
    if text.count("[") + text.count("{") <= deepest:  # the usual cell: no scan needed
        return False
    depth = 0
    for token in _NESTING.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > deepest:
                return True
        elif mark in "]}":
            depth -= 1
    return False


def _json_cell(text: str, where: str, empty: Any, deepest: int = MAX_DEPTH) -> Any:
    """``text`` read as JSON (``empty`` if blank); :class:`ValueError` naming ``where`` and the
    column of the error in ``text``, or its nesting when deeper than ``deepest`` (the
    acceptance rule's, :data:`~urnkit.resolver.domain.MAX_DEPTH`): refused before parsing,
    which would recurse once a level."""
    if not text.strip():
        return empty
    if nests_deeper(text, deepest):
        raise ValueError(f"{where} nests deeper than {MAX_DEPTH} arrays and objects")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not JSON: {error.msg} at character {error.pos + 1}") from None


def _decoded(raw: bytes, line: int) -> str:
    """The line ``raw`` as UTF-8 text; :class:`ValueError` naming the line and byte if it is not.

    >>> _decoded(b"caf\\xc3\\xa9", 1)
    'café'
    >>> _decoded(b"ok \\xff", 7)
    Traceback (most recent call last):
    ...
    ValueError: line 7: not UTF-8 at byte 4 (invalid start byte)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"line {line}: not UTF-8 at byte {error.start + 1} ({error.reason})"
        ) from None


class _Lines:
    """The lines of a binary file as text for the csv module: a line that is not UTF-8 is
    read with its bad bytes escaped (``surrogateescape``) and its reason kept by line, so
    that its row is refused, not the file."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.undecoded: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        # Lines end at LF, CRLF or a lone CR, as in a file read with universal newlines: the
        # csv module refuses a CR inside an unquoted cell, and a file from an old Mac ends its
        # lines with one.
        pieces = (piece for raw in self.stream for piece in raw.splitlines(keepends=True))
        for line, raw in enumerate(pieces, 1):
            try:
                yield _decoded(raw, line)
            except ValueError as error:
                self.undecoded[line] = str(error)
                yield raw.decode("utf-8", "surrogateescape")

    def reason(self, first: int, last: int) -> str | None:
        """Why the row on lines ``first`` to ``last`` is not text, None if it is."""
        if not self.undecoded:
            return None
        lines = range(first, last + 1)
        return next((self.undecoded[n] for n in lines if n in self.undecoded), None)


def _csv_row(header: Sequence[str], cells: Sequence[str], line: int) -> dict[str, Any]:
    """A CSV row as an import row (see :func:`csv_rows`); :class:`ValueError` naming the line
    when it has more or fewer cells than the header names, a cell longer than
    :data:`MAX_CELL`, or JSON that cannot be read."""
    if len(cells) != len(header):
        raise ValueError(f"line {line} has {len(cells)} cells; its header names {len(header)}")
    row = dict(zip(header, cells, strict=True))
    for name, cell in row.items():
        if len(cell) > MAX_CELL:
            raise ValueError(
                f"line {line}, column {name!r}: {len(cell):,} characters; at most "
                f"{MAX_CELL:,} are read"
            )
    locations = _json_cell(row.get("locations") or "", f"line {line}, column 'locations'", [])
    if row.get("url"):
        locations = [*locations, {"url": row["url"]}] if isinstance(locations, list) else locations
    return {
        "urn": row["urn"],
        "status": row.get("status") or None,
        "locations": locations,
        "metadata": _json_cell(row.get("metadata") or "", f"line {line}, column 'metadata'", {}),
        "successors": (row.get("successors") or "").split(),
        "note": row.get("note") or None,
    }


def csv_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV file with their line numbers: ``urn``, then optional ``status``,
    ``locations`` (a JSON array) or ``url`` (one location), ``metadata`` (a JSON object),
    ``successors`` (space-separated), ``note``. A row that cannot be read (not UTF-8, a cell
    missing or too many, too long, or not JSON) goes to ``reject``; a header without ``urn``
    stops the file (:class:`ValueError`)."""
    csv.field_size_limit(CELL_LIMIT)  # the module's own setting: no reader takes one
    lines = _Lines(stream)
    reader = csv.reader(lines)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise ValueError(f"line 1: not CSV ({error})") from None
    if lines.undecoded:
        raise ValueError(next(iter(lines.undecoded.values())))
    if header is None or "urn" not in header:
        raise ValueError("line 1: a CSV import needs a header row with a 'urn' column")
    first = reader.line_num + 1
    while True:
        broken: csv.Error | None = None
        try:
            cells = next(reader, None)
        except csv.Error as error:  # the row is refused; the reader goes on at the next line
            cells, broken = [], error
        line, last = first, reader.line_num
        first = last + 1
        if cells is None:
            return
        if not cells and broken is None:  # a blank line
            continue
        try:
            if broken is not None:
                raise ValueError(f"line {line}: not CSV ({broken})")
            undecoded = lines.reason(line, last)
            if undecoded is not None:
                raise ValueError(undecoded)
            found = _csv_row(header, cells, line)
        except ValueError as error:
            reject(line, _shown(header, cells), str(error))
            continue
        yield line, found


def _shown(header: Sequence[str], cells: Sequence[str]) -> dict[str, str]:
    """A CSV row as ``--rejects`` writes it: by column (cells past the header's by number),
    the bad bytes of a line that is not UTF-8 as ``\\xNN``, each cell cut to
    :data:`MAX_CELL`."""
    names = [*header, *(str(n) for n in range(len(header) + 1, len(cells) + 1))]
    return {
        name: cell[:MAX_CELL].encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        for name, cell in zip(names, cells, strict=False)
    }


def ndjson_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of an NDJSON file with their line numbers: one JSON object a line, as ``urnkit
    export`` writes them; a line that is not UTF-8, longer than :data:`MAX_CELL`, not JSON or
    not an object goes to ``reject``."""
    for line, raw in enumerate(stream, 1):
        try:
            text = _decoded(raw, line)
            if not text.strip():
                continue
            if len(text) > MAX_CELL:
                raise ValueError(
                    f"line {line}: {len(text):,} characters; at most {MAX_CELL:,} are read"
                )
            # The row's object is one level more than its metadata's.
            row = _json_cell(text, f"line {line}", None, MAX_DEPTH + 1)
            if not isinstance(row, dict):
                raise ValueError(f"line {line} is not a JSON object")
        except ValueError as error:
            shown = raw[:MAX_CELL].decode("utf-8", "backslashreplace").rstrip("\r\n")
            reject(line, shown, str(error))
            continue
        yield line, row


@dataclass(frozen=True, slots=True)
class Rules:
    """The one set of rules by which every way in (``urnkit import``, a registrant's upload,
    the API's batch) checks a row: who may register under which prefix
    (:func:`~urnkit.resolver.services.access.holder_of`: the longest delegated prefix's
    holder owns the record, whoever registers it; a registrant only its own), and what a row
    must hold. A principal's rows are new registrations, their URNs read strictly
    (:func:`~urnkit.resolver.domain.check_registrable`); an import's exist already in a
    legacy system, read leniently (only what cannot be resolved is refused), as are those of
    a principal's rows that are ``lenient`` (a harvest source's: they exist already in its
    repository). ``delegated``: every delegated prefix and its holder; ``principal``: who
    registers (None: the operator's import); ``owner``: the import's ``--owner``, which owns
    every record instead.

    >>> from datetime import UTC
    >>> rules, moment = Rules((("fi:lib", "Library"),)), datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = rules.record({"urn": "URN:NBN:fi:lib-1", "metadata": {"title": "T"}}, moment)
    >>> record.owner, record.key, record.metadata
    ('Library', 'urn:nbn:fi:lib-1', {'title': 'T'})
    >>> rules.record({"urn": "urn:nbn:se:kb-1"}, moment)
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: urn:nbn:se:kb-1: its prefix 'se:kb' is delegated to no organisation
    """  # noqa: E501

    delegated: tuple[Delegation, ...]
    principal: Principal | None = None
    owner: str | None = None
    lenient: bool = False

    def record(
        self,
        row: Mapping[str, Any],
        moment: datetime,
        holders: dict[str, str] | None = None,
        stored: Mapping[str, Record] | None = None,
    ) -> Record:
        """The record a row makes, created at ``moment``; its refusal (a
        :class:`~urnkit.resolver.domain.ResolverError` whose detail begins with the URN and
        whose ``field`` names the row's field) when it is unfit. ``holders`` keeps the owner of
        each prefix seen, for the next rows; ``stored`` holds the records registered already,
        by key: a row of one is no new registration (its URN checked leniently, its locations'
        URLs only where it adds them)."""
        text = str(row.get("urn", ""))
        field = "urn"
        try:
            check_urn_length(text)
            urn = parse_urn(text)
            current = (stored or {}).get(urn.equivalence_key())
            # Exist already (or read leniently, as an import reads): lenient.
            if self.principal is None or self.lenient or current is not None:
                check_resolvable(urn.assigned_name)
            else:  # new registrations: RFC 8458 read strictly, as the API reads it
                check_registrable(urn)
            prefix = prefix_of(urn)
            holder = (holders or {}).get(prefix)
            if holder is None:
                holder = holder_of(self.delegated, prefix, self.principal)
                if holders is not None:
                    holders[prefix] = holder
            owner = self.owner or holder
            field = "status"
            status: Status = row.get("status") or "active"
            if status not in STATUSES:
                raise UnacceptableError(f"unknown status {status!r} (one of {', '.join(STATUSES)})")
            field = "metadata"
            metadata = row.get("metadata") or {}
            if not isinstance(metadata, Mapping):
                raise UnacceptableError("'metadata' must be an object")
            check_record(row)
            check_identifiers(metadata)
            field = "locations"
            found = _locations(row, () if current is None else current.locations)
            field = "successors"
            successors = row.get("successors") or []
            if not isinstance(successors, list) or not all(isinstance(s, str) for s in successors):
                raise UnacceptableError("'successors' must be a list of URNs")
            field = "note"
            if not isinstance(row.get("note") or "", str):
                raise UnacceptableError("'note' must be text")
        except ResolverError as error:
            _in_field(error, text, field)
            raise
        return Record(
            urn=urn.assigned_name,
            key=urn.equivalence_key(),
            prefix=prefix,
            status=status,
            owner=owner,
            created=moment,
            updated=moment,
            locations=found,
            metadata=dict(metadata),
            successors=tuple(successors),
            note=row.get("note") or None,
        )


def _in_field(error: ResolverError, text: str, field: str) -> None:
    """``error``, its detail beginning with the URN ``text`` (as given), naming the row's
    ``field`` (``locations``, not a location's ``url``)."""
    error.extensions["field"] = field
    if isinstance(error, InvalidURNError):
        error.detail = f"{text!r} is not a URN: {error.extensions['explanation']}"
    elif not error.detail.startswith(printable(text)[:MAX_URN_LENGTH] + ": "):
        error.detail = f"{printable(text)[:MAX_URN_LENGTH]}: {error.detail}"


def _locations(row: Mapping[str, Any], stored: Sequence[Location]) -> tuple[Location, ...]:
    """A row's locations, checked as the API checks them (beside the record's ``stored``
    ones); a location restricted to a network is refused: its network must be checked against
    its holder's, which the API does."""
    given = row_locations(row)
    if any(loc.restricted_to is not None for loc in given):
        raise UnacceptableError(
            "a location restricted to a network is not imported (its network must be "
            "checked against its holder's): register it through the API"
        )
    return tuple(check_locations(given, stored))


def equivalence_keys(texts: Iterable[str]) -> list[str]:
    """The RFC 8141 §3 equivalence keys of those of ``texts`` that are URNs within the bounds
    (the others are refused row by row).

    >>> equivalence_keys(["URN:NBN:FI:lib-1", "not a URN"])
    ['urn:nbn:fi:lib-1']
    """
    keys = []
    for text in texts:
        try:
            check_urn_length(text)
            keys.append(parse_urn(text).equivalence_key())
        except (InvalidURNError, UnacceptableError):
            continue
    return keys


def row_locations(row: Mapping[str, Any]) -> list[Location]:
    """The locations of a row (its ``locations``, a list of objects), unchecked;
    :class:`UnacceptableError` when they are no such list.

    >>> row_locations({"locations": [{"url": "https://example.org/", "size": 1}]})
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: a location has Location.__init__() got an unexpected keyword argument 'size'
    """  # noqa: E501
    given = row.get("locations") or []
    if not isinstance(given, list) or not all(isinstance(loc, Mapping) for loc in given):
        raise UnacceptableError("'locations' must be a list of objects")
    try:
        return [Location(**loc) for loc in given]
    except TypeError as error:
        raise UnacceptableError(f"a location has {error}") from None


class FirstLines:
    """What a duplicate within one input is, the same for every way in: a row whose URN is
    equivalent (RFC 8141 §3) to that of an earlier row not refused. The first wins; each
    later one is refused naming the first's line (or, for a batch, record: ``unit``).

    >>> seen = FirstLines()
    >>> seen.check("urn:nbn:fi:lib-1", 2), seen.check("urn:nbn:fi:lib-2", 3)
    (None, None)
    >>> seen.check("urn:nbn:fi:lib-1", 9)
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: the URN of line 2 again (an equivalent URN, RFC 8141 §3): the first wins
    """  # noqa: E501

    __slots__ = ("lines", "unit")

    def __init__(self, unit: str = "line") -> None:
        self.lines: dict[int, int] = {}  # the line of each key's first row, by its digest
        self.unit = unit

    def check(self, key: str, line: int) -> None:
        """Note the row on ``line`` with the equivalence key ``key``; its refusal if an
        earlier row had the key."""
        self.check_digest(key_digest(key), line)

    def check_digest(self, digest: int, line: int) -> None:
        """:meth:`check` by the key's :func:`key_digest`."""
        first = self.lines.setdefault(digest, line)
        if first != line:
            raise UnacceptableError(
                f"the URN of {self.unit} {first} again (an equivalent URN, RFC 8141 §3): "
                "the first wins",
                field="urn",
                first=first,
            )


def key_digest(key: str) -> int:
    """A 128-bit digest of an equivalence key: what :class:`FirstLines` keeps of a row (a
    large import's keys would take ten times the memory).

    >>> key_digest("urn:nbn:fi:lib-1") == key_digest("urn:nbn:fi:lib-1")
    True
    """
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=16).digest())
