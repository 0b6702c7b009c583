"""``/staff/admin/forwarding``: an admin's view of the forwarding table (RFC 8458 §4.4, each
country's national resolver and its last health check); a row added, changed or removed, as
``urnkit admin forwarding`` and ``/api/v1/forwarding`` do."""

from functools import partial
from typing import Any

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import AdminStaff, Staff, staff_router

FORWARDING = "/staff/admin/forwarding"
FIELDS = ("country", "url_template", "note")
router = staff_router()


def _page(staff: Staff, **context: Any) -> HTMLResponse:
    entries = staff.services.forwarding.forwardings()
    return staff.page("staff/forwarding.html", entries=entries, **context)


@router.get(FORWARDING)
def forwarding(staff: AdminStaff, country: str = "") -> HTMLResponse:
    """The table; with ``?country=``, the form filled in with that row, to change it."""
    chosen = [e for e in staff.services.forwarding.forwardings() if e.country == country]
    values = {}
    if chosen:
        values = {
            "country": chosen[0].country,
            "url_template": chosen[0].url_template,
            "note": chosen[0].note or "",
        }
    return _page(staff, values=values)


@router.post(FORWARDING)
def set_forwarding(staff: AdminStaff, form: StaffForm) -> Response:
    """Add a country's row, or change it."""
    values = {name: form.get(name, "") for name in FIELDS}
    table = staff.services.forwarding
    return staff.act(
        lambda: table.set_forwarding(
            values["country"], values["url_template"], values["note"] or None
        ),
        partial(_page, staff, values=values),
        FORWARDING,
    )


@router.post(FORWARDING + "/remove")
def remove_forwarding(staff: AdminStaff, form: StaffForm) -> Response:
    """Remove a country's row: its URN:NBNs are no longer forwarded."""
    table = staff.services.forwarding
    country = form.get("country", "")
    return staff.act(lambda: table.remove_forwarding(country), partial(_page, staff), FORWARDING)
