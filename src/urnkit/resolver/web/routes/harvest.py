"""``/api/v1/oai/sources``: the OAI-PMH repositories harvested for URN:NBN -> URL mappings
(admins only; harvests run with ``urnkit oai harvest``)."""

from typing import Any

from fastapi import APIRouter

from urnkit.resolver.domain import HarvestSource
from urnkit.resolver.web.deps import AdminPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import HarvestSourceIn, HarvestSourceOut

router = APIRouter(tags=["oai-pmh"])


def source_json(source: HarvestSource) -> dict[str, Any]:
    """A harvest source as :class:`HarvestSourceOut` shows it."""
    return {
        "name": source.name,
        "organisation": source.organisation,
        "base_url": source.base_url,
        "url_pattern": source.url_pattern,
        "set_spec": source.set_spec,
        "metadata_prefix": source.metadata_prefix,
        "granularity": source.granularity,
        "next_from": source.next_from,
        "harvested": source.harvested.isoformat() if source.harvested else None,
    }


@router.get("/api/v1/oai/sources", response_model=list[HarvestSourceOut], responses=AUTHENTICATED)
def harvest_sources(_: AdminPrincipal, services: ServiceDep) -> list[dict[str, Any]]:
    """Every OAI-PMH harvest source (admin); harvests run with ``urnkit oai harvest``."""
    return [source_json(source) for source in services.harvest.sources()]


@router.post(
    "/api/v1/oai/sources",
    response_model=HarvestSourceOut,
    status_code=201,
    responses=problem_responses(404, 409, 422) | AUTHENTICATED,
)
def add_harvest_source(
    body: HarvestSourceIn, _: AdminPrincipal, services: ServiceDep
) -> dict[str, Any]:
    """Add an OAI-PMH harvest source (admin): its URNs must fall under the organisation's
    delegated prefixes, its location URLs must fully match the pattern."""
    source = services.harvest.add_source(
        body.name,
        body.organisation,
        body.base_url,
        body.url_pattern,
        body.set_spec,
        body.metadata_prefix,
    )
    return source_json(source)
