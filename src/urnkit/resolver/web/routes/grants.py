"""``/api/v1/urns/{urn}/grants`` and ``…/locations``: one URN, several institutions' copies.
The owner grants an organisation its own locations on a URN; the grantee (and the owner) then
replaces the locations it holds, and nobody else's."""

from typing import Annotated, Any
from urllib.parse import unquote

from fastapi import APIRouter, Path, Response

from urnkit.resolver.domain import Location
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.grants import Grant
from urnkit.resolver.web.deps import AuthenticatedPrincipal, RawPathRoute, ServiceDep, URNPath
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import GrantsOut, OwnLocationsIn, RecordOut

router = APIRouter(tags=["records"], route_class=RawPathRoute)

# The organisation's name as the raw path has it (RawPathRoute), percent-decoded once.
Organisation = Annotated[
    str, Path(max_length=600, description="The organisation's name, percent-encoded")
]


def grant_json(grant: Grant) -> dict[str, Any]:
    """A grant as the API shows it."""
    return {
        "organisation": grant.organisation,
        "granted": grant.granted.isoformat(),
        "granted_by": grant.granted_by,
    }


@router.get(
    "/api/v1/urns/{urn:path}/grants",
    response_model=GrantsOut,
    responses=problem_responses(400, 404, 422),
)
def grants(urn: URNPath, services: ServiceDep) -> dict[str, Any]:
    """The organisations the owner of a URN lets add and maintain their own locations."""
    record = services.records.get(urn)
    return {"urn": record.urn, "grants": [grant_json(g) for g in services.grants.grants(urn)]}


@router.put(
    "/api/v1/urns/{urn:path}/grants/{organisation}",
    response_model=RecordOut,
    status_code=200,
    responses={201: {"model": RecordOut, "description": "Granted"}}
    | problem_responses(400, 404, 409)
    | AUTHENTICATED,
)
def grant(
    urn: URNPath,
    organisation: Organisation,
    who: AuthenticatedPrincipal,
    response: Response,
    services: ServiceDep,
) -> dict[str, Any]:
    """Let an organisation add and maintain its own locations on a URN (the owner or an admin):
    201 when granted, 200 when it held the grant already."""
    record, granted = services.grants.grant(who, urn, unquote(organisation))
    response.status_code = 201 if granted else 200
    return record_json(record)


@router.delete(
    "/api/v1/urns/{urn:path}/grants/{organisation}",
    response_model=RecordOut,
    responses=problem_responses(400, 404, 409) | AUTHENTICATED,
)
def revoke(
    urn: URNPath, organisation: Organisation, who: AuthenticatedPrincipal, services: ServiceDep
) -> dict[str, Any]:
    """Take a grant back (the owner or an admin). The organisation's locations stay, shown as
    its own; it can no longer change them, the owner may remove them."""
    return record_json(services.grants.revoke(who, urn, unquote(organisation)))


@router.put(
    "/api/v1/urns/{urn:path}/locations",
    response_model=RecordOut,
    responses=problem_responses(400, 404, 409) | AUTHENTICATED,
)
def own_locations(
    urn: URNPath, body: OwnLocationsIn, who: AuthenticatedPrincipal, services: ServiceDep
) -> dict[str, Any]:
    """Replace the locations the caller's organisation holds on a URN (an empty list removes
    them): an organisation granted locations, or the owner. Other organisations' locations,
    the metadata and the status stay as they are."""
    found = [Location(**loc.model_dump()) for loc in body.locations]
    return record_json(services.grants.put_own(who, urn, found))
