"""Administration (admins only): delegating prefixes, organisations, their tokens and their
networks."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from urnkit.resolver.domain import NETWORK_NAME_PATTERN, Network
from urnkit.resolver.web.deps import AdminPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import (
    DelegateIn,
    NetworkIn,
    NetworkOut,
    OrganisationIn,
    OrganisationOut,
    PrefixOut,
    TokenIn,
    TokenOut,
)

router = APIRouter(tags=["administration"])


@router.post(
    "/api/v1/prefixes",
    response_model=PrefixOut,
    status_code=201,
    responses=problem_responses(400, 404, 409) | AUTHENTICATED,
)
def delegate(body: DelegateIn, _: AdminPrincipal, services: ServiceDep) -> dict[str, str]:
    """Delegate a prefix to an organisation (admin)."""
    prefix = services.admin.delegate(body.organisation, body.prefix, body.generator)
    return {"prefix": prefix, "organisation": body.organisation, "generator": body.generator}


@router.get("/api/v1/organisations", response_model=list[OrganisationOut], responses=AUTHENTICATED)
def organisations(_: AdminPrincipal, services: ServiceDep) -> list[dict[str, str]]:
    """Every organisation (admin)."""
    return [{"name": name} for name in services.admin.organisations()]


@router.post(
    "/api/v1/organisations",
    response_model=OrganisationOut,
    status_code=201,
    responses=problem_responses(400, 409) | AUTHENTICATED,
)
def create_organisation(
    body: OrganisationIn, _: AdminPrincipal, services: ServiceDep
) -> dict[str, str]:
    """Create an organisation (admin)."""
    return {"name": services.admin.create_organisation(body.name)}


@router.post(
    "/api/v1/organisations/{name}/tokens",
    response_model=TokenOut,
    status_code=201,
    responses=problem_responses(400, 404) | AUTHENTICATED,
)
def create_token(
    name: str, body: TokenIn, _: AdminPrincipal, services: ServiceDep
) -> dict[str, str | int]:
    """A new token for an organisation (admin); shown once."""
    token = services.admin.create_token(name, body.role, body.label)
    token_id = services.access.authenticate(token).token_id
    return {"token": token, "token_id": token_id, "organisation": name, "role": body.role}


@router.post(
    "/api/v1/tokens/{token_id}/revoke",
    status_code=204,
    responses=problem_responses(404) | AUTHENTICATED,
)
def revoke_token(
    token_id: Annotated[int, Path(ge=1, le=2**31 - 1)], _: AdminPrincipal, services: ServiceDep
) -> Response:
    """Revoke a token (admin): it stops working at once, in every server process."""
    services.admin.revoke_token(token_id)
    return Response(status_code=204)


NetworkName = Annotated[str, Path(pattern=f"^{NETWORK_NAME_PATTERN}$", examples=["reading-rooms"])]


def _network_json(network: Network) -> dict[str, str | list[str]]:
    return {
        "organisation": network.organisation,
        "name": network.name,
        "ranges": [str(found) for found in network.ranges],
    }


@router.get(
    "/api/v1/organisations/{name}/networks",
    response_model=list[NetworkOut],
    responses=problem_responses(404) | AUTHENTICATED,
)
def networks(name: str, _: AdminPrincipal, services: ServiceDep) -> list[dict[str, Any]]:
    """An organisation's networks (admin), by name."""
    return [_network_json(network) for network in services.networks.networks(name)]


@router.put(
    "/api/v1/organisations/{name}/networks/{network}",
    response_model=NetworkOut,
    responses={201: {"model": NetworkOut, "description": "Created"}}
    | problem_responses(404, 422)
    | AUTHENTICATED,
)
def save_network(
    name: str,
    network: NetworkName,
    body: NetworkIn,
    _: AdminPrincipal,
    services: ServiceDep,
    response: Response,
) -> dict[str, Any]:
    """Create (201) or replace (200) an organisation's network (admin): every server process
    routes by it within its ``network_refresh`` seconds."""
    saved, created = services.networks.save(name, network, body.ranges)
    response.status_code = 201 if created else 200
    return _network_json(saved)


@router.delete(
    "/api/v1/organisations/{name}/networks/{network}",
    status_code=204,
    responses=problem_responses(404, 409) | AUTHENTICATED,
)
def delete_network(
    name: str, network: NetworkName, _: AdminPrincipal, services: ServiceDep
) -> Response:
    """Delete an organisation's network (admin); 409 while locations are restricted to it."""
    services.networks.delete(name, network)
    return Response(status_code=204)
