"""``/staff/admin/harvest``: an admin's OAI-PMH harvest sources (docs/oai-pmh.md): listed,
added and changed (base URL, organisation, format, set, URL pattern), each harvested now, its
last run's summary and refusals shown; through the harvester ``urnkit oai`` uses."""

from contextlib import suppress
from typing import Annotated, Any

from fastapi import Path, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import HarvestSource, ResolverError
from urnkit.resolver.services.harvest import PARSERS
from urnkit.resolver.services.oai_feed import HarvestError
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import AdminStaff, Staff, staff_router

HARVEST = "/staff/admin/harvest"
FIELDS = ("name", "organisation", "base_url", "metadata_prefix", "set_spec", "url_pattern")
RUN_SECONDS = 60.0  # how long a harvest started from the page may take
router = staff_router()
SourceId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _page(staff: Staff, template: str = "staff/harvest.html", **context: Any) -> HTMLResponse:
    harvester = staff.services.harvest
    return staff.page(
        template,
        sources=harvester.sources(),
        runs=harvester.last_runs(),
        organisations=staff.services.admin.organisations(),
        formats=tuple(PARSERS),
        **context,
    )


def _source_page(staff: Staff, found: HarvestSource, **context: Any) -> HTMLResponse:
    return _page(staff, "staff/harvest_source.html", source=found, **context)


@router.get(HARVEST)
def sources(staff: AdminStaff) -> HTMLResponse:
    return _page(staff)


@router.post(HARVEST)
def add_source(staff: AdminStaff, form: StaffForm) -> Response:
    """Add a source; on to its page, where it can be harvested."""
    values = {name: form.get(name, "") for name in FIELDS}
    try:
        added = staff.services.harvest.add_source(
            values["name"],
            values["organisation"],
            values["base_url"],
            values["url_pattern"],
            values["set_spec"] or None,
            values["metadata_prefix"],
        )
    except ResolverError as error:
        return _page(staff, error=error, values=values)
    return staff.see_other(f"{HARVEST}/{added.id}")


@router.get(HARVEST + "/{source_id}")
def source(staff: AdminStaff, source_id: SourceId) -> HTMLResponse:
    """A source's form, filled in, its last run and the button that harvests it now."""
    found = staff.services.harvest.source(source_id)
    values = {
        "organisation": found.organisation,
        "base_url": found.base_url,
        "metadata_prefix": found.metadata_prefix,
        "set_spec": found.set_spec or "",
        "url_pattern": found.url_pattern,
    }
    return _source_page(staff, found, values=values)


@router.post(HARVEST + "/{source_id}")
def change_source(staff: AdminStaff, source_id: SourceId, form: StaffForm) -> Response:
    values = {name: form.get(name, "") for name in FIELDS}
    harvester = staff.services.harvest
    return staff.act(
        lambda: harvester.change_source(
            source_id,
            values["organisation"],
            values["base_url"],
            values["url_pattern"],
            values["set_spec"] or None,
            values["metadata_prefix"],
        ),
        lambda error: _source_page(staff, harvester.source(source_id), error=error, values=values),
        f"{HARVEST}/{source_id}",
    )


@router.post(HARVEST + "/{source_id}/run")
def run(staff: AdminStaff, source_id: SourceId) -> Response:
    """Harvest the source now, within :data:`RUN_SECONDS`; its page then shows the run, its
    refusals, or why it failed."""
    harvester = staff.services.harvest
    found = harvester.source(source_id)
    with suppress(HarvestError):  # kept as the source's last run, which its page shows
        harvester.harvest(found, seconds=RUN_SECONDS)
    return staff.see_other(f"{HARVEST}/{source_id}")
