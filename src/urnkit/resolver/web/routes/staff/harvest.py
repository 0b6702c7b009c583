"""``/staff/admin/harvest``: an admin's OAI-PMH harvest sources (docs/oai-pmh.md): listed,
added and changed (base URL, organisation, format, set, URL pattern), each harvested now, its
last run's summary and refusals shown; through the harvester ``urnkit oai`` uses."""

from contextlib import suppress
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.services.harvest import PARSERS, HarvestError
from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffForm, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

HARVEST = "/staff/admin/harvest"
FIELDS = ("name", "organisation", "base_url", "metadata_prefix", "set_spec", "url_pattern")
RUN_SECONDS = 60.0  # how long a harvest started from the page may take
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)
SourceId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _page(
    request: Request,
    services: Services,
    sessions: Sessions,
    account: Account,
    template: str = "staff/harvest.html",
    **context: Any,
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        template,
        account=account,
        sources=services.harvest.sources(),
        runs=services.harvest.last_runs(),
        organisations=services.admin.organisations(),
        formats=tuple(PARSERS),
        **context,
    )


@router.get(HARVEST)
def sources(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return _page(request, services, sessions, account)


@router.post(HARVEST)
def add_source(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Add a source; on to its page, where it can be harvested."""
    values = {name: form.get(name, "") for name in FIELDS}
    try:
        added = services.harvest.add_source(
            values["name"],
            values["organisation"],
            values["base_url"],
            values["url_pattern"],
            values["set_spec"] or None,
            values["metadata_prefix"],
        )
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error, values=values)
    return see_other(request, f"{HARVEST}/{added.id}")


@router.get(HARVEST + "/{source_id}")
def source(
    source_id: SourceId,
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
) -> HTMLResponse:
    """A source's form, filled in, its last run and the button that harvests it now."""
    found = services.harvest.source(source_id)
    values = {
        "organisation": found.organisation,
        "base_url": found.base_url,
        "metadata_prefix": found.metadata_prefix,
        "set_spec": found.set_spec or "",
        "url_pattern": found.url_pattern,
    }
    context = {"source": found, "values": values}
    return _page(request, services, sessions, account, "staff/harvest_source.html", **context)


@router.post(HARVEST + "/{source_id}")
def change_source(
    source_id: SourceId,
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    values = {name: form.get(name, "") for name in FIELDS}
    try:
        services.harvest.change_source(
            source_id,
            values["organisation"],
            values["base_url"],
            values["url_pattern"],
            values["set_spec"] or None,
            values["metadata_prefix"],
        )
    except ResolverError as error:
        context = {"source": services.harvest.source(source_id), "values": values}
        template = "staff/harvest_source.html"
        return _page(request, services, sessions, account, template, error=error, **context)
    return see_other(request, f"{HARVEST}/{source_id}")


@router.post(HARVEST + "/{source_id}/run")
def run(
    request: Request, source_id: SourceId, services: ServiceDep, account: StaffAdmin
) -> Response:
    """Harvest the source now, within :data:`RUN_SECONDS`; its page then shows the run, its
    refusals, or why it failed."""
    harvester = services.harvest
    found = harvester.source(source_id)
    with suppress(HarvestError):  # kept as the source's last run, which its page shows
        harvester.harvest(found, seconds=RUN_SECONDS)
    return see_other(request, f"{HARVEST}/{source_id}")
