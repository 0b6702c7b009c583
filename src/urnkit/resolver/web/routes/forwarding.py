"""``/api/v1/forwarding``: the public table of national resolvers, edited by admins."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from urnkit.resolver.domain import COUNTRY_PATTERN
from urnkit.resolver.representations.shapes import forwarding_json
from urnkit.resolver.web.deps import AdminPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import ForwardingIn, ForwardingOut

router = APIRouter(tags=["forwarding"])
# The pattern is published, not enforced here: the service's refusal says what is wrong.
Country = Annotated[
    str,
    Path(
        min_length=1,
        max_length=10,
        examples=["se"],
        json_schema_extra={"pattern": COUNTRY_PATTERN},
    ),
]


@router.get("/api/v1/forwarding", response_model=list[ForwardingOut])
def list_forwarding(services: ServiceDep) -> list[dict[str, Any]]:
    """Where URN:NBNs of other countries are forwarded (RFC 8458 §4.4), by country."""
    return [forwarding_json(entry) for entry in services.forwarding.forwardings()]


@router.put(
    "/api/v1/forwarding/{country}",
    response_model=ForwardingOut,
    responses={201: {"model": ForwardingOut, "description": "Created"}}
    | problem_responses(400)
    | AUTHENTICATED,
)
def put_forwarding(
    country: Country,
    body: ForwardingIn,
    _: AdminPrincipal,
    response: Response,
    services: ServiceDep,
) -> dict[str, Any]:
    """Create (201) or replace (200) a country's resolver (admin): an https URL template
    with one ``{urn}``, in its path or its query."""
    entry, created = services.forwarding.set_forwarding(country, body.url_template, body.note)
    response.status_code = 201 if created else 200
    return forwarding_json(entry)


@router.delete(
    "/api/v1/forwarding/{country}",
    status_code=204,
    responses=problem_responses(404) | AUTHENTICATED,
)
def delete_forwarding(country: Country, _: AdminPrincipal, services: ServiceDep) -> Response:
    """Remove a country's resolver (admin): its URN:NBNs are then not found here."""
    services.forwarding.remove_forwarding(country)
    return Response(status_code=204)
