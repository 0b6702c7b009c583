"""The resolver's services: resolve, register, patch, deactivate, generate, import, export.

Every rule lives here, above the store and below the web and CLI adapters; each write is one
database transaction, so a failure leaves nothing half done.

>>> service = Service(Store("sqlite://"))
>>> service.store.upgrade()
>>> service.create_organisation("Demo Library")
'Demo Library'
>>> service.delegate("Demo Library", "FI:Demo")
'fi:demo'
>>> admin = service.create_token("Demo Library", "admin")
>>> principal = service.authenticate(admin)
>>> record, created = service.put(
...     principal, "URN:NBN:fi:demo-1", [Location("https://example.org/1")], {"title": "One"}
... )
>>> created, record.status, record.urn
(True, 'active', 'URN:NBN:fi:demo-1')
>>> resolution = service.resolve("urn:nbn:FI:DEMO-1?=page=2")
>>> resolution.kind, resolution.target
('redirect', 'https://example.org/1?page=2')
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import json
import multiprocessing.connection
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import partial
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import sqlalchemy as sa

from urnkit.resolver.domain import (
    GENERATORS,
    ROLES,
    BrokenLink,
    ConflictError,
    ForbiddenError,
    HistoryEntry,
    InvalidURNError,
    LinkState,
    Location,
    NotFoundError,
    Principal,
    Record,
    ResolverError,
    Status,
    UnacceptableError,
    UnauthenticatedError,
    assigned_name,
    check_registrable,
    covers,
    merge_patch,
    normalize_prefix,
    parse_urn,
    prefix_of,
    random_nbn_string,
    sequential_nbn_string,
    with_q_component,
)
from urnkit.resolver.forwarding import (
    Forwarding,
    check_template,
    forward_url,
    normalize_country,
    probe_all,
)
from urnkit.resolver.naptr import Discovery
from urnkit.resolver.statistics import DayCount, ResolutionTally
from urnkit.resolver.store import ResolutionRow, StagedImport, Store, Transaction, now, stage_import
from urnkit.urn import URN

MAX_BATCH = 10_000  # records in one POST /api/v1/urns:batch
MAX_GENERATE = 1_000  # URNs reserved by one generation request
T = TypeVar("T")
LOCATION_SCHEMES = frozenset({"http", "https", "ftp"})
MAX_LOCATIONS = 100
MAX_STATISTICS_DAYS = 366  # the longest span the statistics show


@dataclass(frozen=True, slots=True)
class Resolution:
    """What resolving a URN gives: a ``redirect`` to ``target``, a ``surrogate`` page of the
    record's metadata (RFC 8458 §4.5), or ``gone`` (deactivated) naming its successors.
    ``alternates`` are the URLs a redirect could lead to, best first (``target`` is the first);
    ``predecessors`` the URNs of the deactivated records naming this one as a successor."""

    kind: Literal["redirect", "surrogate", "gone"]
    urn: URN
    target: str | None = None
    record: Record | None = None
    alternates: tuple[str, ...] = ()
    predecessors: tuple[str, ...] = ()


def record_json(record: Record) -> dict[str, Any]:
    """A record as the API shows it.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record_json(Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t))["created"]
    '2026-01-01T00:00:00+00:00'
    """
    return {
        "urn": record.urn,
        "status": record.status,
        "locations": [
            {
                "url": loc.url,
                "priority": loc.priority,
                "label": loc.label,
                "media_type": loc.media_type,
            }
            for loc in record.locations
        ],
        "metadata": dict(record.metadata),
        "successors": list(record.successors),
        "note": record.note,
        "owner": record.owner,
        "created": record.created.isoformat(),
        "updated": record.updated.isoformat(),
    }


def history_json(entry: HistoryEntry) -> dict[str, Any]:
    """A history entry as the API shows it."""
    return {
        "at": entry.at.isoformat(),
        "action": entry.action,
        "actor": entry.actor,
        "record": dict(entry.record),
    }


def check_locations(found: Sequence[Location]) -> tuple[Location, ...]:
    """Locations fit to store, best first: absolute http(s) or ftp URLs without spaces,
    priorities >= 0 (the lowest number is the best), at most ``MAX_LOCATIONS``.

    >>> check_locations([Location("ftp:/x")])
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: location 1: 'ftp:/x' is not an absolute ...
    """
    for number, location in enumerate(found, 1):
        try:
            parts = urlsplit(location.url)
            fit = (
                parts.scheme.lower() in LOCATION_SCHEMES
                and bool(parts.hostname)
                and location.url.isprintable()
                and " " not in location.url
            )
        except ValueError:
            fit = False
        if not fit:
            raise UnacceptableError(
                f"location {number}: {location.url!r} is not an absolute http, https or ftp URL "
                "with a host"
            )
        if location.priority < 0:
            raise UnacceptableError(f"location {number}: the priority must be 0 or more")
    if len(found) > MAX_LOCATIONS:
        raise UnacceptableError(f"a record has at most {MAX_LOCATIONS} locations")
    return tuple(sorted(found, key=lambda location: location.priority))  # stable: ties keep order


def _at(error: ResolverError, number: int, text: str) -> ResolverError:
    """``error``, saying it concerns record ``number`` of a batch."""
    error.extensions["index"] = number
    error.detail = f"record {number} ({text}): {error.detail}"
    return error


def _actor(principal: Principal) -> str:
    return f"{principal.organisation} (token {principal.token_id})"


class Service:
    """The resolver's services over one :class:`~urnkit.resolver.store.Store`."""

    def __init__(self, store: Store, discovery: Discovery | None = None) -> None:
        self.store = store
        self.resolutions = ResolutionTally()  # see flush_statistics
        self.discovery = discovery  # DNS NAPTR discovery of resolvers (naptr.py), if enabled

    # --- resolution ------------------------------------------------------------------------------

    def resolve(self, text: str) -> Resolution:
        """Resolve a URN, components included: a q-component is copied into the locator's
        query (RFC 8141 §2.3.2); an r-component does not change where it leads (RFC 8458
        §4.2.1; the web layer reads a service's name from it).

        Raises :class:`~urnkit.resolver.domain.InvalidURNError` or
        :class:`~urnkit.resolver.domain.NotFoundError`.
        """
        urn = parse_urn(text)
        key = urn.equivalence_key()
        row = self.store.resolution_row(key)
        if row is None:
            return self._forward(urn)
        self.resolutions.add(row[3])
        return self._redirect(urn, row) or self._from_record(urn, row)

    async def resolve_async(self, text: str) -> Resolution:
        """:meth:`resolve` for the event loop (``GET /{urn}``): the lookup is
        :meth:`~urnkit.resolver.store.Store.resolution_row_async`; reading the whole record, for
        the rarer surrogate and gone answers, and forwarding, run in a worker thread."""
        urn = parse_urn(text)
        key = urn.equivalence_key()
        row = await self.store.resolution_row_async(key)
        if row is None:
            return await asyncio.to_thread(self._forward, urn)
        self.resolutions.add(row[3])
        redirect = self._redirect(urn, row)
        if redirect is None:
            return await asyncio.to_thread(self._from_record, urn, row)
        return redirect

    @staticmethod
    def _redirect(urn: URN, row: ResolutionRow) -> Resolution | None:
        """The redirect to an active record's best location not known broken; None when the
        answer needs the whole record (no such location, or deactivated)."""
        status, targets, predecessors, _ = row
        if status == "active" and targets is not None:
            alternates = tuple(targets.split("\n"))
            if urn.q_component:
                alternates = tuple(with_q_component(url, urn.q_component) for url in alternates)
            return Resolution(
                "redirect",
                urn,
                alternates[0],
                alternates=alternates,
                predecessors=() if predecessors is None else tuple(predecessors.split("\n")),
            )
        return None

    def _from_record(self, urn: URN, row: ResolutionRow) -> Resolution:
        record = self.get(urn.assigned_name)
        kind: Literal["surrogate", "gone"] = (
            "gone" if record.status == "deactivated" else "surrogate"
        )
        before = () if row[2] is None else tuple(row[2].split("\n"))
        return Resolution(kind, urn, record=record, predecessors=before)

    # --- reading ---------------------------------------------------------------------------------

    def get(self, text: str) -> Record:
        """The record of a URN (any equivalent spelling)."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record = tx.records.get(key)
        if record is None:
            raise NotFoundError(f"no URN equivalent to {text} is registered here")
        return record

    def history(self, text: str) -> list[HistoryEntry]:
        """Every change to the record of a URN, oldest first."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record_id = tx.records.id(key)
            if record_id is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            return tx.records.history(record_id)

    def records(
        self,
        prefix: str | None,
        cursor: int = 0,
        limit: int = 100,
        *,
        title: str | None = None,
        url: str | None = None,
    ) -> tuple[list[Record], int | None]:
        """A page of records (under ``prefix``, with ``title`` in their title, with a location
        at ``url``: each if given) and the cursor of the next page."""
        normalized = None if prefix is None else normalize_prefix(prefix)
        with self.store.snapshot() as tx:
            page = tx.records.page(normalized, cursor, limit + 1, title=title, url=url)
        more = len(page) > limit
        page = page[:limit]
        return [record for _, record in page], (page[-1][0] if more else None)

    def prefixes(self) -> list[tuple[str, str, str]]:
        """The public register of delegated prefixes (RFC 8458 §4.3): prefix, organisation,
        generator."""
        with self.store.snapshot() as tx:
            return tx.organisations.prefixes()

    # --- authorization ---------------------------------------------------------------------------

    def authenticate(self, token: str | None) -> Principal:
        """The principal holding a live bearer token, else :class:`UnauthenticatedError`."""
        if not token:
            raise UnauthenticatedError(
                "this request needs a bearer token (Authorization: Bearer …)"
            )
        with self.store.snapshot() as tx:
            principal = tx.organisations.principal(token)
        if principal is None:
            raise UnauthenticatedError("the bearer token is unknown or revoked")
        return principal

    def _authorize(self, tx: Transaction, principal: Principal, prefix: str) -> None:
        """A registrant writes only under prefixes delegated to its organisation (RFC 8458
        §4.3), and not under a longer prefix delegated on to another; an admin writes anywhere."""
        if principal.role == "admin":
            return
        holders = sorted(
            (p, name) for p, name, _ in tx.organisations.prefixes() if covers(p, prefix)
        )
        own = [p for p, name in holders if name == principal.organisation]
        if own and holders[-1][1] == principal.organisation:  # the longest covering prefix
            return
        mine = [p for p, _, _ in tx.organisations.prefixes(principal.organisation)]
        if own:
            holder, name = holders[-1]
            reason = f"{holder!r}, which covers it, is delegated to {name!r}"
        else:
            reason = f"its prefixes: {', '.join(mine) or 'none'}"
        raise ForbiddenError(
            f"the prefix {prefix!r} is not delegated to {principal.organisation!r} ({reason})",
            prefix=prefix,
            delegated=mine,
        )

    @staticmethod
    def require_admin(principal: Principal) -> None:
        """:class:`ForbiddenError` unless the principal's token has the admin role."""
        if principal.role != "admin":
            raise ForbiddenError("this needs an admin token; this token's role is registrant")

    # --- writing ---------------------------------------------------------------------------------

    def put(
        self,
        principal: Principal,
        text: str,
        found: Sequence[Location],
        metadata: Mapping[str, Any],
    ) -> tuple[Record, bool]:
        """Create or replace a record; True when it was created."""
        with self.store.transaction() as tx:
            return self._put(tx, principal, text, found, metadata)

    def _put(
        self,
        tx: Transaction,
        principal: Principal,
        text: str,
        found: Sequence[Location],
        metadata: Mapping[str, Any],
    ) -> tuple[Record, bool]:
        urn = parse_urn(text)
        prefix = prefix_of(urn)
        self._authorize(tx, principal, prefix)
        check_registrable(urn)
        found = check_locations(found)
        key = urn.equivalence_key()
        moment = now()
        record_id = tx.records.id(key, for_update=True)
        if record_id is None:
            owner_id = tx.organisations.id(principal.organisation)
            assert owner_id is not None
            record = Record(str(urn), key, prefix, "active", principal.organisation, moment, moment)
            record = replace(record, locations=found, metadata=dict(metadata))
            record_id = tx.records.insert(record, owner_id)
            if record_id is not None:
                tx.records.append_history(
                    [(record_id, "created", _actor(principal), record_json(record))]
                )
                return record, True
            record_id = tx.records.id(key, for_update=True)  # created meanwhile: replace it
            assert record_id is not None
        current = tx.records.get(key)
        assert current is not None
        if current.status == "deactivated":
            raise ConflictError(
                f"{current.urn} is deactivated; a deactivated URN is not written again",
                successors=list(current.successors),
            )
        record = replace(
            current, status="active", locations=found, metadata=dict(metadata), updated=moment
        )
        tx.records.update(record_id, record)
        tx.records.append_history([(record_id, "replaced", _actor(principal), record_json(record))])
        return record, False

    def patch(self, principal: Principal, text: str, patch: Mapping[str, Any]) -> Record:
        """Apply an RFC 7396 merge patch to a record's ``metadata`` and ``locations``."""
        unknown = set(patch) - {"metadata", "locations"}
        if unknown:
            raise UnacceptableError(
                f"only metadata and locations can be patched, not {', '.join(sorted(unknown))}"
            )
        urn = parse_urn(text)
        with self.store.transaction() as tx:
            self._authorize(tx, principal, prefix_of(urn))
            key = urn.equivalence_key()
            record_id = tx.records.id(key, for_update=True)
            current = tx.records.get(key)
            if record_id is None or current is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            if current.status == "deactivated":
                raise ConflictError(
                    f"{current.urn} is deactivated; a deactivated URN is not written"
                )
            metadata = current.metadata
            if "metadata" in patch:
                merged = merge_patch(dict(current.metadata), patch["metadata"])
                if not isinstance(merged, dict):
                    raise UnacceptableError("metadata must stay a JSON object")
                metadata = merged
            found = current.locations
            if "locations" in patch:
                found = check_locations(patch["locations"])
            record = replace(current, metadata=metadata, locations=found, updated=now())
            tx.records.update(record_id, record)
            tx.records.append_history(
                [(record_id, "patched", _actor(principal), record_json(record))]
            )
            return record

    def deactivate(
        self, principal: Principal, text: str, note: str | None, successors: Sequence[str]
    ) -> Record:
        """Deactivate a record (there is no delete: RFC 8458 §4.1), naming its successors."""
        urn = parse_urn(text)
        successor_urns = [parse_urn(s).assigned_name for s in successors]
        key = urn.equivalence_key()
        if any(parse_urn(s).equivalence_key() == key for s in successor_urns):
            raise UnacceptableError("a URN cannot be its own successor")
        with self.store.transaction() as tx:
            self._authorize(tx, principal, prefix_of(urn))
            record_id = tx.records.id(key, for_update=True)
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
            tx.records.update(record_id, record)
            tx.records.append_history(
                [(record_id, "deactivated", _actor(principal), record_json(record))]
            )
            _record_successions(tx, [key])
            return record

    def generate(self, principal: Principal, prefix: str, count: int = 1) -> list[Record]:
        """Reserve ``count`` new URN:NBNs in a delegated prefix with its generator. Numbers come
        from the database (one UPDATE on the prefix row, or random strings whose uniqueness the
        UNIQUE key decides), so any number of processes can generate at once."""
        if not 1 <= count <= MAX_GENERATE:
            raise UnacceptableError(f"count must be between 1 and {MAX_GENERATE}")
        prefix = normalize_prefix(prefix)
        with self.store.transaction() as tx:
            delegated = {p: (org, gen) for p, org, gen in tx.organisations.prefixes()}
            if prefix not in delegated:
                raise NotFoundError(f"the prefix {prefix!r} is not delegated here")
            self._authorize(tx, principal, prefix)
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
                        tx.records.append_history(
                            [(record_id, "reserved", _actor(principal), record_json(record))]
                        )
            return made

    def batch(
        self,
        principal: Principal,
        items: Sequence[tuple[str, Sequence[Location], Mapping[str, Any]]],
        idempotency_key: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Create or replace up to :data:`MAX_BATCH` records in one transaction: all or nothing.
        With an ``idempotency_key`` the response is stored with the effects, and a retry with
        the same key and the same items gets it back without writing again."""
        if not 1 <= len(items) <= MAX_BATCH:
            raise UnacceptableError(f"a batch holds 1 to {MAX_BATCH} records, not {len(items)}")
        request_hash = hashlib.sha256(
            json.dumps(
                [
                    [urn, [[loc.url, loc.priority, loc.label, loc.media_type] for loc in found], md]
                    for urn, found, md in items
                ],
                sort_keys=True,
            ).encode()
        ).hexdigest()
        if idempotency_key is not None:
            stored = self._stored_response(principal, idempotency_key, request_hash)
            if stored is not None:
                return stored
        try:
            with self.store.transaction() as tx:
                results = self._batch(tx, principal, items)
                body: dict[str, Any] = {"count": len(results), "results": results}
                if idempotency_key is not None:
                    owner_id = tx.organisations.id(principal.organisation)
                    assert owner_id is not None
                    tx.records.remember_response(owner_id, idempotency_key, request_hash, 200, body)
                return 200, body
        except sa.exc.IntegrityError:
            if idempotency_key is None:
                raise
            # The same key was committed by a concurrent retry: answer as it did.
            stored = self._stored_response(principal, idempotency_key, request_hash)
            if stored is None:
                raise
            return stored

    def _batch(
        self,
        tx: Transaction,
        principal: Principal,
        items: Sequence[tuple[str, Sequence[Location], Mapping[str, Any]]],
    ) -> list[dict[str, str]]:
        """Write a batch in ``tx``: records new to the database in one bulk insert, the rest
        (present, or repeated in the batch) one by one as :meth:`put` does. Results in order."""
        fresh: dict[str, tuple[int, Record]] = {}
        authorized: set[str] = set()
        moment = now()
        for number, (text, found, metadata) in enumerate(items):
            try:
                urn = parse_urn(text)
                prefix = prefix_of(urn)
                if prefix not in authorized:
                    self._authorize(tx, principal, prefix)
                    authorized.add(prefix)
                check_registrable(urn)
                record = Record(
                    str(urn),
                    urn.equivalence_key(),
                    prefix,
                    "active",
                    principal.organisation,
                    moment,
                    moment,
                    locations=check_locations(found),
                    metadata=dict(metadata),
                )
            except (InvalidURNError, UnacceptableError, ForbiddenError) as error:
                raise _at(error, number, text) from None
            fresh.setdefault(record.key, (number, record))
        present = tx.bulk.present_keys(list(fresh))
        # Rows are inserted, then locked, in one order (by key): two batches sharing records
        # would otherwise deadlock on PostgreSQL, each holding a row the other waits for.
        new = sorted(
            ((n, r) for key, (n, r) in fresh.items() if key not in present),
            key=lambda entry: entry[1].key,
        )
        owner_id = tx.organisations.id(principal.organisation)
        assert owner_id is not None
        ids = tx.bulk.insert_records([r for _, r in new], {principal.organisation: owner_id})
        inserted = {number: record for number, record in new if record.key in ids}
        for key in sorted(key for key, (n, _) in fresh.items() if n not in inserted):
            tx.records.id(key, for_update=True)
        actor = _actor(principal)
        tx.records.append_history(
            [(ids[r.key], "created", actor, record_json(r)) for r in inserted.values()]
        )
        results = []
        for number, (text, found, metadata) in enumerate(items):
            if number in inserted:
                results.append({"urn": inserted[number].urn, "result": "created"})
                continue
            try:  # present, repeated in this batch, or inserted meanwhile by another process
                record, made = self._put(tx, principal, text, found, metadata)
            except ConflictError as error:
                raise _at(error, number, text) from None
            results.append({"urn": record.urn, "result": "created" if made else "replaced"})
        return results

    def _stored_response(
        self, principal: Principal, idempotency_key: str, request_hash: str
    ) -> tuple[int, dict[str, Any]] | None:
        with self.store.snapshot() as tx:
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

    # --- administration --------------------------------------------------------------------------

    def create_organisation(self, name: str) -> str:
        """Create an organisation; :class:`ConflictError` when the name is taken."""
        name = name.strip()
        if not name or len(name) > 200 or not name.isprintable():
            raise UnacceptableError("an organisation's name is 1 to 200 printable characters")
        with self.store.transaction() as tx:
            if tx.organisations.create(name) is None:
                raise ConflictError(f"an organisation called {name!r} exists")
        return name

    def organisations(self) -> list[str]:
        """Every organisation's name."""
        with self.store.snapshot() as tx:
            return [name for name, _ in tx.organisations.all()]

    def delegate(self, organisation: str, prefix: str, generator: str = "sequential") -> str:
        """Delegate a prefix (country code and sub-namespaces) to an organisation; the
        normalized prefix."""
        if generator not in GENERATORS:
            raise UnacceptableError(f"the generator is one of {', '.join(GENERATORS)}")
        prefix = normalize_prefix(prefix)
        with self.store.transaction() as tx:
            organisation_id = tx.organisations.id(organisation)
            if organisation_id is None:
                raise NotFoundError(f"no organisation is called {organisation!r}")
            if not tx.organisations.delegate(organisation_id, prefix, generator):
                raise ConflictError(f"the prefix {prefix!r} is already delegated")
        return prefix

    def create_token(self, organisation: str, role: str = "registrant", label: str = "") -> str:
        """A new API token for an organisation, returned once and stored only hashed."""
        if role not in ROLES:
            raise UnacceptableError(f"the role is one of {', '.join(ROLES)}")
        token = "urnkit_" + secrets.token_urlsafe(32)
        with self.store.transaction() as tx:
            organisation_id = tx.organisations.id(organisation)
            if organisation_id is None:
                raise NotFoundError(f"no organisation is called {organisation!r}")
            tx.organisations.create_token(organisation_id, role, token, label or None)
        return token

    def revoke_token(self, token_id: int) -> None:
        """Revoke a token by id; it stops working at once, in every process."""
        with self.store.transaction() as tx:
            if not tx.organisations.revoke_token(token_id):
                raise NotFoundError(f"no live token has the id {token_id}")

    # --- import and export -----------------------------------------------------------------------

    def import_records(
        self,
        rows: Iterable[Mapping[str, Any]],
        owner: str | None = None,
        batch_size: int = 5_000,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[int, int]:
        """Import records (``urn``, ``locations``, ``metadata``, optional ``status``,
        ``successors`` and ``note``) in transactional batches; records already present are
        skipped, so a rerun after a crash completes the import without duplicates. Each record
        belongs to ``owner``, or else to the organisation its prefix is delegated to. Returns
        (imported, skipped).

        >>> service = Service(Store("sqlite://"))
        >>> service.store.upgrade()
        >>> service.create_organisation("Library")
        'Library'
        >>> service.delegate("Library", "fi:lib")
        'fi:lib'
        >>> rows = [{"urn": "urn:nbn:fi:lib-1", "locations": [{"url": "https://example.org/"}]}]
        >>> service.import_records(rows), service.import_records(rows)
        ((1, 0), (0, 1))
        """
        with self.store.snapshot() as tx:
            owner_ids = tx.organisations.ids()
            delegated = [(prefix, name) for prefix, name, _ in tx.organisations.prefixes()]
        if owner is not None and owner not in owner_ids:
            raise NotFoundError(f"no organisation is called {owner!r}")

        postgresql = self.store.engine.dialect.name == "postgresql"
        make = partial(_import_batch, owner, delegated, owner_ids, postgresql)

        def prepared() -> Iterator[_ImportBatch]:
            batches = _batches(rows, batch_size)
            if not postgresql:
                yield from map(make, batches)
                return
            first = next(batches, None)
            try:  # read ahead, so that the child starts while the first batch is made here
                following = next(batches, None)
            except Exception:
                if first is not None:  # committed before the error, as without the peek
                    yield make(first)
                raise
            if first is None or following is None:  # one batch or none: made here
                if first is not None:
                    yield make(first)
                return
            # From the second batch on, another process prepares them: in this one they held
            # the GIL half the time and kept the database's thread waiting for it.
            yield from _made_elsewhere(make, first, itertools.chain([following], batches))

        imported = skipped = 0
        # The next batch is read and checked while the database stores this one.
        for prepared_batch in _read_ahead(prepared()):
            size = prepared_batch.size
            with self.store.transaction() as tx:
                if prepared_batch.staged is not None:
                    inserted = tx.bulk.import_staged(prepared_batch.staged)
                else:
                    inserted = tx.bulk.import_batch(
                        prepared_batch.records, owner_ids, prepared_batch.documents
                    )
                _record_successions(tx, prepared_batch.succeeding)
            imported += inserted
            skipped += size - inserted
            if progress is not None:
                progress(imported, skipped)
        return imported, skipped

    def export_records(self, prefix: str | None = None, page: int = 1_000) -> Iterator[Record]:
        """Every record (under ``prefix`` if given), in registration order, page by page."""
        cursor: int | None = 0
        while cursor is not None:
            found, cursor = self.records(prefix, cursor, page)
            yield from found

    # --- the public register, statistics and search ----------------------------------------------

    def register(self) -> list[tuple[str, str, str, int]]:
        """The delegated prefixes (RFC 8458 §4.3) as (prefix, organisation, generator, URNs):
        a URN counts for the longest delegated prefix that covers its own."""
        with self.store.snapshot() as tx:
            delegated = tx.organisations.prefixes()
            by_prefix = tx.statistics.record_counts("prefix")
        urns = dict.fromkeys((prefix for prefix, _, _ in delegated), 0)
        for prefix, count in by_prefix.items():
            holders = [p for p in urns if covers(p, prefix)]
            if holders:
                urns[max(holders, key=len)] += count
        return [(p, name, generator, urns[p]) for p, name, generator in delegated]

    def record_counts(self) -> dict[str, int]:
        """How many records there are by status."""
        with self.store.snapshot() as tx:
            return tx.statistics.record_counts("status")

    def flush_statistics(self) -> int:
        """Add the resolutions counted in this process since the last flush to the database;
        how many (prefix, day) rows that touched. A failed flush keeps its counts for the next."""
        taken = self.resolutions.take()
        try:
            with self.store.transaction() as tx:
                tx.statistics.add_resolution_counts(taken)
        except BaseException:
            self.resolutions.give_back(taken)
            raise
        return len(taken)

    def statistics(self, days: int = 31) -> list[DayCount]:
        """Resolutions per prefix per day (UTC) for the last ``days`` days, today included,
        the newest first; only what has been flushed (:meth:`flush_statistics`)."""
        with self.store.snapshot() as tx:
            return tx.statistics.resolution_counts(self.statistics_since(days))

    @staticmethod
    def statistics_since(days: int) -> date:
        """The first day (UTC) of the last ``days`` days, today included."""
        if not 1 <= days <= MAX_STATISTICS_DAYS:
            raise UnacceptableError(f"days is 1 to {MAX_STATISTICS_DAYS}, not {days}")
        return now().date() - timedelta(days=days - 1)

    def search(
        self, by: Literal["urn", "url", "title"], text: str, cursor: int = 0, limit: int = 20
    ) -> tuple[list[Record], int | None]:
        """Records found by URN (its equivalents: one or none), by the URL of a location
        (reverse lookup) or by a case-insensitive part of their ``metadata.title``, a page at a
        time; the cursor of the next page. :class:`InvalidURNError` (saying where) when a URN
        searched for is not one.

        >>> Service(Store("sqlite://")).search("title", "a\\x00b")
        Traceback (most recent call last):
        ...
        urnkit.resolver.domain.UnacceptableError: the title searched for holds a control character at position 1
        """  # noqa: E501
        if not text:
            raise UnacceptableError(f"the {by} searched for is empty")
        for position, character in enumerate(text):
            if unicodedata.category(character) == "Cc":
                raise UnacceptableError(
                    f"the {by} searched for holds a control character at position {position}",
                    position=position,
                )
        if by != "urn":
            return self.records(None, cursor, limit, **{by: text})
        try:
            return [self.get(text)], None
        except NotFoundError:
            return [], None

    # --- link checking ---------------------------------------------------------------------------

    def link_states(self, urls: Iterable[str]) -> dict[str, LinkState]:
        """What link checking knows of each of ``urls`` (those it has seen), by URL."""
        with self.store.snapshot() as tx:
            return tx.links.states(urls)

    def broken_links(self, owner: str | None = None) -> list[BrokenLink]:
        """The locations whose links are broken, of ``owner``'s locations if given (the
        organisation that registered the location), by owner and URN."""
        with self.store.snapshot() as tx:
            if owner is not None and tx.organisations.id(owner) is None:
                raise NotFoundError(f"no organisation is called {owner!r}")
            return tx.links.broken(owner)

    def broken_links_for(
        self, principal: Principal, owner: str | None
    ) -> tuple[str | None, list[BrokenLink]]:
        """:meth:`broken_links` as ``principal`` may see them: a registrant its own
        organisation's (the default), an admin any organisation's, or all (no ``owner``); the
        owner they are of (None: all) with them."""
        if principal.role != "admin":
            if owner not in (None, principal.organisation):
                raise ForbiddenError(
                    f"a registrant token of {principal.organisation!r} sees only its own "
                    f"organisation's broken links, not {owner!r}'s"
                )
            owner = principal.organisation
        return owner, self.broken_links(owner)

    # --- forwarding to national resolvers (RFC 8458 §4.4) ---------------------------------------

    def _forward(self, urn: URN) -> Resolution:
        """The answer for a URN not registered here: a redirect to its country's resolver when
        no prefix delegated here covers it and the forwarding table has its country, else to
        the resolver DNS discovery finds (if enabled); else :class:`NotFoundError`."""
        unknown = f"no URN equivalent to {urn.assigned_name} is registered here"
        prefix = None
        if urn.nid.lower() == "nbn":
            with suppress(UnacceptableError):  # no country: nothing to forward by
                prefix = prefix_of(urn)
        if prefix is not None:
            country = prefix.partition(":")[0]
            with self.store.snapshot() as tx:
                own = [p for p, _, _ in tx.organisations.prefixes() if covers(p, prefix)]
                entries = [] if own else tx.forwarding.entries(country)
            if own:  # under an own prefix: unknown here means unknown
                raise NotFoundError(unknown, prefix=own[-1])
            if entries:
                return self._forwarded(urn, forward_url(entries[0].url_template, urn.assigned_name))
        target = self.discovery.uri(urn.assigned_name) if self.discovery is not None else None
        if target is not None:
            return self._forwarded(urn, target)
        if prefix is None:
            raise NotFoundError(unknown)
        found_by = "; DNS discovery found none" if self.discovery is not None else ""
        raise NotFoundError(
            f"{unknown}, and no resolver is known for the country {country!r}{found_by} "
            "(RFC 8458 §4.4)",
            country=country,
        )

    @staticmethod
    def _forwarded(urn: URN, target: str) -> Resolution:
        """A redirect to another resolver; the q-component travels as to a location."""
        return Resolution("redirect", urn, with_q_component(target, urn.q_component or ""))

    def forwardings(self) -> list[Forwarding]:
        """The forwarding table, by country."""
        with self.store.snapshot() as tx:
            return tx.forwarding.entries()

    def set_forwarding(
        self, country: str, url_template: str, note: str | None = None
    ) -> tuple[Forwarding, bool]:
        """Create or replace a country's resolver; the row and True when it was created."""
        country = normalize_country(country)
        url_template = check_template(url_template)
        if note is not None and (len(note) > 1000 or not note.isprintable()):
            raise UnacceptableError("a note is at most 1,000 printable characters")
        with self.store.transaction() as tx:
            created = tx.forwarding.put(country, url_template, note or None)
            [entry] = tx.forwarding.entries(country)
        return entry, created

    def remove_forwarding(self, country: str) -> None:
        """Remove a country's row: its URN:NBNs are no longer forwarded."""
        country = normalize_country(country)
        with self.store.transaction() as tx:
            if not tx.forwarding.remove(country):
                raise NotFoundError(f"the forwarding table has no row for {country!r}")

    def check_forwarding(
        self, countries: Sequence[str] = (), timeout: float = 10.0
    ) -> list[Forwarding]:
        """HEAD the resolvers of ``countries`` (default: every one) at once and record what each
        answered; their rows as they are after."""
        chosen = {normalize_country(country) for country in countries}
        entries = [e for e in self.forwardings() if not chosen or e.country in chosen]
        missing = chosen - {entry.country for entry in entries}
        if missing:
            raise NotFoundError(f"the forwarding table has no row for {', '.join(sorted(missing))}")
        outcomes = asyncio.run(probe_all(entries, timeout))
        moment = now()
        with self.store.transaction() as tx:
            for entry, (health, detail) in zip(entries, outcomes, strict=True):
                tx.forwarding.record_health(entry.country, health, detail, moment)
        return [e for e in self.forwardings() if not chosen or e.country in chosen]


def _read_ahead(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """``items``, produced by a thread up to ``depth`` ahead of the consumer; an exception
    the producer meets is raised in the consumer, at its place in the sequence.

    >>> list(_read_ahead(iter(range(5))))
    [0, 1, 2, 3, 4]
    """
    ahead: queue.Queue[tuple[bool, Any]] = queue.Queue(depth)
    stop = threading.Event()

    def hand_over(entry: tuple[bool, Any]) -> bool:
        """Queue ``entry`` unless the consumer has stopped; whether it was queued."""
        while not stop.is_set():
            try:
                ahead.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not hand_over((True, item)):
                    return
            hand_over((False, None))
        except BaseException as error:  # handed to the consumer, raised there
            hand_over((False, error))
        finally:
            if isinstance(items, Generator):
                items.close()  # its cleanup runs now, not when collected

    producer = threading.Thread(target=produce, name="urnkit-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            more, item = ahead.get()
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        producer.join()


@dataclass(frozen=True, slots=True)
class _ImportBatch:
    """A batch of import rows made ready for the database: ``size`` rows, the keys of its
    records that name successors, and either the records staged for PostgreSQL or the records
    and their documents."""

    size: int
    succeeding: list[str]
    records: list[Record] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)
    staged: StagedImport | None = None


def _import_batch(
    owner: str | None,
    delegated: Sequence[tuple[str, str]],
    owner_ids: Mapping[str, int],
    postgresql: bool,
    batch: Sequence[Mapping[str, Any]],
) -> _ImportBatch:
    """Import rows made ready for the database (see :meth:`Service.import_records`)."""
    records: dict[str, Record] = {}
    for row in batch:
        record = _imported_record(row, owner, delegated)
        records.setdefault(record.key, record)
    fresh = list(records.values())
    documents = [record_json(r) for r in fresh]
    succeeding = [r.key for r in fresh if r.successors]
    if postgresql:  # staged here, outside the transaction: see BulkImport.import_staged
        return _ImportBatch(
            len(batch), succeeding, staged=stage_import(fresh, owner_ids, documents)
        )
    return _ImportBatch(len(batch), succeeding, fresh, documents)


_SENDER_FAILED = "the rows failed"  # the sender's word to the child and back


def _made_elsewhere(
    make: Callable[[list[Mapping[str, Any]]], _ImportBatch],
    first: list[Mapping[str, Any]],
    batches: Iterator[list[Mapping[str, Any]]],
) -> Generator[_ImportBatch, None, None]:
    """``make`` of ``first``, made here while a child Python process starts, then of each of
    ``batches``, in order, made by the child while a thread here sends it the batches. An
    exception either side meets is raised here, at its place in the sequence. The child ends
    when this process does, even by ``kill -9``: its pipes close.

    A plain subprocess, not multiprocessing: its spawn imports the caller's main module again
    (a script without a ``__main__`` guard would import twice), and fork is unsafe in a process
    running threads."""
    if os.name != "posix" or not sys.executable:  # no pass_fds, or no Python to run
        yield make(first)
        yield from map(make, batches)
        return
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CHILD,
                str(to_child_read),
                str(from_child_write),
                json.dumps([str(p) for p in sys.path]),  # what this process imports from
            ],
            pass_fds=(to_child_read, from_child_write),
            stdin=subprocess.DEVNULL,
        )
    except OSError:
        os.close(to_child_write)
        os.close(from_child_read)
        yield make(first)
        yield from map(make, batches)
        return
    finally:
        os.close(to_child_read)
        os.close(from_child_write)
    to_child = multiprocessing.connection.Connection(to_child_write, readable=False)
    from_child = multiprocessing.connection.Connection(from_child_read, writable=False)
    failed: list[BaseException] = []

    def send() -> None:
        try:
            to_child.send(make)
            for batch in batches:
                to_child.send(batch)
            to_child.send(None)
        except OSError:
            return  # the child has gone: the consumer stopped, or it failed and said why
        except BaseException as error:  # raised in the consumer when the child says so
            failed.append(error)
            with suppress(OSError):
                to_child.send(_SENDER_FAILED)

    sender = threading.Thread(target=send, name="urnkit-import-sender", daemon=True)
    sender.start()
    try:
        yield make(first)
        while True:
            try:
                item = from_child.recv()
            except EOFError:
                code = child.wait()
                raise RuntimeError(f"the import's child process ended (exit {code})") from None
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            if item == _SENDER_FAILED:
                raise failed[0]
            yield item
    finally:
        child.kill()  # nothing of it is needed any more; the sender's pipe breaks
        child.wait()
        sender.join()
        to_child.close()
        from_child.close()


_CHILD = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[3]); "
    "from multiprocessing.connection import Connection; "
    "from urnkit.resolver.service import _make_batches; "
    "_make_batches(Connection(int(sys.argv[1]), writable=False), "
    "Connection(int(sys.argv[2]), readable=False))"
)


