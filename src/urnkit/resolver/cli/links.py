"""``urnkit links check`` and ``links report``: which location URLs are broken, and for whom."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from urnkit.commandline import EXIT_OK, Commands, Help, count, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, output, services_for

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


_CHECK = Help(
    "Check every http(s) location URL: HEAD, then GET; record status and history.",
    "A 404 or 410 makes a link broken at once; timeouts, refused connections, 5xx and\n"
    "other answers after 3 failed checks in a row. Resolution skips broken links (to the\n"
    "next location, or to the record's page when none is left) from the moment each\n"
    "batch is stored, and takes them back when they answer again. Only the public\n"
    "internet is fetched (and the networks fetch_allowed_networks lists): a URL that\n"
    "leads elsewhere is 'refused', with the reason, and not broken. One round runs at\n"
    "a time on a database: this waits while another (a server's job) runs.",
    REFUSED,
)

_REPORT = Help(
    "Report the locations whose links are broken, by owner and URN, as CSV or JSON.",
    "Columns: owner (the organisation that registered the location), urn, url, status,\n"
    "http_status, detail, failures, since (the status changed), checked (last check).",
    REFUSED,
)


def _check(args: argparse.Namespace) -> int:
    import asyncio
    import time

    from urnkit.resolver.services.link_checker import CheckOptions, Summary, check_round

    if args.timeout <= 0:
        raise ValueError("--timeout must be more than 0 seconds")
    services = services_for(args)
    options = CheckOptions(args.concurrency, args.per_host_interval, args.timeout, args.older_than)
    shown = {"width": 0}

    def progress(summary: Summary) -> None:
        rate = summary.checked / max(time.monotonic() - summary.started, 1e-9)
        line = f"{summary.checked:,} checked: {summary.broken:,} broken, "
        line += f"{summary.failing:,} failing, {summary.refused:,} refused, {rate:,.0f}/s"
        sys.stderr.write("\r" + line.ljust(shown["width"]))
        sys.stderr.flush()
        shown["width"] = len(line)

    summary = asyncio.run(
        check_round(
            services.store,
            options,
            services.links.guard,
            progress if sys.stderr.isatty() else None,
        )
    )
    assert summary is not None  # it waited for the lock
    if shown["width"]:
        sys.stderr.write("\r" + " " * shown["width"] + "\r")
    print(summary.line())
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from urnkit.resolver.representations.shapes import broken_link_json

    found = [broken_link_json(b) for b in services_for(args).links.broken_links(args.owner)]
    kind = args.format or ("json" if args.output.lower().endswith(".json") else "csv")
    with output(args.output) as out:
        if kind == "json":
            report = {"owner": args.owner, "count": len(found), "links": found}
            out.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
            return EXIT_OK
        writer = csv.writer(out)
        writer.writerow(REPORT_COLUMNS)
        for row in found:
            writer.writerow(["" if row[name] is None else row[name] for name in REPORT_COLUMNS])
    return EXIT_OK


MAX_SECONDS = 10**9  # about 31 years: further back than any check, and a date Python can hold


def _seconds(text: str) -> float:
    """A duration given on the command line: seconds, 0 to :data:`MAX_SECONDS`.

    >>> _seconds("0.5")
    0.5
    """
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds from 0 to {MAX_SECONDS:,}: {text!r}"
        )
    return seconds


# The durations ``links check`` takes, in seconds: flag, default, meaning.
_DURATIONS = (
    ("--per-host-interval", 1.0, "seconds between requests to one host, one at a time (1)"),
    ("--timeout", 10.0, "seconds for a request's answer (10)"),
    ("--older-than", 0.0, "check only URLs last checked this many seconds ago or earlier (0: all)"),
)


def add_commands(commands: Commands) -> None:
    """Add ``links`` and its commands, ``check`` and ``report``."""
    links = group(commands, "links", "Link checking: which locations are broken.")
    check = add(links, "check", _check, _CHECK)
    check.add_argument(
        "--concurrency", type=count, default=10, help="requests in flight at most (10)"
    )
    for flag, default, meaning in _DURATIONS:
        check.add_argument(flag, type=_seconds, default=default, help=meaning)
    report = add(links, "report", _report, _REPORT)
    report.add_argument("--owner", help="only this organisation's locations")
    report.add_argument(
        "--format", choices=REPORT_FORMATS, help="default: json if -o ends in .json, else csv"
    )
    report.add_argument("-o", "--output", default="-", help="file to write ('-': stdout)")
    database_flag(check, report)
