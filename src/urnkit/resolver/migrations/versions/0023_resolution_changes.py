"""A change counter for resolution, on SQLite: ``resolution_changes``, one row, its ``counter``
moved by triggers whenever what a redirect answers may change (a record's status, targets,
prefix, restricted locations or key updated, a record deleted, a succession written or
removed), and by a restore from backup. A server process keeps the redirects it gave for as
long as the counter stays (web/front.py). A record inserted needs no bump: only redirects of
records are kept, and a key not registered had none.

PostgreSQL gets no counter: its lookups are batched on a connection of their own, and reading
the counter would cost the round trip the cache would save.

Revision ID: resolution_changes
Revises: staff_sessions
Create Date: 2026-11-28
"""

from alembic import op

revision = "resolution_changes"
down_revision = "staff_sessions"
branch_labels = None
depends_on = None

_BUMP = "UPDATE resolution_changes SET counter = counter + 1;"
_TRIGGERS = {
    "records_resolution_update": (
        "AFTER UPDATE OF status, targets, prefix, restricted, equivalence_key ON records"
    ),
    "records_resolution_delete": "AFTER DELETE ON records",
    "successions_resolution_insert": "AFTER INSERT ON successions",
    "successions_resolution_update": "AFTER UPDATE ON successions",
    "successions_resolution_delete": "AFTER DELETE ON successions",
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE TABLE resolution_changes (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " counter INTEGER NOT NULL)"
    )
    op.execute("INSERT INTO resolution_changes (id, counter) VALUES (1, 0)")
    for name, event in _TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {event} BEGIN {_BUMP} END")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER {name}")
    op.execute("DROP TABLE resolution_changes")
