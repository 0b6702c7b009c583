"""Which keys each move of resolution's change counter was for, on SQLite:
``resolution_changed_keys``, a row a move, its ``counter`` the value the move gave
``resolution_changes.counter`` and its ``equivalence_key`` the record whose redirect may have
changed (a record updated or deleted: its own key, both when the key itself changed; a
succession written or removed: its successor's, whose redirect names its predecessors). A
server process that sees the counter move forgets the redirects it kept of those keys only
(services/resolution.py, ``KeptRedirects``), where it forgot every one before: one record
updated a second had doubled what a hot key's redirect cost (docs/benchmarks.md).

Only the last ``10000`` moves are held; a move without a row (a restore from backup) or older
than that makes a server forget everything, as before. PostgreSQL keeps no redirect, and gets
nothing.

Revision ID: resolution_changed_keys
Revises: title_word_index
Create Date: 2026-12-07
"""

from alembic import op

revision = "resolution_changed_keys"
down_revision = "title_word_index"
branch_labels = None
depends_on = None

HELD = 10_000  # moves whose keys are held


def _moved(key: str, when: str = "") -> str:
    """A move of the counter for ``key`` (an expression), only if ``when`` (an SQL condition)."""
    where = f" WHERE {when}" if when else ""
    return (
        f"UPDATE resolution_changes SET counter = counter + 1{where};"
        " INSERT INTO resolution_changed_keys (counter, equivalence_key)"
        f" SELECT counter, {key} FROM resolution_changes{where};"
    )


_FORGET = (
    "DELETE FROM resolution_changed_keys"
    f" WHERE counter <= (SELECT counter FROM resolution_changes) - {HELD};"
)
_RECORD_KEY_CHANGED = "NEW.equivalence_key IS NOT OLD.equivalence_key"
_SUCCESSOR_CHANGED = "NEW.successor_key IS NOT OLD.successor_key"
# Each trigger of migration resolution_changes: its event, and its moves now.
_TRIGGERS = {
    "records_resolution_update": (
        "AFTER UPDATE OF status, targets, prefix, restricted, equivalence_key ON records",
        _moved("OLD.equivalence_key") + _moved("NEW.equivalence_key", _RECORD_KEY_CHANGED),
    ),
    "records_resolution_delete": ("AFTER DELETE ON records", _moved("OLD.equivalence_key")),
    "successions_resolution_insert": ("AFTER INSERT ON successions", _moved("NEW.successor_key")),
    "successions_resolution_update": (
        "AFTER UPDATE ON successions",
        _moved("OLD.successor_key") + _moved("NEW.successor_key", _SUCCESSOR_CHANGED),
    ),
    "successions_resolution_delete": ("AFTER DELETE ON successions", _moved("OLD.successor_key")),
}
_BUMP = "UPDATE resolution_changes SET counter = counter + 1;"  # migration resolution_changes'


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE TABLE resolution_changed_keys (counter INTEGER PRIMARY KEY,"
        " equivalence_key TEXT NOT NULL)"
    )
    for name, (event, moves) in _TRIGGERS.items():
        op.execute(f"DROP TRIGGER {name}")
        op.execute(f"CREATE TRIGGER {name} {event} BEGIN {moves} {_FORGET} END")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name, (event, _) in _TRIGGERS.items():
        op.execute(f"DROP TRIGGER {name}")
        op.execute(f"CREATE TRIGGER {name} {event} BEGIN {_BUMP} END")
    op.execute("DROP TABLE resolution_changed_keys")
