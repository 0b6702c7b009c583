"""``urnkit db upgrade``: the resolver's database schema, by its Alembic migrations;
``urnkit db check``: stored records that break a rule made after they were stored, and a title
index out of step with the records;
``urnkit db backup`` and ``restore``: a SQLite database copied through the online backup API."""

from __future__ import annotations

import argparse
from pathlib import Path

from urnkit.commandline import EXIT_INVALID, EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for, settings_for

_UPGRADE = Help(
    "Apply the schema migrations the database lacks.",
    "The only way the schema is made or changed; safe to run again.",
    REFUSED,
)


def _upgrade(args: argparse.Namespace) -> int:
    from urnkit.resolver.store import Store

    store = Store(settings_for(args).database_url)
    before = store.schema_state()
    store.upgrade()
    print("schema was current" if before == "current" else "schema upgraded to the newest")
    return EXIT_OK


_CHECK = Help(
    "Report stored URNs that could not be resolved, and a title index out of step.",
    "One line per URN whose NSS holds a '.' or '..' path segment (also as %2E), which HTTP "
    "clients remove before sending a request (RFC 3986 §5.2.4): such URNs are refused now, "
    "but may have been stored before. One line if the title search's index does not agree "
    "with the records' titles (SQLite: FTS5's integrity check, seconds a million records); "
    "--rebuild-title-index builds it again from them first (writes wait meanwhile).",
    (
        "0  every stored URN passes, and the title index agrees",
        "1  some do not, or it does not (one line each on stdout)",
        "2  a database that cannot be used, or no server extra",
    ),
)


def _check(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.records import title_index_disagreement, unresolvable

    services = services_for(args)
    found = list(unresolvable(services.records))
    disagreement = title_index_disagreement(services.store, rebuild=args.rebuild_title_index)
    if disagreement is not None:
        found.append(disagreement)
    for reason in found:
        print(reason)
    return EXIT_INVALID if found else EXIT_OK


_BACKUP = Help(
    "Copy the SQLite database to FILE, safely while servers run; then check the copy.",
    "Through SQLite's online backup API: one consistent snapshot, whatever is being written.\n"
    "The copy is written beside FILE, reopened and checked (integrity, urnkit schema) and only\n"
    "then renamed to FILE. For PostgreSQL use pg_dump (docs/deploy.md).",
    REFUSED,
)
_RESTORE = Help(
    "Replace the SQLite database with the checked copy FILE (stop the servers first).",
    "FILE is checked as a backup is (integrity, urnkit schema), then copied into the database\n"
    "through the backup API; a database that holds records is replaced only with --force.\n"
    "Run 'urnkit db upgrade' afterwards if FILE was made by an older release.",
    REFUSED,
)


def _backup(args: argparse.Namespace) -> int:
    from urnkit.resolver.store import Store
    from urnkit.resolver.store.backup import backup

    copy = backup(Store(settings_for(args).database_url), Path(args.file), force=args.force)
    print(f"backed up {copy.records} records to {copy.path} ({copy.size} bytes, checked)")
    return EXIT_OK


def _restore(args: argparse.Namespace) -> int:
    from urnkit.resolver.store import Store
    from urnkit.resolver.store.backup import restore

    copy = restore(Store(settings_for(args).database_url), Path(args.file), force=args.force)
    print(f"restored {copy.records} records from {args.file} into {copy.path}")
    return EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``db`` and its commands: ``upgrade``, ``check``, ``backup``, ``restore``."""
    db = group(commands, "db", "The resolver's database: schema, checks, backups.")
    upgrade = add(db, "upgrade", _upgrade, _UPGRADE)
    check = add(db, "check", _check, _CHECK)
    copies = add(db, "backup", _backup, _BACKUP), add(db, "restore", _restore, _RESTORE)
    database_flag(upgrade, check, *copies)
    check.add_argument(
        "--rebuild-title-index",
        action="store_true",
        help="build the title search's index again from the records' titles, then check",
    )
    for parser, verb in zip(copies, ("write the copy to", "restore from"), strict=True):
        parser.add_argument("file", metavar="FILE", help=f"the file to {verb}")
        parser.add_argument("--force", action="store_true", help="replace what is there")
