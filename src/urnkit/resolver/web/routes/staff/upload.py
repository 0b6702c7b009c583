"""``/staff/upload``: a CSV or NDJSON file of records (as ``urnkit import`` reads it)
previewed row by row, nothing written; then committed as previewed, the preview's digest
refusing a file that changed since (:mod:`~urnkit.resolver.services.uploads`)."""

import base64
import binascii
from typing import Any

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError, UnacceptableError
from urnkit.resolver.services.rows import format_of
from urnkit.resolver.services.uploads import FileFormat
from urnkit.resolver.web.deps import StaffFile, StaffForm
from urnkit.resolver.web.staff_pages import SignedIn, staff_router

UPLOAD = "/staff/upload"
PAGE = "staff/upload.html"
router = staff_router()


@router.get(UPLOAD)
def upload_form(staff: SignedIn, written: int | None = None) -> HTMLResponse:
    return staff.page(PAGE, written=written)


def _kind(name: str, chosen: str) -> FileFormat:
    """The file's format: as chosen, else by its name; refused beside the ``format`` field."""
    try:
        kind = format_of(name, chosen)
    except ValueError as error:
        raise UnacceptableError(str(error), field="format") from None
    if kind not in ("csv", "ndjson"):
        raise UnacceptableError(f"no format is called {kind!r}", field="format")
    return "csv" if kind == "csv" else "ndjson"


@router.post(UPLOAD)
def preview(staff: SignedIn, form: StaffForm, sent: StaffFile) -> HTMLResponse:
    """What each row of the file would do, nothing written; the form that commits it."""
    values: dict[str, Any] = {"format": form.get("format", ""), "change": "change" in form}
    try:
        if sent is None or not sent[1]:
            raise UnacceptableError("choose a file to upload", field="file")
        kind = _kind(sent[0], form.get("format", ""))
        found = staff.services.uploads.preview(
            staff.account.principal(), sent[1], kind, change_existing=values["change"]
        )
    except ResolverError as error:
        return staff.page(PAGE, error=error, values=values)
    content = base64.b64encode(sent[1]).decode("ascii")
    return staff.page(PAGE, values=values, preview=found, kind=kind, content=content)


@router.post(UPLOAD + "/commit")
def commit(staff: SignedIn, form: StaffForm) -> Response:
    """Write the rows the preview accepted; refused (nothing written) if anything changed."""
    try:
        try:
            data = base64.b64decode(form.get("content", ""), validate=True)
        except binascii.Error:
            raise UnacceptableError("the previewed file was not sent back", field="file") from None
        written = staff.services.uploads.commit(
            staff.account.principal(),
            data,
            _kind("", form.get("format", "")),
            form.get("digest", ""),
            change_existing=form.get("change") == "yes",
        )
    except ResolverError as error:
        return staff.page(PAGE, error=error)
    return staff.see_other(f"{UPLOAD}?written={len(written.rows)}")
