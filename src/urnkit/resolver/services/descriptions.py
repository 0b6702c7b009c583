"""The reads behind RFC 2483's requests (RFC 2483 §4): a registered URN described in one
snapshot (:class:`~urnkit.resolver.domain.descriptions.Description`), its current name (I2N)
and the URNs related to it (I2Ns). What answers them is in
:mod:`~urnkit.resolver.representations.rfc2483`.
"""

from __future__ import annotations

from dataclasses import replace

from urnkit.resolver.domain import (
    PUBLIC,
    InvalidURNError,
    NotFoundError,
    Reader,
    parse_urn,
    shown,
    shown_document,
    withheld,
)
from urnkit.resolver.domain.descriptions import Description, LocationState
from urnkit.resolver.representations.rfc2483 import MAX_HOPS
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.records import RecordService


class Rfc2483Requests:
    """The answers to RFC 2483's requests over a :class:`RecordService`'s records.

    >>> from urnkit.resolver.domain import Location
    >>> from urnkit.resolver.services import Services
    >>> from urnkit.resolver.store import Store
    >>> services = Services(Store("sqlite://"))
    >>> services.store.upgrade()
    >>> admin = services.admin
    >>> admin.create_organisation("Library"), admin.delegate("Library", "fi:lib")
    ('Library', 'fi:lib')
    >>> principal = services.access.authenticate(admin.create_token("Library", "admin"))
    >>> location = Location("https://example.org/1")
    >>> _ = services.records.put(principal, "urn:nbn:fi:lib-1", [location], {})
    >>> requests = Rfc2483Requests(services.records)
    >>> [location.url for location in requests.describe("URN:NBN:FI:LIB-1").usable]
    ['https://example.org/1']
    >>> requests.current("urn:nbn:fi:lib-1"), requests.related("urn:nbn:fi:lib-1")
    ('urn:nbn:fi:lib-1', [('urn:nbn:fi:lib-1', 'itself')])
    """

    def __init__(self, records: RecordService) -> None:
        self.records = records
        self.store = records.store

    def describe(self, text: str, reader: Reader = PUBLIC) -> Description:
        """What :class:`Description` holds of the URN in ``text`` for ``reader`` (the locations
        it may see, in the record and in its history), read in one snapshot;
        :class:`~urnkit.resolver.domain.NotFoundError` when nothing is registered under it."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record = tx.records.get(key)
            record_id = tx.records.id(key)
            if record is None or record_id is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            states = tx.links.states(location.url for location in record.locations)
            predecessors = tx.successions.predecessors(key)
            history = [
                replace(entry, record=shown_document(entry.record, reader))
                for entry in tx.records.history(record_id, record_json(record))
            ]
            changes = [record.updated, tx.successions.predecessors_updated(key)]
        whole = record
        hidden, record = withheld(whole, reader), shown(whole, reader)
        locations = tuple(
            LocationState(loc)  # never checked
            if (state := states.get(loc.url)) is None or state.checked is None
            else LocationState(loc, state.status, state.since)
            for loc in record.locations
        )
        changes += [entry.since for entry in locations] + [entry.at for entry in history]
        modified = max(moment for moment in changes if moment is not None)
        restricted = any(loc.restricted_to is not None for loc in whole.locations)
        return Description(
            record, locations, tuple(predecessors), tuple(history), modified, hidden, restricted
        )

    def current(self, text: str) -> str:
        """The current name of a URN (RFC 2483 §4.7, I2N): itself unless deactivated, else its
        first successor's current name, followed up to :data:`MAX_HOPS` times and never round
        a cycle. A successor not registered here is current as far as this resolver knows.

        Raises :class:`~urnkit.resolver.domain.NotFoundError` for an unknown URN.
        """
        record = self.records.get(text)
        seen = {record.key}
        for _ in range(MAX_HOPS):
            if record.status != "deactivated" or not record.successors:
                break
            successor = record.successors[0]
            try:
                following = self.records.get(successor)
            except (NotFoundError, InvalidURNError):
                return successor
            if following.key in seen:  # a cycle: the last URN before it
                break
            seen.add(following.key)
            record = following
        return record.urn

    def related(self, text: str) -> list[tuple[str, str]]:
        """Every URN related to a URN (RFC 2483 §4.8, I2Ns), as (URN, relation): itself, then
        its successors and theirs, then its predecessors and theirs, at most :data:`MAX_HOPS`
        URNs in all, each once."""
        record = self.records.get(text)
        found: list[tuple[str, str]] = [(record.urn, "itself")]
        seen = {record.key}
        for relation in ("successor", "predecessor"):
            frontier = [record.urn]
            while frontier and len(found) < MAX_HOPS:
                urn = frontier.pop(0)
                for other in self._neighbours(urn, relation):
                    try:
                        key = parse_urn(other).equivalence_key()
                    except InvalidURNError:
                        continue
                    if key not in seen and len(found) < MAX_HOPS:
                        seen.add(key)
                        found.append((other, relation))
                        frontier.append(other)
        return found

    def _neighbours(self, urn: str, relation: str) -> list[str]:
        key = parse_urn(urn).equivalence_key()
        with self.store.snapshot() as tx:
            if relation == "predecessor":
                return tx.successions.predecessors(key)
            record = tx.records.get(key)
        return [] if record is None else list(record.successors)
