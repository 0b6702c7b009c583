"""The resolver's commands: ``serve``, ``db``, ``admin``, ``import``, ``export``, ``links`` and
``oai``.

A thin adapter over :class:`~urnkit.resolver.services.Services`: it reads flags and files, calls
the service, and prints. The server's libraries are imported only when a command runs, so the
core commands work without the ``server`` extra. Example::

    urnkit admin create-org "Demo Library" --database-url sqlite:///demo.db
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any, TextIO

from urnkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Progress, _command, _fail, _jobs

EXPORT_FORMATS = ("ndjson", "csv")
CSV_COLUMNS = ("urn", "status", "locations", "metadata", "successors", "note", "created", "updated")
NOT_INSTALLED = "the resolver needs the server extra: pip install 'urnkit[server]'"


def _settings(args: argparse.Namespace) -> Any:
    """The settings the flags give, over ``URNKIT_*`` variables, over the defaults."""
    from urnkit.resolver.settings import Settings

    base = Settings.from_environment()
    flags = {
        name: getattr(args, name)
        for name in ("database_url", "host", "port", "workers", "server")
        if getattr(args, name, None) is not None
    }
    return dataclasses.replace(base, **flags)


def _services(args: argparse.Namespace, *, upgrade: bool = False) -> Any:
    """The service over the flags' database, its schema checked (or made, with ``upgrade``)."""
    from urnkit.resolver.services import Services
    from urnkit.resolver.store import Store

    store = Store(_settings(args).database_url)
    state = store.schema_state()
    if state == "empty" and upgrade:
        print(f"urnkit: creating the schema in {store.engine.url!r}", file=sys.stderr)
        store.upgrade()
    elif state != "current":
        raise SchemaError(
            f"the database {store.engine.url!r} has "
            + ("no schema" if state == "empty" else "an older schema")
            + ": run 'urnkit db upgrade' first"
        )
    return Services(store)


class SchemaError(Exception):
    """The database's schema is missing or older than this urnkit."""


def _guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run``, with the service's refusals and missing libraries reported as messages."""

    def guarded(args: argparse.Namespace) -> int:
        try:
            from urnkit.resolver.domain import ResolverError
        except ImportError:
            return _fail(NOT_INSTALLED, EXIT_USAGE)
        try:
            return run(args)
        except ResolverError as error:
            return _fail(f"{error.title.lower()}: {error.detail}", EXIT_INVALID)
        except (SchemaError, ValueError, OSError) as error:
            return _fail(str(error), EXIT_USAGE)

    guarded.__name__ = run.__name__
    return guarded


# --- serve and db -------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _services(args, upgrade=True)
    os.environ["URNKIT_DATABASE_URL"] = settings.database_url  # read by every worker process
    print(f"urnkit resolver: open http://{settings.host}:{settings.port}/", flush=True)
    target = "urnkit.resolver.web:app_from_environment"
    if settings.server == "uvicorn":
        import uvicorn

        uvicorn.run(
            target,
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level="warning",
        )
    else:
        from granian.constants import Interfaces
        from granian.log import LogLevels
        from granian.server import Server

        Server(
            target,
            address=settings.host,
            port=settings.port,
            interface=Interfaces.ASGI,
            workers=settings.workers,
            factory=True,
            log_level=LogLevels.warning,
        ).serve()
    return EXIT_OK


def _db_upgrade(args: argparse.Namespace) -> int:
    from urnkit.resolver.store import Store

    store = Store(_settings(args).database_url)
    before = store.schema_state()
    store.upgrade()
    print("schema was current" if before == "current" else "schema upgraded to the newest")
    return EXIT_OK


# --- admin --------------------------------------------------------------------------------------


def _admin_create_org(args: argparse.Namespace) -> int:
    print(_services(args, upgrade=True).admin.create_organisation(args.name))
    return EXIT_OK


def _admin_delegate(args: argparse.Namespace) -> int:
    print(
        _services(args, upgrade=True).admin.delegate(args.organisation, args.prefix, args.generator)
    )
    return EXIT_OK


