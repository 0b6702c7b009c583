"""``urnkit oai``: harvest URN:NBN -> URL mappings from OAI-PMH 2.0 repositories."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from urnkit.commandline import EXIT_INVALID, EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for

if TYPE_CHECKING:
    from urnkit.resolver.services.harvest import Harvester


_ADD_SOURCE = Help(
    "Add a repository to harvest URN:NBN -> URL mappings from (OAI-PMH 2.0).",
    "Its URNs must fall under ORG's delegated prefixes and its location URLs must fully\n"
    "match RE (a Python regular expression, checked now); --set harvests one set;\n"
    "--metadata-prefix is the format read: oai_dc (the default) or epicur (xepicur).",
    REFUSED,
)

_SOURCES = Help(
    "List the harvest sources, tab-separated.",
    "Columns: name, organisation, base URL, set, URL pattern, the next harvest's from=,\n"
    "when a harvest last succeeded, the metadata format harvested.",
    REFUSED,
)

_HARVEST = Help(
    "Harvest the named sources (all when none is named), from where each last ended.",
    "Prints a summary per source and each refused URN or URL. --full harvests everything\n"
    "again (idempotent: what is already stored is not written again). Exit 1 when a\n"
    "harvest failed (the message names the source and the URL); the others still run.",
    REFUSED,
)


def _harvester(args: argparse.Namespace) -> Harvester:
    return services_for(args).harvest


def _add_source(args: argparse.Namespace) -> int:
    source = _harvester(args).add_source(
        args.name,
        args.organisation,
        args.base_url,
        args.url_pattern,
        args.set_spec,
        args.metadata_prefix,
    )
    print(source.name)
    return EXIT_OK


def _sources(args: argparse.Namespace) -> int:
    for source in _harvester(args).sources():
        cells = (
            source.name,
            source.organisation,
            source.base_url,
            source.set_spec or "",
            source.url_pattern,
            source.next_from or "",
            source.harvested.isoformat() if source.harvested else "",
            source.metadata_prefix,
        )
        print("\t".join(cells))
    return EXIT_OK


def _harvest(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.oai_feed import HarvestError

    harvester = _harvester(args)
    failed = False
    for source in harvester.sources(args.names):
        try:
            report = harvester.harvest(source, full=args.full, seconds=args.seconds)
        except HarvestError as error:
            print(f"urnkit: {error.detail}", file=sys.stderr)
            failed = True
            continue
        print(report.summary())
        for refusal in report.refused:
            print(f"  refused: {refusal}")
    return EXIT_INVALID if failed else EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``oai`` and its commands, ``add-source``, ``sources`` and ``harvest``."""
    oai = group(commands, "oai", "OAI-PMH: harvest URN:NBN -> URL mappings from repositories.")
    add_source = add(oai, "add-source", _add_source, _ADD_SOURCE)
    add_source.add_argument("name", metavar="NAME")
    add_source.add_argument("--organisation", required=True, metavar="ORG")
    add_source.add_argument("--base-url", required=True, metavar="URL")
    add_source.add_argument("--url-pattern", required=True, metavar="RE")
    add_source.add_argument("--set", dest="set_spec", metavar="SPEC")
    add_source.add_argument(
        "--metadata-prefix", default="oai_dc", metavar="FORMAT", help="oai_dc (default) or epicur"
    )
    sources = add(oai, "sources", _sources, _SOURCES)
    harvest = add(oai, "harvest", _harvest, _HARVEST)
    harvest.add_argument("names", metavar="NAME", nargs="*")
    harvest.add_argument("--full", action="store_true", help="ignore the last harvest's datestamp")
    harvest.add_argument(
        "--seconds",
        type=float,
        metavar="S",
        help="stop each source's harvest after S seconds; its next harvest resumes there",
    )
    database_flag(add_source, sources, harvest)
