"""``/staff/admin/prefixes``: an admin's list of the delegated prefixes (RFC 8458 §4.3), each
with its organisation and generator, and the delegation of a new one, as ``urnkit admin
delegate`` does."""

from functools import partial
from typing import Any

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import GENERATORS
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import AdminStaff, Staff, staff_router

PREFIXES = "/staff/admin/prefixes"
router = staff_router()


def _page(staff: Staff, **context: Any) -> HTMLResponse:
    return staff.page(
        "staff/prefixes.html",
        register=staff.services.overview.register(),
        organisations=staff.services.admin.organisations(),
        generators=GENERATORS,
        **context,
    )


@router.get(PREFIXES)
def prefixes(staff: AdminStaff) -> HTMLResponse:
    return _page(staff)


@router.post(PREFIXES)
def delegate(staff: AdminStaff, form: StaffForm) -> Response:
    """Delegate a prefix to an organisation, with the generator of its new names."""
    values = {name: form.get(name, "") for name in ("organisation", "prefix", "generator")}
    admin = staff.services.admin
    return staff.act(
        lambda: admin.delegate(values["organisation"], values["prefix"], values["generator"]),
        partial(_page, staff, values=values),
        PREFIXES,
    )
