"""Administration (admins only): delegating prefixes, organisations and their tokens."""

from typing import Annotated

from fastapi import APIRouter, Path, Response

from urnkit.resolver.web.deps import AdminPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import (
    DelegateIn,
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
