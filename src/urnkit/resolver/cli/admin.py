"""``urnkit admin``: organisations, delegated prefixes (RFC 8458 §4.3), API tokens and staff
accounts, grants
of an organisation's own locations on a URN; the forwarding table
(:mod:`urnkit.resolver.cli.forwarding`) and the organisations' networks
(:mod:`urnkit.resolver.cli.networks`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from urnkit.commandline import EXIT_OK, Commands, Help, count, group
from urnkit.resolver.cli import forwarding, networks
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for

if TYPE_CHECKING:
    from urnkit.resolver.domain import Principal

_CREATE_ORG = Help(
    "Create an organisation that can hold prefixes and tokens.",
    "Prints the organisation's name.",
    REFUSED,
)

_DELEGATE = Help(
    "Delegate a URN:NBN prefix (country code and sub-namespaces) to an organisation.",
    "PREFIX is written as in RFC 8458 §4.3, e.g. fi:demo; prints its normalized form.",
    REFUSED,
)

_CREATE_TOKEN = Help(
    "Create an API token for an organisation; the token is the last line of stdout.",
    "The token is stored only hashed: it cannot be shown again.",
    REFUSED,
)

_CREATE_USER = Help(
    "Create a staff account of an organisation for the pages under /staff/.",
    "USERNAME may be an e-mail address. The one-time password is the last line of stdout; "
    "it must be changed at the first sign-in.",
    REFUSED,
)

_DISABLE_USER = Help(
    "Disable a staff account: every session of it stops at once, on every server.",
    "USERNAME in any case. The account stays listed; enable-user lets it sign in again.",
    REFUSED,
)

_ENABLE_USER = Help(
    "Enable a disabled staff account: it may sign in again with its password.",
    "USERNAME in any case. Sessions that ended when it was disabled stay ended.",
    REFUSED,
)

_REVOKE_TOKEN = Help(
    "Revoke an API token by its id; it stops working at once, in every process.",
    "The id is the token_id the API shows.",
    REFUSED,
)


_GRANT = Help(
    "Let an organisation add and maintain its own locations on a URN (as its owner would).",
    "The organisation's locations name it; it cannot change the record's metadata, status or "
    "other organisations' locations. History names the command line as the actor.",
    REFUSED,
)

_REVOKE_GRANT = Help(
    "Take back an organisation's grant of its own locations on a URN.",
    "Its locations stay, still naming it: the owner may remove them. History names the "
    "command line as the actor.",
    REFUSED,
)

_GRANTS = Help(
    "List the organisations granted their own locations on a URN.",
    "One line each: the organisation, when granted, and by whom, separated by tabs.",
    REFUSED,
)
_OPERATOR_ACTOR = "command line (urnkit admin)"  # who acts on the command line, in history


def _operator() -> Principal:
    """The operator on the command line: every right of an admin."""
    from urnkit.resolver.domain import Principal

    return Principal("command line", "admin", 0)


def _grant(args: argparse.Namespace) -> int:
    grants = services_for(args).grants
    _, granted = grants.grant(_operator(), args.urn, args.organisation, _OPERATOR_ACTOR)
    held = "granted" if granted else "already held"
    print(f"{args.organisation}: own locations on {args.urn} {held}")
    return EXIT_OK


def _revoke_grant(args: argparse.Namespace) -> int:
    services_for(args).grants.revoke(_operator(), args.urn, args.organisation, _OPERATOR_ACTOR)
    print(f"{args.organisation}: grant on {args.urn} revoked; its locations stay")
    return EXIT_OK


def _grants(args: argparse.Namespace) -> int:
    for grant in services_for(args).grants.grants(args.urn):
        print(f"{grant.organisation}\t{grant.granted.isoformat()}\t{grant.granted_by}")
    return EXIT_OK


def _create_org(args: argparse.Namespace) -> int:
    print(services_for(args, upgrade=True).admin.create_organisation(args.name))
    return EXIT_OK


def _delegate(args: argparse.Namespace) -> int:
    print(
        services_for(args, upgrade=True).admin.delegate(
            args.organisation, args.prefix, args.generator
        )
    )
    return EXIT_OK


def _create_token(args: argparse.Namespace) -> int:
    services = services_for(args, upgrade=True)
    token = services.admin.create_token(args.organisation, args.role, args.label)
    token_id = services.access.authenticate(token).token_id
    article = "an" if args.role == "admin" else "a"
    print(
        f"{article} {args.role} token for {args.organisation} (id {token_id}, for revoke-token); "
        "it is shown only this once:"
    )
    print(token)
    return EXIT_OK


def _create_user(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.accounts import ADMIN

    services = services_for(args, upgrade=True)
    account, password = services.accounts.create(ADMIN, args.organisation, args.username, args.role)
    print(
        f"{account.role} account {account.name} of {account.organisation} (id {account.id}); "
        "its one-time password, shown only this once, to be changed at the first sign-in:"
    )
    print(password)
    return EXIT_OK


def _set_disabled(args: argparse.Namespace, disabled: bool) -> int:
    from urnkit.resolver.services.accounts import ADMIN

    accounts = services_for(args).accounts
    account = accounts.named(ADMIN, args.username)
    accounts.set_disabled(ADMIN, account.id, disabled=disabled)
    state = "disabled: its sessions have ended" if disabled else "enabled"
    print(f"account {account.name} of {account.organisation} (id {account.id}) {state}")
    return EXIT_OK


def _disable_user(args: argparse.Namespace) -> int:
    return _set_disabled(args, disabled=True)


def _enable_user(args: argparse.Namespace) -> int:
    return _set_disabled(args, disabled=False)


def _revoke_token(args: argparse.Namespace) -> int:
    services_for(args).admin.revoke_token(args.token_id)
    print(f"token {args.token_id} revoked")
    return EXIT_OK


def _token_id(text: str) -> int:
    """A token's id as given on the command line: 1 to 2**31 - 1, as the API takes it.

    >>> _token_id("7")
    7
    """
    number = count(text)
    if number > 2**31 - 1:
        raise argparse.ArgumentTypeError(f"no token has an id this large: {text}")
    return number


def add_commands(commands: Commands) -> None:
    """Add ``admin`` and its commands: ``create-org``, ``delegate``, ``create-token``,
    ``create-user``, ``disable-user``, ``enable-user``, ``revoke-token``, ``grant``,
    ``revoke-grant``, ``grants`` and the ``forwarding`` and ``network`` groups."""
    admin = group(commands, "admin", "Organisations, delegated prefixes and API tokens.")
    create_org = add(admin, "create-org", _create_org, _CREATE_ORG)
    create_org.add_argument("name", metavar="NAME")
    delegate = add(admin, "delegate", _delegate, _DELEGATE)
    delegate.add_argument("organisation", metavar="ORG")
    delegate.add_argument("prefix", metavar="PREFIX")
    delegate.add_argument(
        "--generator",
        choices=("sequential", "random"),
        default="sequential",
        help="how new NBN strings are made: 1, 2, 3 … or random base-32 with a check character",
    )
    create_token = add(admin, "create-token", _create_token, _CREATE_TOKEN)
    create_token.add_argument("organisation", metavar="ORG")
    create_token.add_argument("--role", choices=("registrant", "admin"), default="registrant")
    create_token.add_argument("--label", default="", help="a note on what the token is for")
    create_user = add(admin, "create-user", _create_user, _CREATE_USER)
    create_user.add_argument("organisation", metavar="ORG")
    create_user.add_argument("username", metavar="USERNAME")
    create_user.add_argument("--role", choices=("registrant", "admin"), default="registrant")
    disable_user = add(admin, "disable-user", _disable_user, _DISABLE_USER)
    enable_user = add(admin, "enable-user", _enable_user, _ENABLE_USER)
    for parser in (disable_user, enable_user):
        parser.add_argument("username", metavar="USERNAME")
    revoke_token = add(admin, "revoke-token", _revoke_token, _REVOKE_TOKEN)
    revoke_token.add_argument("token_id", metavar="ID", type=_token_id)
    grant = add(admin, "grant", _grant, _GRANT)
    revoke_grant = add(admin, "revoke-grant", _revoke_grant, _REVOKE_GRANT)
    for parser in (grant, revoke_grant):
        parser.add_argument("urn", metavar="URN")
        parser.add_argument("organisation", metavar="ORG")
    grants = add(admin, "grants", _grants, _GRANTS)
    grants.add_argument("urn", metavar="URN")
    database_flag(
        *(create_org, delegate, create_token, create_user, disable_user, enable_user),
        *(revoke_token, grant, revoke_grant, grants),
    )
    forwarding.add_commands(admin)
    networks.add_commands(admin)
