"""``/api/v1/search``: records by URN (equivalence), by location URL or by title."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from urnkit.resolver.domain import UnacceptableError
from urnkit.resolver.web.deps import OPTIONAL_TOKEN, APIReader, ServiceDep
from urnkit.resolver.web.problems import problem_responses
from urnkit.resolver.web.routes.records import page_json
from urnkit.resolver.web.schemas import RecordPage

SearchBy = Literal["urn", "url", "title", "identifier"]
router = APIRouter(tags=["records"])


@router.get(
    "/api/v1/search",
    response_model=RecordPage,
    responses=problem_responses(400, 401, 422),
    openapi_extra=OPTIONAL_TOKEN,
)
def search(
    services: ServiceDep,
    reader: APIReader,
    urn: Annotated[str | None, Query(max_length=2000, examples=["urn:nbn:fi:demo-1"])] = None,
    url: Annotated[str | None, Query(max_length=4000, examples=["https://example.org/"])] = None,
    title: Annotated[str | None, Query(max_length=1000, examples=["thesis"])] = None,
    identifier: Annotated[
        str | None, Query(max_length=2000, examples=["urn:isbn:978-0-451-45052-4"])
    ] = None,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Records by ``urn`` (the record of an equivalent URN, if any), by ``url`` (those with
    a location there), by ``title`` (a case-insensitive part of ``metadata.title``) or by
    ``identifier`` (those carrying it: a URN in ``metadata.identifiers``, equivalent by its
    namespace's rules, so that an ISBN-10 finds its ISBN-13; anything else, a
    ``metadata.local_id``): give exactly one. Pages as ``GET /api/v1/urns`` does, and shows
    restricted locations as it does: a location restricted to a network is found by its
    ``url`` only by those it is shown to."""
    given: dict[SearchBy, str | None] = {
        "urn": urn,
        "url": url,
        "title": title,
        "identifier": identifier,
    }
    chosen = [(by, text) for by, text in given.items() if text is not None]
    if len(chosen) != 1:
        raise UnacceptableError("give exactly one of urn, url, title and identifier to search by")
    by, text = chosen[0]
    return page_json(*services.overview.search(by, text, int(cursor or 0), limit, reader))