def _admin_create_token(args: argparse.Namespace) -> int:
    services = _services(args, upgrade=True)
    token = services.admin.create_token(args.organisation, args.role, args.label)
    token_id = services.access.authenticate(token).token_id
    article = "an" if args.role == "admin" else "a"
    print(
        f"{article} {args.role} token for {args.organisation} (id {token_id}, for revoke-token); "
        "it is shown only this once:"
    )
    print(token)
    return EXIT_OK


def _admin_revoke_token(args: argparse.Namespace) -> int:
    _services(args).admin.revoke_token(args.token_id)
    print(f"token {args.token_id} revoked")
    return EXIT_OK


def _forwarding_line(entry: Any) -> str:
    checked = entry.checked.isoformat(timespec="seconds") if entry.checked else "never checked"
    line = f"{entry.country}\t{entry.url_template}\t{entry.health} ({checked})"
    return line + (f"\t{entry.note}" if entry.note else "")


def _admin_forwarding_list(args: argparse.Namespace) -> int:
    for entry in _services(args).forwarding.forwardings():
        print(_forwarding_line(entry))
    return EXIT_OK


def _admin_forwarding_set(args: argparse.Namespace) -> int:
    entry, created = _services(args).forwarding.set_forwarding(
        args.country, args.url_template, args.note
    )
    print(("created\t" if created else "replaced\t") + _forwarding_line(entry))
    return EXIT_OK


def _admin_forwarding_remove(args: argparse.Namespace) -> int:
    _services(args).forwarding.remove_forwarding(args.country)
    print(f"{args.country.lower()} removed: its URN:NBNs are no longer forwarded")
    return EXIT_OK


def _admin_forwarding_check(args: argparse.Namespace) -> int:
    entries = _services(args).forwarding.check_forwarding(args.countries, args.timeout)
    for entry in entries:
        print(f"{entry.country}\t{entry.health}\t{entry.detail}")
    return EXIT_OK if all(entry.health == "up" for entry in entries) else EXIT_INVALID


# --- import and export --------------------------------------------------------------------------


def _format_of(name: str, chosen: str | None) -> str:
    if chosen:
        return chosen
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    raise ValueError(f"cannot tell the format of {name!r} from its name: give --format")


def _json_cell(text: str, line: int, column: str, empty: Any) -> Any:
    if not text.strip():
        return empty
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"line {line}: column {column!r} is not JSON: {error.msg}") from None


def _csv_rows(stream: TextIO) -> Iterator[dict[str, Any]]:
    """Rows of a CSV file: ``urn``, then optional ``status``, ``locations`` (a JSON array) or
    ``url`` (one location), ``metadata`` (a JSON object), ``successors`` (space-separated),
    ``note``."""
    reader = csv.DictReader(stream)
    if reader.fieldnames is None or "urn" not in reader.fieldnames:
        raise ValueError("line 1: a CSV import needs a header row with a 'urn' column")
    for row in reader:
        line = reader.line_num
        locations = _json_cell(row.get("locations") or "", line, "locations", [])
        if row.get("url"):
            locations = [*locations, {"url": row["url"]}]
        yield {
            "urn": row["urn"],
            "status": row.get("status") or None,
            "locations": locations,
            "metadata": _json_cell(row.get("metadata") or "", line, "metadata", {}),
            "successors": (row.get("successors") or "").split(),
            "note": row.get("note") or None,
        }


def _ndjson_rows(stream: TextIO) -> Iterator[dict[str, Any]]:
    """Rows of an NDJSON file: one JSON object a line, as ``urnkit export`` writes them."""
    for line, text in enumerate(stream, 1):
        if not text.strip():
            continue
        row = _json_cell(text, line, "", None)
        if not isinstance(row, dict):
            raise ValueError(f"line {line}: not a JSON object")
        yield row


