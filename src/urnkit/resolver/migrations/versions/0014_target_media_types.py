"""Media types on resolution's row: a line of ``records.targets`` (and of
``records.restricted``) is a location's URL, then a tab and its media type when it has one
(``type/subtype``, as ``media_type_of`` reads it), so that a redirect's ``item`` links carry
their ``type`` from the one row resolution reads. A location without a media type is written
as before. The upgrade writes both columns anew for the records having a location with a
media type (the others' do not change); the downgrade strips the media types.

Revision ID: target_media_types
Revises: location_networks
Create Date: 2026-11-25
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

from urnkit.resolver.domain import Location
from urnkit.resolver.store.queries.links import broken_urls, resolution_targets, restricted_targets

revision = "target_media_types"
down_revision = "location_networks"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")
_BATCH = 1_000
_RECORDS = sa.table("records", sa.column("id", _ID), sa.column("targets"), sa.column("restricted"))
_LOCATIONS = sa.table(
    "locations",
    sa.column("id", _ID),
    sa.column("record_id", _ID),
    sa.column("url"),
    sa.column("priority"),
    sa.column("media_type"),
    sa.column("restricted_to"),
    sa.column("owner_id"),
)
_UPDATE = (
    sa.update(_RECORDS)
    .where(_RECORDS.c.id == sa.bindparam("record_id"))
    .values(targets=sa.bindparam("new_targets"), restricted=sa.bindparam("new_restricted"))
)


def upgrade() -> None:
    bind = op.get_bind()
    typed = sa.select(_LOCATIONS.c.record_id).where(_LOCATIONS.c.media_type.is_not(None))
    ids = sorted(set(bind.scalars(typed.distinct())))
    for start in range(0, len(ids), _BATCH):
        batch = ids[start : start + _BATCH]
        found: dict[int, list[tuple[Location, int]]] = {}
        query = (
            sa.select(_LOCATIONS)
            .where(_LOCATIONS.c.record_id.in_(batch))
            .order_by(_LOCATIONS.c.priority, _LOCATIONS.c.id)
        )
        for row in bind.execute(query):
            location = Location(row.url, media_type=row.media_type, restricted_to=row.restricted_to)
            found.setdefault(row.record_id, []).append((location, row.owner_id))
        broken = broken_urls(bind, (loc.url for locs in found.values() for loc, _ in locs))
        bind.execute(
            _UPDATE,
            [
                {
                    "record_id": record_id,
                    "new_targets": resolution_targets([loc for loc, _ in locs], broken),
                    "new_restricted": restricted_targets(locs, broken),
                }
                for record_id, locs in found.items()
            ],
        )


def downgrade() -> None:
    # Targets without a tab have no media type; restricted is NULL on most records.
    bind = op.get_bind()
    query = sa.select(_RECORDS).where(
        sa.or_(_RECORDS.c.targets.contains("\t"), _RECORDS.c.restricted.is_not(None))
    )
    rows: list[dict[str, Any]] = [
        {
            "record_id": row.id,
            "new_targets": _untyped(row.targets, 1),
            "new_restricted": _untyped(row.restricted, 2),
        }
        for row in bind.execute(query)
    ]
    for start in range(0, len(rows), _BATCH):
        bind.execute(_UPDATE, rows[start : start + _BATCH])


def _untyped(text: str | None, fields: int) -> str | None:
    """``text``'s lines, each cut to its first ``fields`` tab-separated fields."""
    if text is None:
        return None
    return "\n".join("\t".join(line.split("\t")[:fields]) for line in text.split("\n"))
