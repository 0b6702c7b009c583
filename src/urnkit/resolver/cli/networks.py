"""``urnkit admin network``: organisations' named networks (address ranges in CIDR notation),
to which their locations may be restricted (docs/resolution.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from urnkit.commandline import EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for

if TYPE_CHECKING:
    from urnkit.resolver.domain import Network


_LIST = Help(
    "List the networks (of ORG, or of every organisation): organisation, name, ranges.",
    "One tab-separated line per network, its ranges separated by spaces.",
    REFUSED,
)

_SET = Help(
    "Create or replace an organisation's network: the address ranges it is made of.",
    "RANGE is an IPv4 or IPv6 address or network in CIDR notation, host bits clear\n"
    "(192.0.2.0/24, 2001:db8::/32). Server processes see the change within their\n"
    "network_refresh seconds (default 10).",
    REFUSED,
)

_REMOVE = Help(
    "Remove an organisation's network; refused while locations are restricted to it.",
    "NAME is the network's name.",
    REFUSED,
)


def _line(network: Network) -> str:
    return f"{network.organisation}\t{network.name}\t{' '.join(map(str, network.ranges))}"


def _list(args: argparse.Namespace) -> int:
    for network in services_for(args).networks.networks(args.organisation):
        print(_line(network))
    return EXIT_OK


def _set(args: argparse.Namespace) -> int:
    network, created = services_for(args).networks.save(args.organisation, args.name, args.ranges)
    print(("created\t" if created else "replaced\t") + _line(network))
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    services_for(args).networks.delete(args.organisation, args.name)
    print(f"{args.organisation}\t{args.name} removed")
    return EXIT_OK


def add_commands(admin: Commands) -> None:
    """Add ``network`` and its commands, ``list``, ``set`` and ``remove``, to ``admin``'s."""
    networks = group(
        admin, "network", "Organisations' networks, which locations may be restricted to."
    )
    listing = add(networks, "list", _list, _LIST)
    listing.add_argument("organisation", metavar="ORG", nargs="?", help="default: every one")
    set_ = add(networks, "set", _set, _SET)
    set_.add_argument("organisation", metavar="ORG")
    set_.add_argument("name", metavar="NAME", help="e.g. reading-rooms")
    set_.add_argument("ranges", metavar="RANGE", nargs="+")
    remove = add(networks, "remove", _remove, _REMOVE)
    remove.add_argument("organisation", metavar="ORG")
    remove.add_argument("name", metavar="NAME")
    database_flag(listing, set_, remove)