def _import(args: argparse.Namespace) -> int:
    services = _services(args)
    kind = _format_of(args.file, args.format)
    with open(args.file, "rb") as raw, io.TextIOWrapper(raw, "utf-8", newline="") as stream:
        size = os.fstat(raw.fileno()).st_size
        progress = Progress(sys.stderr, size) if sys.stderr.isatty() else None
        rows = _csv_rows(stream) if kind == "csv" else _ndjson_rows(stream)
        done = {"records": 0, "position": 0}

        def report(imported: int, skipped: int) -> None:
            done["records"] = imported + skipped
            if progress is not None:
                position = raw.tell()
                progress.advance(position - done["position"], imported + skipped - progress.lines)
                done["position"] = position

        try:
            imported, skipped = services.transfer.import_records(
                rows, args.owner, args.batch_size, report
            )
        except BaseException:
            if progress is not None:
                progress.clear()
            print(
                f"urnkit: stopped after {done['records']:,} records in committed batches; "
                "fix the cause and rerun: what is stored is skipped",
                file=sys.stderr,
            )
            raise
        if progress is not None:
            progress.clear()
    print(f"{imported:,} imported, {skipped:,} already present (skipped)")
    return EXIT_OK


def _output(name: str) -> AbstractContextManager[IO[str]]:
    if name == "-":
        return nullcontext(sys.stdout)
    return open(name, "w", encoding="utf-8", newline="")


def _export(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.shapes import record_json

    services = _services(args)
    kind = args.format or (_format_of(args.output, None) if args.output != "-" else "ndjson")
    with _output(args.output) as out:
        writer = csv.writer(out) if kind == "csv" else None
        if writer is not None:
            writer.writerow(CSV_COLUMNS)
        for record in services.transfer.export_records(args.prefix):
            row = record_json(record)
            if writer is None:
                out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            else:
                writer.writerow(_csv_cells(row))
    return EXIT_OK


def _csv_cells(row: Mapping[str, Any]) -> list[str]:
    """A record's CSV cells: JSON for locations and metadata, successors space-separated."""
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    return [
        row["urn"],
        row["status"],
        json.dumps(row["locations"], **compact),  # type: ignore[arg-type]
        json.dumps(row["metadata"], **compact),  # type: ignore[arg-type]
        " ".join(row["successors"]),
        row["note"] or "",
        row["created"],
        row["updated"],
    ]


# --- links --------------------------------------------------------------------------------------

REPORT_FORMATS = ("csv", "json")
REPORT_COLUMNS = (
    "owner",
    "urn",
    "url",
    "status",
    "http_status",
    "detail",
    "failures",
    "since",  # when the link's status last changed
    "checked",  # its last check
)


def _links_check(args: argparse.Namespace) -> int:
    import asyncio
    import time

    from urnkit.resolver.services.link_checker import CheckOptions, Summary, check_round

    if args.timeout <= 0:
        raise ValueError("--timeout must be more than 0 seconds")
    services = _services(args)
    options = CheckOptions(args.concurrency, args.per_host_interval, args.timeout, args.older_than)
    shown = {"width": 0}

    def progress(summary: Summary) -> None:
        rate = summary.checked / max(time.monotonic() - summary.started, 1e-9)
        line = f"{summary.checked:,} checked: {summary.broken:,} broken, "
        line += f"{summary.failing:,} failing, {rate:,.0f}/s"
        sys.stderr.write("\r" + line.ljust(shown["width"]))
        sys.stderr.flush()
        shown["width"] = len(line)

    summary = asyncio.run(
        check_round(services.store, options, progress if sys.stderr.isatty() else None)
    )
    assert summary is not None  # it waited for the lock
    if shown["width"]:
        sys.stderr.write("\r" + " " * shown["width"] + "\r")
    print(summary.line())
    return EXIT_OK


def _links_report(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.shapes import broken_link_json

    found = [broken_link_json(b) for b in _services(args).links.broken_links(args.owner)]
    kind = args.format or ("json" if args.output.lower().endswith(".json") else "csv")
    with _output(args.output) as out:
        if kind == "json":
            report = {"owner": args.owner, "count": len(found), "links": found}
            out.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
            return EXIT_OK
        writer = csv.writer(out)
        writer.writerow(REPORT_COLUMNS)
        for row in found:
            writer.writerow(["" if row[name] is None else row[name] for name in REPORT_COLUMNS])
    return EXIT_OK


def _seconds(text: str) -> float:
    """A duration given on the command line: seconds, 0 or more.

    >>> _seconds("0.5")
    0.5
    """
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more: {text!r}")
    return seconds


def _add_links_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], refused: tuple[str, ...]
) -> None:
    links = _group(commands, "links", "Link checking: which locations are broken.")
    check = _command(
        links,
        _guarded(_links_check),
        "Check every http(s) location URL: HEAD, then GET; record status and history.",
        "A 404 or 410 makes a link broken at once; timeouts, refused connections, 5xx and\n"
        "other answers after 3 failed checks in a row. Resolution skips broken links (to the\n"
        "next location, or to the record's page when none is left) from the moment each\n"
        "batch is stored, and takes them back when they answer again. One round runs at\n"
        "a time on a database: this waits while another (a server's job) runs.",
        refused,
        mode=False,
        group="links",
    )
    check.add_argument(
        "--concurrency", type=_jobs, default=10, help="requests in flight at most (10)"
    )
    check.add_argument(
        "--per-host-interval",
        type=_seconds,
        default=1.0,
        help="seconds between requests to one host, one at a time (1)",
    )
    check.add_argument(
        "--timeout", type=_seconds, default=10.0, help="seconds for a request's answer (10)"
    )
    check.add_argument(
        "--older-than",
        type=_seconds,
        default=0.0,
        help="check only URLs last checked this many seconds ago or earlier (0: all)",
    )
    report = _command(
        links,
        _guarded(_links_report),
        "Report the locations whose links are broken, by owner and URN, as CSV or JSON.",
        "Columns: owner (the organisation that registered the location), urn, url, status,\n"
        "http_status, detail, failures, since (the status changed), checked (last check).",
        refused,
        mode=False,
        group="links",
    )
    report.add_argument("--owner", help="only this organisation's locations")
    report.add_argument(
        "--format", choices=REPORT_FORMATS, help="default: json if -o ends in .json, else csv"
    )
    report.add_argument("-o", "--output", default="-", help="file to write ('-': stdout)")
    for command in (check, report):
        _database_flag(command)


