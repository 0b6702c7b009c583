"""The resolver's domain: records, names, principals and the pure rules, with no I/O.

* :mod:`~urnkit.resolver.domain.records`: records, locations and their history; how a
  q-component reaches a locator and how a JSON merge patch applies.
* :mod:`~urnkit.resolver.domain.names`: URN:NBN names, delegated prefixes, what may be
  registered, and new names.
* :mod:`~urnkit.resolver.domain.principals`: who calls, with which role.
* :mod:`~urnkit.resolver.domain.accounts`: staff accounts, their names and passwords.
* :mod:`~urnkit.resolver.domain.networks`: organisations' networks, who may read a location
  restricted to one.
* :mod:`~urnkit.resolver.domain.changes`: what each change in a record's history changed.
* :mod:`~urnkit.resolver.domain.links`: when a location's link is broken.
* :mod:`~urnkit.resolver.domain.harvest`: the OAI-PMH repositories harvested.
* :mod:`~urnkit.resolver.domain.acceptance`: what the service accepts (values both
  databases give back exactly; the limits of depth, size and URN length).
* :mod:`~urnkit.resolver.domain.identifiers`: the other identifiers a record carries
  (``metadata.identifiers``, ``metadata.local_id``).
* :mod:`~urnkit.resolver.domain.errors`: the refusals, each with its RFC 9457 problem.
* :mod:`~urnkit.resolver.domain.descriptions`: what RFC 2483's answers know of a URN.

The names of all but the last are importable from here. The outward formats (Dublin Core,
epicur, JSON, linksets, …) are :mod:`~urnkit.resolver.representations`.

>>> from urnkit.resolver.domain import prefix_of
>>> prefix_of("URN:NBN:FI:Demo-123")
'fi:demo'
"""

from urnkit.resolver.domain.acceptance import (
    MAX_DEPTH,
    MAX_METADATA_BYTES,
    MAX_URN_LENGTH,
    Violation,
    acceptable,
    check_json,
    check_record,
    check_urn_length,
    json_pointer,
    printable,
    violations,
)
from urnkit.resolver.domain.accounts import (
    DEFAULT_HASHING,
    Account,
    PasswordHashing,
    SignInLimits,
    TooManyAttemptsError,
    check_password,
    check_user_name,
    name_key,
)
from urnkit.resolver.domain.changes import Change, Difference, changes, differences
from urnkit.resolver.domain.errors import (
    ConflictError,
    ForbiddenError,
    InvalidURNError,
    NotAcceptableError,
    NotFoundError,
    PastedURNError,
    ResolverError,
    UnacceptableError,
    UnacceptableInputError,
    UnauthenticatedError,
    UnavailableError,
    concerning,
)
from urnkit.resolver.domain.harvest import HarvestRun, HarvestSource
from urnkit.resolver.domain.identifiers import (
    carries_identifiers,
    check_identifiers,
    identifier_key,
    identifier_keys,
    is_identifier,
    local_id,
)
from urnkit.resolver.domain.links import (
    FAILURES_TO_BREAK,
    BrokenLink,
    LinkCheck,
    LinkState,
    LinkStatus,
    Verdict,
    link_verdict,
    next_link_state,
)
from urnkit.resolver.domain.names import (
    ASSIGNED_NAME_PATTERN,
    BASE32,
    COUNTRY_PATTERN,
    DNB_COUNTRIES,
    GENERATORS,
    PREFIX_PATTERN,
    RANDOM_LENGTH,
    Generator,
    assigned_name,
    check_registrable,
    check_resolvable,
    check_rewritable,
    covers,
    dot_segments,
    normalize_prefix,
    parse_urn,
    prefix_of,
    random_nbn_string,
    sequential_nbn_string,
)
from urnkit.resolver.domain.networks import (
    NETWORK_NAME_PATTERN,
    PUBLIC,
    Network,
    Reader,
    address_class,
    check_network_name,
    client_address,
    fetch_refusal,
    inside,
    listed_networks,
    parse_ranges,
    refused_as,
    shown,
    shown_document,
    withheld,
)
from urnkit.resolver.domain.principals import ROLES, Principal, Role, Token
from urnkit.resolver.domain.records import (
    STATUSES,
    HistoryEntry,
    Location,
    Record,
    Status,
    media_type_of,
    merge_patch,
    read_targets,
    target_line,
    with_q_component,
)

# The refusals are public here: tracebacks and doctests name them urnkit.resolver.domain.X.
for _error in (
    ResolverError,
    InvalidURNError,
    UnacceptableError,
    UnacceptableInputError,
    UnauthenticatedError,
    ForbiddenError,
    NotFoundError,
    ConflictError,
    NotAcceptableError,
    TooManyAttemptsError,
    UnavailableError,
):
    _error.__module__ = __name__

__all__ = [
    "ASSIGNED_NAME_PATTERN",
    "BASE32",
    "COUNTRY_PATTERN",
    "DEFAULT_HASHING",
    "DNB_COUNTRIES",
    "FAILURES_TO_BREAK",
    "GENERATORS",
    "MAX_DEPTH",
    "MAX_METADATA_BYTES",
    "MAX_URN_LENGTH",
    "NETWORK_NAME_PATTERN",
    "PREFIX_PATTERN",
    "PUBLIC",
    "RANDOM_LENGTH",
    "ROLES",
    "STATUSES",
    "Account",
    "BrokenLink",
    "Change",
    "ConflictError",
    "Difference",
    "ForbiddenError",
    "Generator",
    "HarvestRun",
    "HarvestSource",
    "HistoryEntry",
    "InvalidURNError",
    "LinkCheck",
    "LinkState",
    "LinkStatus",
    "Location",
    "Network",
    "NotAcceptableError",
    "NotFoundError",
    "PasswordHashing",
    "PastedURNError",
    "Principal",
    "Reader",
    "Record",
    "ResolverError",
    "Role",
    "SignInLimits",
    "Status",
    "Token",
    "TooManyAttemptsError",
    "UnacceptableError",
    "UnacceptableInputError",
    "UnauthenticatedError",
    "UnavailableError",
    "Verdict",
    "Violation",
    "acceptable",
    "address_class",
    "assigned_name",
    "carries_identifiers",
    "changes",
    "check_identifiers",
    "check_json",
    "check_network_name",
    "check_password",
    "check_record",
    "check_registrable",
    "check_resolvable",
    "check_rewritable",
    "check_urn_length",
    "check_user_name",
    "client_address",
    "concerning",
    "covers",
    "differences",
    "dot_segments",
    "fetch_refusal",
    "identifier_key",
    "identifier_keys",
    "inside",
    "is_identifier",
    "json_pointer",
    "link_verdict",
    "listed_networks",
    "local_id",
    "media_type_of",
    "merge_patch",
    "name_key",
    "next_link_state",
    "normalize_prefix",
    "parse_ranges",
    "parse_urn",
    "prefix_of",
    "printable",
    "random_nbn_string",
    "read_targets",
    "refused_as",
    "sequential_nbn_string",
    "shown",
    "shown_document",
    "target_line",
    "violations",
    "with_q_component",
    "withheld",
]
