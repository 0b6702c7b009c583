"""What each change in a record's history changed, field by field (no I/O): the documents
history keeps (as the API shows a record) compared two at a time.

The fields compared: ``status``, each ``metadata`` key, each location (by its URL: added,
removed, or which attribute changed), the order of the locations kept, ``successors`` and
``note``. The rest (``created``, ``updated``, ``owner``, ``grants``) are not compared.

>>> before = {"status": "reserved", "metadata": {}, "locations": []}
>>> after = {"status": "active", "metadata": {"title": "One"},
...          "locations": [{"url": "https://example.org/1", "priority": 1}]}
>>> for difference in differences(before, after):
...     print(difference)
status changed: 'reserved' → 'active'
metadata 'title' added: 'One'
location https://example.org/1 added
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from urnkit.resolver.domain.records import HistoryEntry

Kind = Literal["added", "removed", "changed"]
Field = Literal["status", "metadata", "location", "order", "successors", "note"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One field-level difference between two states of a record. ``key`` is the metadata key
    or the location's URL (None for the other fields); ``attribute`` the location's attribute
    that changed (None when the location was added or removed: ``before``/``after`` are then
    the whole location). ``before`` is None when added, ``after`` None when removed; ``order``
    compares the URLs of the locations in both states, best first.

    >>> print(Difference("location", "changed", "https://x.example/", "priority", 1, 2))
    location https://x.example/ priority changed: 1 → 2
    """

    field: Field
    kind: Kind
    key: str | None = None
    attribute: str | None = None
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        where = " ".join(
            part
            for part in (
                self.field,
                None
                if self.key is None
                else (self.key if self.field == "location" else repr(self.key)),
                self.attribute,
            )
            if part is not None
        )
        if self.kind == "changed":
            return f"{where} changed: {self.before!r} → {self.after!r}"
        if self.field == "location":
            return f"{where} {self.kind}"
        return f"{where} {self.kind}: {self.after if self.kind == 'added' else self.before!r}"


@dataclass(frozen=True, slots=True)
class Change:
    """A change of a record's history: when, what (``action``), by whom, and what differs
    from the state before (all of it, for the first entry: compared with an empty record)."""

    at: datetime
    action: str
    actor: str
    differences: tuple[Difference, ...]


EMPTY: Mapping[str, Any] = {
    "status": None,
    "metadata": {},
    "locations": [],
    "successors": [],
    "note": None,
}
"""The state before a record's first history entry: nothing."""


def changes(entries: Sequence[HistoryEntry]) -> list[Change]:
    """Each history entry (oldest first, as ``RecordService.history`` gives them) with its
    differences from the one before.

    >>> from datetime import UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> entries = [HistoryEntry(t, "created", "A (token 1)", {"status": "active"}),
    ...            HistoryEntry(t, "deactivated", "A (token 1)",
    ...                         {"status": "deactivated", "note": "gone"})]
    >>> [(c.action, [str(d) for d in c.differences]) for c in changes(entries)]
    [('created', ["status added: 'active'"]), ('deactivated', ["status changed: 'active' → 'deactivated'", "note added: 'gone'"])]
    """  # noqa: E501
    found = []
    previous: Mapping[str, Any] = EMPTY
    for entry in entries:
        found.append(
            Change(entry.at, entry.action, entry.actor, tuple(differences(previous, entry.record)))
        )
        previous = entry.record
    return found


def differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Difference]:
    """What differs from ``before`` to ``after`` (record documents; a field missing is
    empty), field by field in a fixed order: status, metadata by key (sorted), locations by
    URL (removed, changed, added), their order, successors, note."""
    found = _scalar("status", before.get("status"), after.get("status"))
    old, new = before.get("metadata") or {}, after.get("metadata") or {}
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            found.append(Difference("metadata", "removed", key, before=old[key]))
        elif key not in old:
            found.append(Difference("metadata", "added", key, after=new[key]))
        elif not _same(old[key], new[key]):
            found.append(Difference("metadata", "changed", key, before=old[key], after=new[key]))
    found += _locations(before.get("locations") or [], after.get("locations") or [])
    found += _scalar("successors", before.get("successors") or [], after.get("successors") or [])
    found += _scalar("note", before.get("note"), after.get("note"))
    return found


def _same(one: Any, other: Any) -> bool:
    """Whether two JSON values are equal, ``True`` unequal to ``1`` (JSON tells them apart)."""
    if isinstance(one, bool) or isinstance(other, bool):
        return type(one) is type(other) and one == other
    if isinstance(one, Mapping) and isinstance(other, Mapping):
        return one.keys() == other.keys() and all(_same(one[k], other[k]) for k in one)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(map(_same, one, other))
    if isinstance(one, int | float) and isinstance(other, int | float):
        return one == other
    return type(one) is type(other) and one == other


def _scalar(name: Field, before: Any, after: Any) -> list[Difference]:
    """The difference of a field compared whole: added from empty, removed to empty."""
    empty: tuple[Any, ...] = (None, [])
    if _same(before, after):
        return []
    if before in empty:
        return [Difference(name, "added", after=after)]
    if after in empty:
        return [Difference(name, "removed", before=before)]
    return [Difference(name, "changed", before=before, after=after)]


def _locations(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[Difference]:
    """Locations removed, changed (attribute by attribute) and added, by URL; then the order
    of the URLs in both, if it changed."""
    old = {loc["url"]: loc for loc in before}
    new = {loc["url"]: loc for loc in after}
    found = [
        Difference("location", "removed", url, before=loc)
        for url, loc in old.items()
        if url not in new
    ]
    for url, loc in new.items():
        if url not in old:
            continue
        for attribute in sorted((old[url].keys() | loc.keys()) - {"url"}):
            was, now = old[url].get(attribute), loc.get(attribute)
            if not _same(was, now):
                found.append(Difference("location", "changed", url, attribute, was, now))
    found += [
        Difference("location", "added", url, after=loc)
        for url, loc in new.items()
        if url not in old
    ]
    kept_before = [url for url in old if url in new]
    kept_after = [url for url in new if url in old]
    if kept_before != kept_after:
        found.append(Difference("order", "changed", before=kept_before, after=kept_after))
    return found
