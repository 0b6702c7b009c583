"""The staff pages under ``/staff/``, one router per area: the session (sign-in, sign-out,
password), the home page, API tokens, accounts, the records and each record, a record's
history, the upload, broken links, and the admins' pages: the overview, organisations and their
networks, delegated prefixes, forwarding, harvest sources; assembled here into one router."""

from fastapi import APIRouter

from urnkit.resolver.web.routes.staff import (
    accounts,
    forwarding,
    harvest,
    history,
    home,
    links,
    organisations,
    overview,
    prefixes,
    record,
    records,
    session,
    tokens,
    upload,
)

# records before record: its pages (new, export) before the page of any URN under it; a
# record's history before the record's own pages.
AREAS = (
    session,
    home,
    tokens,
    accounts,
    records,
    history,
    record,
    upload,
    links,
    overview,
    organisations,
    prefixes,
    forwarding,
    harvest,
)
router = APIRouter()
for _area in AREAS:
    router.routes.extend(_area.router.routes)
