"""Records: reading them, and writing them (create, replace, patch, deactivate, generate,
batch), each write one transaction checked by the access rules (RFC 8458 §4.3)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from urnkit.resolver.domain import (
    Change,
    ConflictError,
    ForbiddenError,
    HistoryEntry,
    InvalidURNError,
    Location,
    NotFoundError,
    Principal,
    Reader,
    Record,
    UnacceptableError,
    assigned_name,
    changes,
    check_identifiers,
    check_json,
    check_registrable,
    check_resolvable,
    check_rewritable,
    check_urn_length,
    merge_patch,
    normalize_prefix,
    parse_urn,
    prefix_of,
    random_nbn_string,
    sequential_nbn_string,
    shown,
    shown_document,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.access import AccessService
from urnkit.resolver.services.locations import check_locations, held_as_stored
from urnkit.resolver.services.rows import FirstLines, equivalence_keys
from urnkit.resolver.store import Store, Transaction, now
from urnkit.urn import URN

MAX_BATCH = 10_000  # records in one POST /api/v1/urns:batch
MAX_BATCH_LOCATIONS = 100_000  # locations in one batch, all records together: 10 a record
MAX_GENERATE = 1_000  # URNs reserved by one generation request
MAX_NOTE = 10_000  # characters of a deactivation's note
MAX_SUCCESSORS = 100  # URNs one deactivation names


# The refusals of one record of a batch, which say its index.
Refusal = TypeVar(
    "Refusal", bound=InvalidURNError | UnacceptableError | ForbiddenError | ConflictError
)


def _at(error: Refusal, number: int, text: str) -> Refusal:
    """``error``, saying it concerns record ``number`` of a batch."""
    error.extensions["index"] = number
    error.detail = f"record {number} ({text}): {error.detail}"
    return error


def actor_of(principal: Principal) -> str:
    """Who made a change, as history names it: the organisation and its token, or its staff
    account.

    >>> actor_of(Principal("Library", "registrant", 7))
    'Library (token 7)'
    >>> actor_of(Principal("Library", "registrant", 0, account="alice"))
    'Library (account alice)'
    """
    if principal.account is not None:
        return f"{principal.organisation} (account {principal.account})"
    return f"{principal.organisation} (token {principal.token_id})"


def check_restrictions(tx: Transaction, holder: str, found: Sequence[Location]) -> None:
    """:class:`UnacceptableError` unless every location of ``found`` restricted to a network
    is restricted to one of its holder's (its ``organisation``; ``holder`` when it names
    none)."""
    networks: dict[str, set[str]] = {}
    for number, location in enumerate(found, 1):
        if location.restricted_to is None:
            continue
        held_by = location.organisation or holder
        if held_by not in networks:
            held_by_id = tx.organisations.id(held_by)
            networks[held_by] = {name for _, _, name, _ in tx.networks.all(held_by_id)}
        known = networks[held_by]
        if location.restricted_to not in known:
            raise UnacceptableError(
                f"location {number}: {held_by!r} has no network called "
                f"{location.restricted_to!r} (its networks: {', '.join(sorted(known)) or 'none'}"
                "; an admin defines them: urnkit admin network)",
                networks=sorted(known),
                field="restricted_to",
            )


def _sees(tx: Transaction, principal: Principal, record_id: int, record: Record) -> bool:
    """Whether ``principal`` reads the history of ``record``: its organisation's, one it holds
    a grant on, or (an admin) any."""
    return (
        principal.role == "admin"
        or record.owner == principal.organisation
        or tx.grants.holds(record_id, principal.organisation)
    )


class RecordService:
    """The records of a :class:`~urnkit.resolver.store.Store`, written as ``access`` allows."""

    def __init__(self, store: Store, access: AccessService) -> None:
        self.store = store
        self.access = access

    def get(self, text: str, reader: Reader | None = None) -> Record:
        """The record of a URN (any equivalent spelling); with only the locations ``reader``
        may see, if given."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record = tx.records.get(key)
        if record is None:
            raise NotFoundError(f"no URN equivalent to {text} is registered here")
        return record if reader is None else shown(record, reader)

    def history(self, text: str, reader: Reader | None = None) -> list[HistoryEntry]:
        """Every change to the record of a URN, oldest first; each showing only the locations
        ``reader`` may see, if given."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record_id = tx.records.id(key)
            record = tx.records.get(key)
            if record_id is None or record is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            entries = tx.records.history(record_id, record_json(record))
        if reader is None:
            return entries
        return [replace(entry, record=shown_document(entry.record, reader)) for entry in entries]

    def changes(
        self, principal: Principal, text: str
    ) -> tuple[Record, list[tuple[HistoryEntry, Change]]]:
        """A URN's record and each history entry with what it changed, oldest first, as
        ``principal`` reads them (its organisation's or granted records); else NotFoundError."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record_id, record = tx.records.id(key), tx.records.get(key)
            if record_id is None or record is None or not _sees(tx, principal, record_id, record):
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            entries = tx.records.history(record_id, record_json(record))
        reader = self.access.reader(principal)
        entries = [replace(e, record=shown_document(e.record, reader)) for e in entries]
        return shown(record, reader), list(zip(entries, changes(entries), strict=True))

    def records(
        self,
        prefix: str | None,
        cursor: int = 0,
        limit: int = 100,
        *,
        title: str | None = None,
        url: str | None = None,
        identifier: str | None = None,
        reader: Reader | None = None,
    ) -> tuple[list[Record], int | None]:
        """A page of records (under ``prefix``, with ``title`` in their title, with a location
        at ``url``, carrying ``identifier``: each if given) and the cursor of the next page.
        With a ``reader``, each record shows only the locations it may see, and a location at
        ``url`` it may not see does not count (a page may then be short)."""
        normalized = None if prefix is None else normalize_prefix(prefix)
        with self.store.snapshot() as tx:
            page = tx.records.page(
                normalized, cursor, limit + 1, title=title, url=url, identifier=identifier
            )
        more = len(page) > limit
        page = page[:limit]
        after = page[-1][0] if more else None
        found = [record for _, record in page]
        if reader is not None:
            found = [shown(record, reader) for record in found]
            if url is not None:
                found = [r for r in found if any(loc.url == url for loc in r.locations)]
        return found, after

    def put(
        self,
        principal: Principal,
        text: str,
        found: Sequence[Location],
        metadata: Mapping[str, Any],
        *,
        overwrite: bool = True,
    ) -> tuple[Record, bool]:
        """Create or replace a record; True when it was created. Without ``overwrite`` (the
        staff pages' registration and filling in), a record registered already is refused
        (:class:`ConflictError`, ``field`` ``urn``) unless it is reserved: it is filled in."""
        with self.store.transaction() as tx:
            return self.put_in(tx, principal, text, found, metadata, overwrite=overwrite)

    def put_in(
        self,
        tx: Transaction,
        principal: Principal,
        text: str,
        found: Sequence[Location],
        metadata: Mapping[str, Any],
        *,
        overwrite: bool = True,
    ) -> tuple[Record, bool]:
        """:meth:`put` in ``tx``."""
        check_urn_length(text)
        check_json(metadata, ("metadata",))
        check_identifiers(metadata)
        urn = parse_urn(text)
        prefix = prefix_of(urn)
        key = urn.equivalence_key()
        record_id = tx.records.id(key, for_update=True)
        self.access.authorize_owner(tx, principal, prefix, record_id, str(urn))
        moment = now()
        if record_id is None:  # a new registration, checked as one
            check_registrable(urn)
            found = check_locations(found)
            owner = self.access.owner(tx, principal, prefix, anywhere=True)
            check_restrictions(tx, owner, found)
            owner_id = tx.organisations.id(owner)
            assert owner_id is not None
            record = Record(str(urn), key, prefix, "active", owner, moment, moment)
            held = held_as_stored((), found, owner)
            record = replace(record, locations=held, metadata=dict(metadata))
            record_id = tx.records.insert(record, owner_id)
            if record_id is not None:
                tx.records.append_history([(record_id, "created", actor_of(principal))])
                return record, True
            record_id = tx.records.id(key, for_update=True)  # created meanwhile: replace it
            assert record_id is not None
        # A registered record is no new registration: checked as PATCH checks it, its
        # locations against those it holds (what was stored before a rule stays writable).
        check_rewritable(urn)
        current = tx.records.get(key)
        assert current is not None
        if not overwrite and current.status != "reserved":
            raise ConflictError(
                f"{current.urn} is registered already ({current.status}, not reserved)",
                field="urn",
            )
        record = replaced(tx, current, found, metadata, moment)
        tx.records.update(record_id, record, record_json(current), "replaced", actor_of(principal))
        return record, False

    def patch(self, principal: Principal, text: str, patch: Mapping[str, Any]) -> Record:
        """Apply an RFC 7396 merge patch to a record's ``metadata`` and ``locations``."""
        unknown = set(patch) - {"metadata", "locations"}
        if unknown:
            raise UnacceptableError(
                f"only metadata and locations can be patched, not {', '.join(sorted(unknown))}"
            )

        def patched(current: Record) -> tuple[Mapping[str, Any], Sequence[Location] | None]:
            metadata = current.metadata
            if "metadata" in patch:
                merged = merge_patch(dict(current.metadata), patch["metadata"])
                if not isinstance(merged, dict):
                    raise UnacceptableError("metadata must stay a JSON object")
                metadata = merged
            return metadata, patch.get("locations")

        return self._change(principal, text, patched)

    def describe(self, principal: Principal, text: str, metadata: Mapping[str, Any]) -> Record:
        """Replace a record's ``metadata`` whole (the owner only; history: ``patched``)."""
        return self._change(principal, text, lambda current: (dict(metadata), None))

    def _change(
        self,
        principal: Principal,
        text: str,
        change: Callable[[Record], tuple[Mapping[str, Any], Sequence[Location] | None]],
    ) -> Record:
        """Write the metadata and locations (None: kept) ``change`` makes of a record, as its
        owner: one transaction, checked as :meth:`put` checks."""
        urn = parse_urn(text)
        check_resolvable(urn.assigned_name)
        with self.store.transaction() as tx:
            key = urn.equivalence_key()
            record_id = tx.records.id(key, for_update=True)
            self.access.authorize_owner(tx, principal, prefix_of(urn), record_id, str(urn))
            current = tx.records.get(key)
            if record_id is None or current is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            if current.status == "deactivated":
                raise ConflictError(
                    f"{current.urn} is deactivated; a deactivated URN is not written"
                )
            metadata, locations = change(current)
            if metadata is not current.metadata:
                check_json(metadata, ("metadata",), what="the patched record: ")
                check_identifiers(metadata)
            found = current.locations
            if locations is not None:
                found = held_as_stored(current.locations, locations, current.owner)
                check_restrictions(tx, current.owner, found)
            record = replace(current, metadata=metadata, locations=found, updated=now())
            actor = actor_of(principal)
            tx.records.update(record_id, record, record_json(current), "patched", actor)
            return record

    def deactivate(
        self, principal: Principal, text: str, note: str | None, successors: Sequence[str]
    ) -> Record:
        """Deactivate a record (there is no delete: RFC 8458 §4.1), naming its successors."""
        with self.store.transaction() as tx:
            return self.deactivate_in(tx, principal, text, note, successors)

    def deactivate_in(
        self,
        tx: Transaction,
        principal: Principal,
        text: str,
        note: str | None,
        successors: Sequence[str],
    ) -> Record:
        """:meth:`deactivate` in ``tx``."""
        if len(note or "") > MAX_NOTE:
            raise UnacceptableError(f"a note is at most {MAX_NOTE} characters", field="note")
        if len(successors) > MAX_SUCCESSORS:
            raise UnacceptableError(
                f"at most {MAX_SUCCESSORS} successors are named", field="successors"
            )
        for number, successor in enumerate(successors):
            check_urn_length(successor, ("successors", number))
        urn = parse_urn(text)
        successor_urns = [parse_urn(s).assigned_name for s in successors]
        key = urn.equivalence_key()
        if any(parse_urn(s).equivalence_key() == key for s in successor_urns):
            raise UnacceptableError("a URN cannot be its own successor")
        record_id = tx.records.id(key, for_update=True)
        self.access.authorize_owner(tx, principal, prefix_of(urn), record_id, str(urn))
        current = tx.records.get(key)
        if record_id is None or current is None:
            raise NotFoundError(f"no URN equivalent to {text} is registered here")
        record = replace(
            current,
            status="deactivated",
            note=note,
            successors=tuple(successor_urns),
            updated=now(),
        )
        tx.records.update(
            record_id, record, record_json(current), "deactivated", actor_of(principal)
        )
        record_successions(tx, [key])
        return record

    def generate(self, principal: Principal, prefix: str, count: int = 1) -> list[Record]:
        """Reserve ``count`` new URN:NBNs in a delegated prefix with its generator. Numbers come
        from the database (one UPDATE on the prefix row, or random strings whose uniqueness the
        UNIQUE key decides), so any number of processes can generate at once."""
        if not 1 <= count <= MAX_GENERATE:
            raise UnacceptableError(f"count must be between 1 and {MAX_GENERATE}", field="count")
        prefix = normalize_prefix(prefix)
        with self.store.transaction() as tx:
            delegated = {p: (org, gen) for p, org, gen in tx.organisations.prefixes()}
            if prefix not in delegated:
                raise NotFoundError(f"the prefix {prefix!r} is not delegated here")
            self.access.authorize(tx, principal, prefix)
            owner, generator = delegated[prefix]
            owner_id = tx.organisations.id(owner)
            assert owner_id is not None
            made: list[Record] = []
            while len(made) < count:
                if generator == "sequential":
                    first = tx.organisations.take_numbers(prefix, count - len(made))
                    strings = [
                        sequential_nbn_string(n) for n in range(first, first + count - len(made))
                    ]
                else:
                    strings = [random_nbn_string() for _ in range(count - len(made))]
                for nbn_string in strings:
                    urn = URN.parse(assigned_name(prefix, nbn_string))
                    moment = now()
                    record = Record(
                        str(urn), urn.equivalence_key(), prefix, "reserved", owner, moment, moment
                    )
                    record_id = tx.records.insert(record, owner_id)
                    if record_id is not None:  # else taken by hand: draw another
                        made.append(record)
                        tx.records.append_history([(record_id, "reserved", actor_of(principal))])
            return made

    def batch(
        self,
        principal: Principal,
        items: Sequence[tuple[str, Sequence[Location], Mapping[str, Any]]],
        idempotency_key: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Create or replace up to :data:`MAX_BATCH` records (:data:`MAX_BATCH_LOCATIONS`
        locations) in one transaction: all or nothing.
        With an ``idempotency_key`` the response is stored with the effects, and a retry with
        the same key and the same items gets it back without writing again."""
        if not 1 <= len(items) <= MAX_BATCH:
            raise UnacceptableError(f"a batch holds 1 to {MAX_BATCH} records, not {len(items)}")
        locations = sum(len(found) for _, found, _ in items)
        if locations > MAX_BATCH_LOCATIONS:
            raise UnacceptableError(
                f"a batch holds at most {MAX_BATCH_LOCATIONS} locations, not {locations}",
                limit=MAX_BATCH_LOCATIONS,
            )
        request_hash = hashlib.sha256(
            json.dumps(
                [
                    [urn, [[loc.url, loc.priority, loc.label, loc.media_type] for loc in found], md]
                    for urn, found, md in items
                ],
                sort_keys=True,
            ).encode()
        ).hexdigest()
        if idempotency_key is not None:  # answered already: no write transaction needed
            with self.store.snapshot() as tx:
                stored = _remembered(tx, principal, idempotency_key, request_hash)
            if stored is not None:
                return stored

        def answer(tx: Transaction) -> tuple[int, dict[str, Any]]:
            owner_id = tx.organisations.id(principal.organisation)
            assert owner_id is not None
            # The key is claimed before anything is written: a request with the same key still
            # being written is waited for here, and then answered as it was.
            if idempotency_key is not None and not tx.records.claim_response(
                owner_id, idempotency_key, request_hash
            ):
                stored = _remembered(tx, principal, idempotency_key, request_hash)
                assert stored is not None
                return stored
            results = self._batch(tx, principal, items)
            body: dict[str, Any] = {"count": len(results), "results": results}
            if idempotency_key is not None:
                tx.records.remember_response(owner_id, idempotency_key, 200, body)
            return 200, body

        return self.store.retried(answer)

    def _batch(
        self,
        tx: Transaction,
        principal: Principal,
        items: Sequence[tuple[str, Sequence[Location], Mapping[str, Any]]],
    ) -> list[dict[str, str]]:
        """Write a batch in ``tx``: records new to the database in one bulk insert, those present
        replaced together; a URN repeated refuses it (:class:`~.rows.FirstLines`). Results in
        order."""
        fresh: dict[str, tuple[int, Record]] = {}
        owners: dict[str, str] = {}  # of each prefix
        seen = FirstLines("record")
        moment = now()
        # Those registered already are replaced, checked as PUT checks them.
        registered = tx.bulk.present_keys(equivalence_keys(text for text, _, _ in items))
        for number, (text, found, metadata) in enumerate(items):
            try:
                check_urn_length(text, ("records", number, "urn"))
                check_json(metadata, ("records", number, "metadata"))
                check_identifiers(metadata, ("records", number, "metadata"))
                urn = parse_urn(text)
                prefix = prefix_of(urn)
                if prefix not in owners:
                    self.access.authorize(tx, principal, prefix)
                    owners[prefix] = self.access.owner(tx, principal, prefix)
                new = urn.equivalence_key() not in registered
                if new:
                    check_registrable(urn)
                else:  # its locations are checked against its own (_replace_present)
                    check_rewritable(urn)
                record = Record(
                    str(urn),
                    urn.equivalence_key(),
                    prefix,
                    "active",
                    owners[prefix],
                    moment,
                    moment,
                    locations=held_as_stored((), found, owners[prefix]) if new else (),
                    metadata=dict(metadata),
                )
                check_restrictions(tx, record.owner, record.locations)
                seen.check(record.key, number)
            except (InvalidURNError, UnacceptableError, ForbiddenError) as error:
                raise _at(error, number, text) from None
            fresh[record.key] = (number, record)
        # Every record is claimed, inserted if new or else locked, in one pass in one order
        # (by key), as every batch claims them: two batches sharing records would otherwise
        # deadlock on PostgreSQL, each holding a row the other waits for.
        claimed = sorted(fresh.values(), key=lambda entry: entry[1].key)
        ids = tx.bulk.insert_records([r for _, r in claimed], tx.organisations.ids())
        actor = actor_of(principal)
        tx.records.append_history(
            [(ids[r.key], "created", actor) for _, r in claimed if r.key in ids]
        )
        done = {number: (r.urn, "created") for number, r in claimed if r.key in ids}
        present = [(number, r.key) for number, r in claimed if r.key not in ids]
        done |= _replace_present(tx, items, present, moment, actor)
        return [{"urn": done[n][0], "result": done[n][1]} for n in range(len(items))]


def _replace_present(
    tx: Transaction,
    items: Sequence[tuple[str, Sequence[Location], Mapping[str, Any]]],
    present: Sequence[tuple[int, str]],
    moment: datetime,
    actor: str,
) -> dict[int, tuple[str, str]]:
    """Replace the records present (registered, or inserted meanwhile by another process) of a
    batch's ``items``, each given as (its number, its key), in a few statements, as a PUT
    replaces one; each one's URN and result by number."""
    current = tx.records.by_keys([key for _, key in present])
    changed: list[tuple[int, Record, dict[str, Any]]] = []
    done = {}
    for number, key in present:
        record_id, was = current[key]
        text, found, metadata = items[number]
        try:
            record = replaced(tx, was, found, metadata, moment)
        except (UnacceptableError, ConflictError) as error:
            raise _at(error, number, text) from None
        changed.append((record_id, record, record_json(was)))
        done[number] = (record.urn, "replaced")
    tx.records.update_many(changed, "replaced", actor)
    return done


def replaced(
    tx: Transaction,
    current: Record,
    found: Sequence[Location],
    metadata: Mapping[str, Any],
    moment: datetime,
) -> Record:
    """``current`` active with the locations ``found`` (checked, each held as stored) and
    ``metadata``, updated at ``moment``: what a PUT makes of a registered record.
    :class:`ConflictError` if it is deactivated."""
    if current.status == "deactivated":
        raise ConflictError(
            f"{current.urn} is deactivated; a deactivated URN is not written again",
            successors=list(current.successors),
        )
    held = held_as_stored(current.locations, found, current.owner)
    check_restrictions(tx, current.owner, held)
    return replace(
        current, status="active", locations=held, metadata=dict(metadata), updated=moment
    )


def record_successions(tx: Transaction, keys: Sequence[str]) -> None:
    """Note who succeeds whom (``successions``) for the deactivated records among ``keys``; a
    successor that is no URN (imported as it was) is nobody's successor."""
    found = []
    for record_id, urn, successors in tx.successions.named_successors(keys):
        successor_keys = set()
        for successor in successors:
            try:
                successor_keys.add(parse_urn(successor).equivalence_key())
            except InvalidURNError:
                continue
        found.append((record_id, urn, successor_keys))
    tx.successions.replace(found)


def _remembered(
    tx: Transaction, principal: Principal, idempotency_key: str, request_hash: str
) -> tuple[int, dict[str, Any]] | None:
    """The answer stored for ``principal``'s organisation's ``idempotency_key``, if any;
    :class:`ConflictError` when the key was used for another request."""
    owner_id = tx.organisations.id(principal.organisation)
    assert owner_id is not None
    stored = tx.records.idempotent_response(owner_id, idempotency_key)
    if stored is None:
        return None
    if stored[0] != request_hash:
        raise ConflictError(
            "this Idempotency-Key was used for a different batch; use a new key",
            idempotency_key=idempotency_key,
        )
    return stored[1], stored[2]


def unresolvable(service: RecordService, page: int = 1_000) -> Iterator[str]:
    """Why each stored URN that could not be resolved was refused by
    :func:`~urnkit.resolver.domain.check_resolvable` (stored before the rule), in
    registration order."""
    cursor: int | None = 0
    while cursor is not None:
        found, cursor = service.records(None, cursor, page)
        for record in found:
            try:
                check_resolvable(record.urn)
            except UnacceptableError as error:
                yield error.detail


def title_index_disagreement(store: Store, *, rebuild: bool = False) -> str | None:
    """Why the title search's index does not agree with the records' titles, None if it does;
    the index built again from the titles first if ``rebuild``. On SQLite the index is kept by
    triggers that hand it each old title: a database changed around them (a trigger dropped by
    hand) leaves titles unfound or found by words they lost."""
    if rebuild:
        with store.transaction() as tx:
            tx.titles.rebuild()
    with store.snapshot() as tx:
        if tx.titles.agrees():
            return None
    return (
        "the title index does not agree with the records' titles: searches by title may miss"
        " records or find them by old titles; 'urnkit db check --rebuild-title-index' builds it"
        " again from the records"
    )
