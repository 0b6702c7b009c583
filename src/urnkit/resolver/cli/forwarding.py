"""``urnkit admin forwarding``: the national resolvers that foreign URN:NBNs are forwarded to
(RFC 8458 §4.4), and their health."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from urnkit.commandline import EXIT_INVALID, EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for

if TYPE_CHECKING:
    from urnkit.resolver.domain.forwarding import Forwarding


_LIST = Help(
    "List the forwarding table: country, URL template, health, note.",
    "One tab-separated line per country.",
    REFUSED,
)

_SET = Help(
    "Set a country's national resolver (RFC 8458 §4.4).",
    "URL_TEMPLATE is https with {urn} where the URN goes: https://urn.fi/{urn},\n"
    "https://urn.kb.se/resolve?urn={urn} (in a query the URN is percent-encoded).",
    REFUSED,
)

_REMOVE = Help(
    "Remove a country's national resolver: its URN:NBNs are then not found here.",
    "COUNTRY is an ISO 3166-1 alpha-2 code.",
    REFUSED,
)

_CHECK = Help(
    "HEAD the national resolvers (every one, or those named) and record which are up.",
    "Any HTTP answer below 500 is up; a 5xx, a timeout or no connection is down.\n"
    "Exits 1 when a resolver is down, so a cron job can alert.",
    ("0  every resolver is up", "1  a resolver is down, or the service refused", REFUSED[2]),
)


def _line(entry: Forwarding) -> str:
    checked = entry.checked.isoformat(timespec="seconds") if entry.checked else "never checked"
    line = f"{entry.country}\t{entry.url_template}\t{entry.health} ({checked})"
    return line + (f"\t{entry.note}" if entry.note else "")


def _list(args: argparse.Namespace) -> int:
    for entry in services_for(args).forwarding.forwardings():
        print(_line(entry))
    return EXIT_OK


def _set(args: argparse.Namespace) -> int:
    entry, created = services_for(args).forwarding.set_forwarding(
        args.country, args.url_template, args.note
    )
    print(("created\t" if created else "replaced\t") + _line(entry))
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    services_for(args).forwarding.remove_forwarding(args.country)
    print(f"{args.country.lower()} removed: its URN:NBNs are no longer forwarded")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    entries = services_for(args).forwarding.check_forwarding(args.countries, args.timeout)
    for entry in entries:
        print(f"{entry.country}\t{entry.health}\t{entry.detail}")
    return EXIT_OK if all(entry.health == "up" for entry in entries) else EXIT_INVALID


def add_commands(admin: Commands) -> None:
    """Add ``forwarding`` and its commands, ``list``, ``set``, ``remove`` and ``check``, to
    ``admin``'s."""
    forwarding = group(
        admin, "forwarding", "National resolvers that foreign URN:NBNs are forwarded to."
    )
    listing = add(forwarding, "list", _list, _LIST)
    set_ = add(forwarding, "set", _set, _SET)
    set_.add_argument("country", metavar="COUNTRY", help="ISO 3166-1 alpha-2, e.g. se")
    set_.add_argument("url_template", metavar="URL_TEMPLATE")
    set_.add_argument("--note", help="e.g. the institution running the resolver")
    remove = add(forwarding, "remove", _remove, _REMOVE)
    remove.add_argument("country", metavar="COUNTRY")
    check = add(forwarding, "check", _check, _CHECK)
    check.add_argument("countries", metavar="COUNTRY", nargs="*", help="default: every one")
    check.add_argument(
        "--timeout", type=float, default=10.0, help="seconds for each resolver (default 10)"
    )
    database_flag(listing, set_, remove, check)
