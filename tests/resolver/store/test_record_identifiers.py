"""Migration ``record_identifiers``: the other identifiers of records stored before it are
indexed from their metadata as it is, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa
from store_support import add_organisation, sample_record

from urnkit.resolver.store import Store, record_identifiers, records


def test_upgrading_indexes_the_identifiers_stored_records_carry(empty_store: Store) -> None:
    empty_store.upgrade("harvest_format")  # the revision before record_identifiers
    carried = {
        "urn:nbn:fi:demo-1": {
            "identifiers": ["urn:isbn:0-8044-2957-X", "not a urn", "urn:nbn:fi:demo-9"],
            "local_id": "shelf-1",
        },
        "urn:nbn:fi:demo-2": {"identifiers": "urn:issn:0317-8471", "local_id": "shelf-1"},
        "urn:nbn:fi:demo-3": {"title": "Nothing carried"},
    }
    with empty_store.transaction() as tx:
        organisation_id = add_organisation(tx)
        for urn, metadata in carried.items():
            record_id = tx.records.insert(sample_record(urn), organisation_id)
            # Written as it was stored before the field was checked.
            tx.connection.execute(
                sa.update(records).where(records.c.id == record_id).values(metadata=metadata)
            )
    empty_store.upgrade()
    with empty_store.snapshot() as tx:
        rows = tx.connection.execute(
            sa.select(records.c.urn, record_identifiers.c.key, record_identifiers.c.organisation_id)
            .join(records, records.c.id == record_identifiers.c.record_id)
            .order_by(records.c.urn, record_identifiers.c.key)
        ).all()
    # An ISBN-10 is indexed as its ISBN-13 (RFC 8254 §4); what is no acceptable identifier
    # is left out; a local id claimed twice in an organisation stays with the older record.
    assert [tuple(row) for row in rows] == [
        ("urn:nbn:fi:demo-1", "shelf-1", organisation_id),
        ("urn:nbn:fi:demo-1", "urn:isbn:9780804429573", None),
    ]
    with empty_store.snapshot() as tx:
        assert tx.identifiers.carriers("urn:isbn:9780804429573", 10) == [
            ("urn:nbn:fi:demo-1", None)
        ]
