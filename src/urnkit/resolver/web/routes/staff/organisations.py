"""``/staff/admin/organisations`` and ``/staff/admin/networks``: an admin's list of the
organisations (each with its delegated prefixes, accounts and networks), creating one; and the
organisations' networks (CIDR ranges) set and removed, as ``urnkit admin network`` does."""

from functools import partial
from typing import Any

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import AdminStaff, Staff, staff_router

ORGANISATIONS = "/staff/admin/organisations"
NETWORKS = "/staff/admin/networks"
router = staff_router()


def _organisations(staff: Staff, **context: Any) -> HTMLResponse:
    services = staff.services
    return staff.page(
        "staff/organisations.html",
        organisations=services.admin.organisations(),
        prefixes=services.admin.prefixes(),
        accounts=services.accounts.accounts(staff.account.principal()),
        networks=services.networks.networks(),
        **context,
    )


@router.get(ORGANISATIONS)
def organisations(staff: AdminStaff) -> HTMLResponse:
    return _organisations(staff)


@router.post(ORGANISATIONS)
def create_organisation(staff: AdminStaff, form: StaffForm) -> Response:
    name = form.get("name", "")
    return staff.act(
        lambda: staff.services.admin.create_organisation(name),
        partial(_organisations, staff, values={"name": name}),
        ORGANISATIONS,
    )


def _networks(staff: Staff, **context: Any) -> HTMLResponse:
    return staff.page(
        "staff/networks.html",
        organisations=staff.services.admin.organisations(),
        networks=staff.services.networks.networks(),
        **context,
    )


@router.get(NETWORKS)
def networks(staff: AdminStaff) -> HTMLResponse:
    return _networks(staff)


@router.post(NETWORKS)
def set_network(staff: AdminStaff, form: StaffForm) -> Response:
    """Create or replace a network: its ranges, separated by spaces or commas."""
    values = {name: form.get(name, "") for name in ("organisation", "network", "ranges")}
    ranges = values["ranges"].replace(",", " ").split()
    return staff.act(
        lambda: staff.services.networks.save(values["organisation"], values["network"], ranges),
        partial(_networks, staff, values=values),
        NETWORKS,
    )


@router.post(NETWORKS + "/remove")
def remove_network(staff: AdminStaff, form: StaffForm) -> Response:
    """Remove a network; refused (at the top of the page) while locations are restricted to
    it."""

    def refused(error: ResolverError) -> HTMLResponse:
        error.extensions.pop("field", None)  # the list's button, not the form's field
        return _networks(staff, error=error)

    names = form.get("organisation", ""), form.get("network", "")
    return staff.act(lambda: staff.services.networks.delete(*names), refused, NETWORKS)
