"""``/api/v1/prefixes``: the public register of delegated prefixes, and URN:NBNs generated
under them."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from urnkit.resolver.domain import PREFIX_PATTERN
from urnkit.resolver.services.records import MAX_GENERATE
from urnkit.resolver.web.deps import AuthenticatedPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import GeneratedOut, PrefixOut

router = APIRouter(tags=["prefixes"])


@router.post(
    "/api/v1/prefixes/{prefix}/urns",
    response_model=GeneratedOut,
    status_code=201,
    responses=problem_responses(404) | AUTHENTICATED,
)
def generate(
    prefix: Annotated[str, Path(json_schema_extra={"pattern": PREFIX_PATTERN})],
    who: AuthenticatedPrincipal,
    services: ServiceDep,
    count: Annotated[int, Query(ge=1, le=MAX_GENERATE)] = 1,
) -> dict[str, Any]:
    """Generate and reserve the next unused URN:NBN(s) of a delegated prefix."""
    urns = [record.urn for record in services.records.generate(who, prefix, count)]
    return {"urn": urns[0], "urns": urns}


@router.get("/api/v1/prefixes", response_model=list[PrefixOut])
def list_prefixes(services: ServiceDep) -> list[dict[str, str]]:
    """The public register of delegated prefixes (RFC 8458 §4.3)."""
    return [
        {"prefix": prefix, "organisation": organisation, "generator": generator}
        for prefix, organisation, generator in services.admin.prefixes()
    ]
