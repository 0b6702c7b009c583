"""Access (``urnkit.resolver.services.access``), in process, on SQLite and PostgreSQL: a
registrant writes only under the prefixes delegated to its organisation and their sub-namespaces
(RFC 8458 §4.3), never under a sibling (``fi:demox`` is not ``fi:demo``); an admin writes
anywhere; a revoked token authenticates no one.
"""

from __future__ import annotations

import pytest
from services_support import HERE, THERE, Principals

from urnkit.resolver.domain import (
    ForbiddenError,
    NotFoundError,
    Principal,
    UnauthenticatedError,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.access import AccessService

# --- authentication and authorization ------------------------------------------------------------


def test_authentication(services: Services, who: Principals) -> None:
    assert who.demo.organisation == "Demo Library"
    assert who.demo.role == "registrant"
    assert (who.admin.organisation, who.admin.role) == ("Other Library", "admin")
    for token in (None, "", "urnkit_unknown", who.demo_token + "x"):
        with pytest.raises(UnauthenticatedError):
            services.access.authenticate(token)


def test_a_revoked_token_authenticates_no_one(services: Services, who: Principals) -> None:
    services.admin.revoke_token(who.demo.token_id)
    with pytest.raises(UnauthenticatedError):
        services.access.authenticate(who.demo_token)
    with pytest.raises(NotFoundError):  # revoked once, for good
        services.admin.revoke_token(who.demo.token_id)
    services.access.authenticate(
        services.admin.create_token("Demo Library")
    )  # the organisation's others work


# (caller, URN, allowed): RFC 8458 §4.3, a national library delegates sub-namespaces; "The
# sub-namespace MAY be further divided by the partner organization", and "Being part of the
# prefix, sub-namespace identifier strings are case-insensitive".
AUTHORIZATION = [
    ("demo", "urn:nbn:fi:demo-1", True),
    ("demo", "URN:NBN:FI:DEMO-2", True),
    ("demo", "urn:nbn:fi:demo:sub-1", True),
    ("demo", "urn:nbn:fi:Demo:sub:deeper-1", True),
    ("demo", "urn:nbn:fi:demox-1", False),  # a sibling prefix, not a sub-namespace
    ("demo", "urn:nbn:fi:dem-1", False),
    ("demo", "urn:nbn:fi-1", False),  # the parent
    ("demo", "urn:nbn:se:demo-1", False),
    ("other", "urn:nbn:fi:demox-1", True),
    ("other", "urn:nbn:fi:demo-1", False),
    ("other", "urn:nbn:fi:demo:x-1", False),
    ("admin", "urn:nbn:fi:demo-1", True),  # an admin writes anywhere
    ("admin", "urn:nbn:se:elsewhere-1", True),
]


def test_authorization_matrix(
    services: Services, who: Principals, subtests: pytest.Subtests
) -> None:
    for number, (caller, urn, allowed) in enumerate(AUTHORIZATION):
        with subtests.test(caller=caller, urn=urn, allowed=allowed):
            # Names of its own for each case: "-1" becomes "-1-0", "-1-1", …
            _check_authorization(services, who, getattr(who, caller), f"{urn}-{number}", allowed)


def _check_authorization(
    services: Services, who: Principals, principal: Principal, urn: str, allowed: bool
) -> None:
    """``principal`` may put ``urn`` and patch or deactivate a record beside it, or none."""
    existing = f"{urn}-existing"
    services.records.put(who.admin, existing, HERE, {"v": 0})
    before = services.records.history(existing)
    if allowed:
        assert services.records.put(principal, urn, HERE, {})[1] is True
        assert services.records.patch(principal, existing, {"metadata": {"v": 1}}).metadata == {
            "v": 1
        }
        assert services.records.deactivate(principal, existing, "gone", []).status == "deactivated"
        assert len(services.records.history(existing)) == len(before) + 2
        return
    with pytest.raises(ForbiddenError):
        services.records.put(principal, urn, HERE, {})
    with pytest.raises(ForbiddenError):
        services.records.put(principal, existing, THERE, {})
    with pytest.raises(ForbiddenError):
        services.records.patch(principal, existing, {"metadata": {"v": 1}})
    with pytest.raises(ForbiddenError):
        services.records.deactivate(principal, existing, "gone", [])
    with pytest.raises(NotFoundError):
        services.records.get(urn)
    assert services.records.history(existing) == before
    assert services.records.get(existing).metadata == {"v": 0}


def test_a_prefix_delegated_on_belongs_to_its_holder(services: Services, who: Principals) -> None:
    # RFC 8458 §4.3: sub-namespaces are delegated further; the longest delegated prefix
    # covering a URN decides who may write it, so fi:demo's holder cannot write under a
    # fi:demo:lab delegated to another organisation.
    services.admin.delegate("Other Library", "fi:demo:lab")
    with pytest.raises(ForbiddenError, match=r"'fi:demo:lab'.*delegated to 'Other Library'"):
        services.records.put(who.demo, "urn:nbn:fi:demo:lab-1", HERE, {})
    record, created = services.records.put(who.other, "urn:nbn:fi:demo:lab-1", HERE, {})
    assert (created, record.owner) == (True, "Other Library")
    assert services.records.put(who.demo, "urn:nbn:fi:demo:other-1", HERE, {})[1]  # the rest stays


def test_generation_is_authorized_too(services: Services, who: Principals) -> None:
    with pytest.raises(ForbiddenError):
        services.records.generate(who.demo, "fi:demox")
    with pytest.raises(ForbiddenError):
        services.records.generate(who.other, "fi:demo")
    assert [r.owner for r in services.records.generate(who.admin, "fi:demo")] == ["Demo Library"]
    with pytest.raises(NotFoundError):
        services.records.generate(who.admin, "se:nowhere")
    with pytest.raises(ForbiddenError):
        AccessService.require_admin(who.demo)
    AccessService.require_admin(who.admin)