# --- the parsers --------------------------------------------------------------------------------


def _database_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL: sqlite:///urnkit.db (default, or URNKIT_DATABASE_URL), "
        "postgresql+psycopg://user@host/db",
    )


def _group(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    parser = commands.add_parser(name, help=summary, description=summary)
    return parser.add_subparsers(title="commands", metavar="COMMAND", required=True)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve``, ``db``, ``admin``, ``import``, ``export``, ``links`` and ``oai`` to the
    ``urnkit`` parser."""
    refused = (
        "0  done",
        "1  the service refused (the message says why)",
        "2  usage error, a file or database that cannot be used, or no server extra",
    )

    serve = _command(
        commands,
        _guarded(_serve),
        "Run the URN:NBN resolver (RFC 8458 §4.4) and its registration API over HTTP.",
        "Creates the schema in an empty database, refuses an outdated one ('urnkit db\n"
        "upgrade' first), then serves until interrupted. Flags override URNKIT_* variables:\n"
        "URNKIT_DATABASE_URL, URNKIT_HOST, URNKIT_PORT, URNKIT_WORKERS, URNKIT_SERVER.",
        refused,
        mode=False,
    )
    _database_flag(serve)
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=_jobs, help="port to listen on (default 8000)")
    serve.add_argument("--workers", type=_jobs, help="server processes (default 1)")
    serve.add_argument(
        "--server", choices=("uvicorn", "granian"), help="ASGI server (default uvicorn)"
    )

    db = _group(commands, "db", "The resolver's database schema (Alembic migrations).")
    upgrade = _command(
        db,
        _guarded(_db_upgrade),
        "Apply the schema migrations the database lacks.",
        "The only way the schema is made or changed; safe to run again.",
        refused,
        mode=False,
        group="db",
    )
    _database_flag(upgrade)

    admin = _group(commands, "admin", "Organisations, delegated prefixes and API tokens.")
    create_org = _command(
        admin,
        _guarded(_admin_create_org),
        "Create an organisation that can hold prefixes and tokens.",
        "Prints the organisation's name.",
        refused,
        mode=False,
        group="admin",
    )
    create_org.add_argument("name", metavar="NAME")
    delegate = _command(
        admin,
        _guarded(_admin_delegate),
        "Delegate a URN:NBN prefix (country code and sub-namespaces) to an organisation.",
        "PREFIX is written as in RFC 8458 §4.3, e.g. fi:demo; prints its normalized form.",
        refused,
        mode=False,
        group="admin",
    )
    delegate.add_argument("organisation", metavar="ORG")
    delegate.add_argument("prefix", metavar="PREFIX")
    delegate.add_argument(
        "--generator",
        choices=("sequential", "random"),
        default="sequential",
        help="how new NBN strings are made: 1, 2, 3 … or random base-32 with a check character",
    )
    create_token = _command(
        admin,
        _guarded(_admin_create_token),
        "Create an API token for an organisation; the token is the last line of stdout.",
        "The token is stored only hashed: it cannot be shown again.",
        refused,
        mode=False,
        group="admin",
    )
    create_token.add_argument("organisation", metavar="ORG")
    create_token.add_argument("--role", choices=("registrant", "admin"), default="registrant")
    create_token.add_argument("--label", default="", help="a note on what the token is for")
    revoke_token = _command(
        admin,
        _guarded(_admin_revoke_token),
        "Revoke an API token by its id; it stops working at once, in every process.",
        "The id is the token_id the API shows.",
        refused,
        mode=False,
        group="admin",
    )
    revoke_token.add_argument("token_id", metavar="ID", type=int)
    for command in (create_org, delegate, create_token, revoke_token):
        _database_flag(command)
    _add_forwarding_commands(admin, refused)

    import_ = _command(
        commands,
        _guarded(_import),
        "Import URN records from CSV or NDJSON, in transactional batches.",
        "NDJSON: one object a line, {urn, status?, locations, metadata, successors?}, as\n"
        "'urnkit export' writes. CSV: a header row with 'urn' and any of 'status',\n"
        "'locations' (JSON array) or 'url', 'metadata' (JSON object), 'successors'.\n"
        "Each batch commits whole or not at all; URNs already stored are skipped, so\n"
        "rerunning after a failure or a kill completes the import without duplicates.",
        refused,
        mode=False,
    )
    import_.add_argument("file", metavar="FILE")
    import_.add_argument("--format", choices=EXPORT_FORMATS, help="default: from FILE's suffix")
    import_.add_argument(
        "--owner", help="organisation owning every record (default: its prefix's holder)"
    )
    import_.add_argument("--batch-size", type=_jobs, default=5_000, help="records per transaction")
    _database_flag(import_)

    export = _command(
        commands,
        _guarded(_export),
        "Export URN records as NDJSON or CSV, in registration order.",
        "Writes what 'urnkit import' reads back.",
        refused,
        mode=False,
    )
    export.add_argument("--format", choices=EXPORT_FORMATS, help="default: from -o, else ndjson")
    export.add_argument("--prefix", help="only records under this delegated prefix")
    export.add_argument("-o", "--output", default="-", help="file to write ('-': stdout)")
    _database_flag(export)

    _add_links_commands(commands, refused)

    oai = _group(commands, "oai", "OAI-PMH: harvest URN:NBN -> URL mappings from repositories.")
    add_source = _command(
        oai,
        _guarded(_oai_add_source),
        "Add a repository to harvest URN:NBN -> URL mappings from (OAI-PMH 2.0, oai_dc).",
        "Its URNs must fall under ORG's delegated prefixes and its location URLs must fully\n"
        "match RE (a Python regular expression, checked now); --set harvests one set.",
        refused,
        mode=False,
        group="oai",
    )
    add_source.add_argument("name", metavar="NAME")
    add_source.add_argument("--organisation", required=True, metavar="ORG")
    add_source.add_argument("--base-url", required=True, metavar="URL")
    add_source.add_argument("--url-pattern", required=True, metavar="RE")
    add_source.add_argument("--set", dest="set_spec", metavar="SPEC")
    sources = _command(
        oai,
        _guarded(_oai_sources),
        "List the harvest sources, tab-separated.",
        "Columns: name, organisation, base URL, set, URL pattern, the next harvest's from=,\n"
        "when a harvest last succeeded.",
        refused,
        mode=False,
        group="oai",
    )
    harvest = _command(
        oai,
        _guarded(_oai_harvest),
        "Harvest the named sources (all when none is named), from where each last ended.",
        "Prints a summary per source and each refused URN or URL. --full harvests everything\n"
        "again (idempotent: what is already stored is not written again). Exit 1 when a\n"
        "harvest failed (the message names the source and the URL); the others still run.",
        refused,
        mode=False,
        group="oai",
    )
    harvest.add_argument("names", metavar="NAME", nargs="*")
    harvest.add_argument("--full", action="store_true", help="ignore the last harvest's datestamp")
    for command in (add_source, sources, harvest):
        _database_flag(command)


# --- OAI-PMH ------------------------------------------------------------------------------------


def _add_forwarding_commands(
    admin: argparse._SubParsersAction[argparse.ArgumentParser], refused: tuple[str, ...]
) -> None:
    """``urnkit admin forwarding list|set|remove|check``: the national resolvers table."""
    forwarding = _group(
        admin, "forwarding", "National resolvers that foreign URN:NBNs are forwarded to."
    )
    group = "admin_forwarding"
    listing = _command(
        forwarding,
        _guarded(_admin_forwarding_list),
        "List the forwarding table: country, URL template, health, note.",
        "One tab-separated line per country.",
        refused,
        mode=False,
        group=group,
    )
    set_ = _command(
        forwarding,
        _guarded(_admin_forwarding_set),
        "Set a country's national resolver (RFC 8458 §4.4).",
        "URL_TEMPLATE is https with {urn} where the URN goes: https://urn.fi/{urn},\n"
        "https://urn.kb.se/resolve?urn={urn} (in a query the URN is percent-encoded).",
        refused,
        mode=False,
        group=group,
    )
    set_.add_argument("country", metavar="COUNTRY", help="ISO 3166-1 alpha-2, e.g. se")
    set_.add_argument("url_template", metavar="URL_TEMPLATE")
    set_.add_argument("--note", help="e.g. the institution running the resolver")
    remove = _command(
        forwarding,
        _guarded(_admin_forwarding_remove),
        "Remove a country's national resolver: its URN:NBNs are then not found here.",
        "COUNTRY is an ISO 3166-1 alpha-2 code.",
        refused,
        mode=False,
        group=group,
    )
    remove.add_argument("country", metavar="COUNTRY")
    check = _command(
        forwarding,
        _guarded(_admin_forwarding_check),
        "HEAD the national resolvers (every one, or those named) and record which are up.",
        "Any HTTP answer below 500 is up; a 5xx, a timeout or no connection is down.\n"
        "Exits 1 when a resolver is down, so a cron job can alert.",
        ("0  every resolver is up", "1  a resolver is down, or the service refused", refused[2]),
        mode=False,
        group=group,
    )
    check.add_argument("countries", metavar="COUNTRY", nargs="*", help="default: every one")
    check.add_argument(
        "--timeout", type=float, default=10.0, help="seconds for each resolver (default 10)"
    )
    for command in (listing, set_, remove, check):
        _database_flag(command)


def _harvester(args: argparse.Namespace) -> Any:
    from urnkit.resolver.services.harvest import Harvester

    services = _services(args)
    return Harvester(services.store, services.access)


def _oai_add_source(args: argparse.Namespace) -> int:
    source = _harvester(args).add_source(
        args.name, args.organisation, args.base_url, args.url_pattern, args.set_spec
    )
    print(source.name)
    return EXIT_OK


def _oai_sources(args: argparse.Namespace) -> int:
    for source in _harvester(args).sources():
        cells = (
            source.name,
            source.organisation,
            source.base_url,
            source.set_spec or "",
            source.url_pattern,
            source.next_from or "",
            source.harvested.isoformat() if source.harvested else "",
        )
        print("\t".join(cells))
    return EXIT_OK


def _oai_harvest(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.harvest import HarvestError

    harvester = _harvester(args)
    failed = False
    for source in harvester.sources(args.names):
        try:
            report = harvester.harvest(source, full=args.full)
        except HarvestError as error:
            print(f"urnkit: {error.detail}", file=sys.stderr)
            failed = True
            continue
        print(report.summary())
        for refusal in report.refused:
            print(f"  refused: {refusal}")
    return EXIT_INVALID if failed else EXIT_OK
