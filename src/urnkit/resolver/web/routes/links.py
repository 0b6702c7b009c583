"""``/api/v1/links/broken``: the locations link checking found broken."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from urnkit.resolver.representations.shapes import broken_link_json
from urnkit.resolver.web.deps import AuthenticatedPrincipal, ServiceDep
from urnkit.resolver.web.problems import AUTHENTICATED, problem_responses
from urnkit.resolver.web.schemas import BrokenLinksOut

router = APIRouter(tags=["links"])


@router.get(
    "/api/v1/links/broken",
    response_model=BrokenLinksOut,
    responses=problem_responses(404) | AUTHENTICATED,
)
def broken_links(
    who: AuthenticatedPrincipal,
    services: ServiceDep,
    owner: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> dict[str, Any]:
    """The locations whose links link checking found broken (left out of resolution), by
    owner and URN: a registrant sees its organisation's; an admin any ``owner``'s, or all."""
    chosen, found = services.links.broken_links_for(who, owner)
    return {
        "owner": chosen,
        "count": len(found),
        "links": [broken_link_json(b) for b in found],
    }
