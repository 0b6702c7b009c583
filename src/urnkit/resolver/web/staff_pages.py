"""What every staff route shares: its router (HTML answers, every POST's CSRF token checked),
and :class:`Staff`, the request's signed-in account with the services and sessions, which
renders the account's pages and acts on a form: the service's refusal shown on the form again,
else ``303 See Other``. Example::

    router = staff_router()

    @router.post(PREFIXES)
    def delegate(staff: AdminStaff, form: StaffForm) -> Response:
        again = partial(_page, staff, values=form)
        return staff.act(lambda: staff.services.admin.delegate(...), again, PREFIXES)
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse
from fastapi.routing import APIRoute

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import (
    ServiceDep,
    StaffAccount,
    StaffAdmin,
    StaffSessions,
    csrf_checked,
)
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page, staff_stream


def staff_router(route_class: type[APIRoute] = APIRoute) -> APIRouter:
    """A router of staff pages: HTML, out of the API's schema, every POST's CSRF token
    checked (:func:`~urnkit.resolver.web.deps.csrf_checked`).

    >>> staff_router().include_in_schema
    False
    """
    return APIRouter(
        route_class=route_class,
        include_in_schema=False,
        default_response_class=HTMLResponse,
        dependencies=[Depends(csrf_checked)],
    )


@dataclass(frozen=True, slots=True)
class Staff:
    """A staff request's signed-in ``account``, with the ``services`` it acts through and
    the ``sessions`` its forms' CSRF tokens come from."""

    request: Request
    services: Services
    sessions: Sessions
    account: Account

    def page(
        self, template: str, error: ResolverError | None = None, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """``template`` for the account (:func:`~urnkit.resolver.web.sessions.staff_page`)."""
        return staff_page(
            self.request,
            self.sessions,
            template,
            status,
            error,
            account=self.account,
            **context,
        )

    def stream(self, template: str, **context: Any) -> StreamingResponse:
        """``template`` for the account, sent as it is rendered
        (:func:`~urnkit.resolver.web.sessions.staff_stream`)."""
        return staff_stream(self.request, self.sessions, template, account=self.account, **context)

    def act(
        self, action: Callable[[], object], again: Callable[..., Response], location: str
    ) -> Response:
        """Do ``action``, then ``303`` to ``location``; refused, ``again(error=…)``: the form
        shown again with the refusal beside its field."""
        try:
            action()
        except ResolverError as error:
            return again(error=error)
        return see_other(self.request, location)

    def see_other(self, location: str) -> Response:
        """``303 See Other`` to ``location``, in the language the request chose."""
        return see_other(self.request, location)


def _staff(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAccount
) -> Staff:
    return Staff(request, services, sessions, account)


def _admin(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> Staff:
    return Staff(request, services, sessions, account)


SignedIn = Annotated[Staff, Depends(_staff)]
"""A signed-in account that has changed its one-time password; else to sign-in or to that."""
AdminStaff = Annotated[Staff, Depends(_admin)]
"""A signed-in admin (403 for any other account)."""