def _make_batches(
    inbox: multiprocessing.connection.Connection,
    outbox: multiprocessing.connection.Connection,
) -> None:
    """The child process of :func:`_made_elsewhere`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends this
    # Reference counting frees what a batch leaves (no cycles); the cycle collector's passes
    # over each batch's objects took a third of the time (31 -> 22 µs a row).
    gc.disable()
    with suppress(EOFError, OSError):
        make = inbox.recv()
        while (item := inbox.recv()) is not None:
            if item == _SENDER_FAILED:
                outbox.send(item)
                return
            try:
                made: _ImportBatch | BaseException = make(item)
            except Exception as error:
                made = error
            try:
                outbox.send(made)
            except Exception:  # what cannot be pickled
                outbox.send(RuntimeError(repr(made)))
            if isinstance(made, BaseException):
                return
        outbox.send(None)


def _batches(rows: Iterable[Mapping[str, Any]], size: int) -> Iterator[list[Mapping[str, Any]]]:
    batch: list[Mapping[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _imported_record(
    row: Mapping[str, Any], owner: str | None, delegated: Sequence[tuple[str, str]]
) -> Record:
    """A record from an import row, owned by ``owner`` or by the holder of the longest
    delegated prefix covering it; :class:`UnacceptableError` naming the URN when it is unfit."""
    text = str(row.get("urn", ""))
    try:
        urn = parse_urn(text)
    except InvalidURNError as error:
        error.detail = f"{text!r} is not a URN: {error.extensions['explanation']}"
        raise
    status: Status = row.get("status") or "active"
    if status not in ("reserved", "active", "deactivated"):
        raise UnacceptableError(f"{text}: unknown status {status!r}")
    try:
        found = check_locations(
            [
                Location(**loc) if isinstance(loc, Mapping) else loc
                for loc in row.get("locations") or []
            ]
        )
    except TypeError as error:
        raise UnacceptableError(f"{text}: a location has {error}") from None
    except UnacceptableError as error:
        raise UnacceptableError(f"{text}: {error.detail}") from None
    prefix = prefix_of(urn)
    if owner is None:
        holders = [(p, name) for p, name in delegated if covers(p, prefix)]
        if not holders:
            raise UnacceptableError(
                f"{text}: its prefix {prefix!r} is delegated to no organisation (name --owner)"
            )
        owner = max(holders)[1]
    moment = now()
    return Record(
        urn=urn.assigned_name,
        key=urn.equivalence_key(),
        prefix=prefix,
        status=status,
        owner=owner,
        created=moment,
        updated=moment,
        locations=found,
        metadata=dict(row.get("metadata") or {}),
        successors=tuple(row.get("successors") or ()),
        note=row.get("note") or None,
    )


def link_json(state: LinkState) -> dict[str, Any]:
    """What link checking knows of a URL, as the API shows it."""
    return {
        "url": state.url,
        "status": state.status,
        "http_status": state.http_status,
        "detail": state.detail,
        "failures": state.failures,
        "since": state.since.isoformat(),
        "checked": None if state.checked is None else state.checked.isoformat(),
    }


def broken_link_json(broken: BrokenLink) -> dict[str, Any]:
    """A broken location as the report shows it: its owner, its record's URN, the link's state.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> link = LinkState("https://example.org/x", "broken", 404, "GET 404 Not Found", 1, t, t)
    >>> broken_link_json(BrokenLink("Library", "URN:NBN:fi:lib-1", link))["http_status"]
    404
    """
    return {"owner": broken.owner, "urn": broken.urn} | link_json(broken.link)


def _record_successions(tx: Transaction, keys: Sequence[str]) -> None:
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
