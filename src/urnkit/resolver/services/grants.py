"""Location grants: one URN, several institutions' copies. The owner of a URN (the
organisation its prefix is delegated to, or an admin) grants another organisation the right to
add and maintain its own locations on it; each location names the organisation holding it.

- A grantee writes only its own locations (:meth:`GrantService.put_own`), never another
  organisation's, the metadata, the status, or the grants.
- The owner writes the whole list (``PUT``/``PATCH`` of the record): it orders every
  organisation's locations by priority, and may remove any.
- A revoked grant leaves the grantee's locations where they are (they still resolve and show
  their organisation); the grantee can no longer change them, the owner can remove them.

Every grant, revocation and change is a history entry naming the actor; the record's
``grants`` and each location's ``organisation`` are in its documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from urnkit.resolver.domain import (
    ConflictError,
    ForbiddenError,
    Location,
    NotFoundError,
    Principal,
    Record,
    UnacceptableError,
    parse_urn,
    prefix_of,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.access import AccessService
from urnkit.resolver.services.admin import organisation_id
from urnkit.resolver.services.locations import (
    LocationEdit,
    held_as_stored,
    with_own_locations,
)
from urnkit.resolver.services.records import actor_of, check_restrictions
from urnkit.resolver.store import Store, Transaction, now


@dataclass(frozen=True, slots=True)
class Grant:
    """An organisation's right to its own locations on a record: when, and who granted it."""

    organisation: str
    granted: datetime
    granted_by: str


class GrantService:
    """Grants of locations on a record, and the grantees' own locations."""

    def __init__(self, store: Store, access: AccessService) -> None:
        self.store = store
        self.access = access

    def grants(self, text: str) -> list[Grant]:
        """The grants on the record of a URN (any equivalent spelling), by organisation."""
        key = parse_urn(text).equivalence_key()
        with self.store.snapshot() as tx:
            record_id = tx.records.id(key)
            if record_id is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            return [Grant(*row) for row in tx.grants.of_record(record_id)]

    def grant(
        self, principal: Principal, text: str, organisation: str, actor: str | None = None
    ) -> tuple[Record, bool]:
        """Grant ``organisation`` its own locations on a URN (the owner only); True when the
        grant is new (granting again changes nothing). History names ``actor``, by default
        the principal's organisation and token."""
        with self.store.transaction() as tx:
            record_id, current = self._owned(tx, principal, text)
            holder_id = organisation_id(tx, organisation)
            if organisation == current.owner:
                raise UnacceptableError(
                    f"{organisation!r} owns {current.urn}: an owner holds its locations "
                    "without a grant"
                )
            if organisation in current.grants:
                return current, False
            record = replace(
                current, grants=tuple(sorted({*current.grants, organisation})), updated=now()
            )
            actor = actor or actor_of(principal)
            tx.records.update(record_id, record, record_json(current), "granted", actor)
            tx.grants.grant(record_id, holder_id, record.updated, actor)
            return record, True

    def revoke(
        self, principal: Principal, text: str, organisation: str, actor: str | None = None
    ) -> Record:
        """Take back ``organisation``'s grant on a URN (the owner only). Its locations stay:
        they still resolve, and the owner may remove them. History names ``actor`` (as
        :meth:`grant`)."""
        with self.store.transaction() as tx:
            record_id, current = self._owned(tx, principal, text)
            holder_id = organisation_id(tx, organisation)
            if organisation not in current.grants:
                raise NotFoundError(f"{organisation!r} holds no grant on {current.urn}")
            grants = tuple(name for name in current.grants if name != organisation)
            record = replace(current, grants=grants, updated=now())
            actor = actor or actor_of(principal)
            tx.records.update(record_id, record, record_json(current), "revoked", actor)
            tx.grants.revoke(record_id, holder_id)
            return record

    def put_own(self, principal: Principal, text: str, found: Sequence[Location]) -> Record:
        """Replace the locations the principal's organisation holds on a URN with ``found``
        (none removes them), leaving every other organisation's as they are. The owner and
        the organisations it granted locations may; nobody else."""
        urn = parse_urn(text)
        key = urn.equivalence_key()
        with self.store.transaction() as tx:
            record_id = tx.records.id(key, for_update=True)
            current = tx.records.get(key)
            if record_id is None or current is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            if principal.organisation not in current.grants:
                try:
                    self.access.authorize(tx, principal, prefix_of(urn))
                except ForbiddenError as error:
                    error.detail = (
                        f"{principal.organisation!r} holds no grant to add locations to "
                        f"{current.urn}; its owner, {current.owner!r}, may grant one "
                        f"(PUT /api/v1/urns/{current.urn}/grants/{principal.organisation})"
                    )
                    raise
            _writable(current)
            held = with_own_locations(current.locations, principal.organisation, found)
            check_restrictions(tx, principal.organisation, held)
            record = replace(current, locations=held, updated=now())
            actor = actor_of(principal)
            tx.records.update(record_id, record, record_json(current), "own locations", actor)
            return record

    def edit_locations(self, principal: Principal, text: str, edit: LocationEdit) -> Record:
        """Make one change (:class:`LocationEdit`) to a record's locations, as the staff pages
        do: the owner (or an admin) changes the whole list, as ``PATCH`` does (history:
        ``patched``); an organisation holding a grant adds and removes only its own, and does
        not move any, since only the owner orders priorities (history: ``own locations``, as
        ``PUT …/locations``). Anyone else is refused as those are."""
        urn = parse_urn(text)
        key = urn.equivalence_key()
        with self.store.transaction() as tx:
            record_id = tx.records.id(key, for_update=True)
            current = tx.records.get(key)
            if record_id is None or current is None:
                raise NotFoundError(f"no URN equivalent to {text} is registered here")
            grantee = principal.organisation in current.grants
            try:
                self.access.authorize_owner(tx, principal, prefix_of(urn), record_id, str(urn))
                grantee = False
            except ForbiddenError:
                if not grantee or edit.kind in ("up", "down"):
                    raise
            _writable(current)
            if grantee:
                own = [x for x in current.locations if x.organisation == principal.organisation]
                held = with_own_locations(
                    current.locations, principal.organisation, edit.applied(own)
                )
                check_restrictions(tx, principal.organisation, held)
            else:
                held = held_as_stored(
                    current.locations, edit.applied(current.locations), current.owner
                )
                check_restrictions(tx, current.owner, held)
            record = replace(current, locations=held, updated=now())
            action = "own locations" if grantee else "patched"
            tx.records.update(record_id, record, record_json(current), action, actor_of(principal))
            return record

    def _owned(self, tx: Transaction, principal: Principal, text: str) -> tuple[int, Record]:
        """The row id and record of a URN whose grants the principal may change."""
        urn = parse_urn(text)
        key = urn.equivalence_key()
        record_id = tx.records.id(key, for_update=True)
        self.access.authorize_owner(tx, principal, prefix_of(urn), record_id, str(urn))
        current = tx.records.get(key)
        if record_id is None or current is None:
            raise NotFoundError(f"no URN equivalent to {text} is registered here")
        _writable(current)
        return record_id, current


def _writable(record: Record) -> None:
    """:class:`ConflictError` for a deactivated record, which is not written again."""
    if record.status == "deactivated":
        raise ConflictError(f"{record.urn} is deactivated; a deactivated URN is not written")
