"""``/staff/upload``: a CSV or NDJSON file of records (as ``urnkit import`` reads it)
previewed row by row, nothing written; then committed as previewed, the preview's digest
refusing a file that changed since (:mod:`~urnkit.resolver.services.uploads`).

The preview of a long file (:data:`LONG` rows or more) is the answer to its own request, sent
as it is made: the page's head at once, then how many rows have been checked (each
:data:`STEPS`-th of the file), then the preview. Nothing of it is kept anywhere else, so any
server process sharing the database may run it."""

import base64
import binascii
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError, UnacceptableError
from urnkit.resolver.services.rows import format_of
from urnkit.resolver.services.uploads import FileFormat, Progress, UploadPreview
from urnkit.resolver.web.deps import StaffFile, StaffForm
from urnkit.resolver.web.staff_pages import SignedIn, staff_router

UPLOAD = "/staff/upload"
PAGE = "staff/upload.html"
router = staff_router()
LONG = 2000  # rows: a file this long shows its progress
STEPS = 20  # progress shown at each twentieth of the file


_News = tuple[int, int] | UploadPreview | BaseException


class PreviewRun:
    """A preview, ``preview(progress)``, running in a thread of its own and telling how far
    it got: :meth:`first` waits for its first news, :meth:`steps` for the rest, after which
    ``preview`` or ``error`` (a refusal) is set. Another exception is raised where it is read.

    >>> def preview(progress):
    ...     for checked in range(LONG + 1):
    ...         progress(checked, LONG)
    ...     return UploadPreview((), "digest")
    >>> run = PreviewRun(preview)
    >>> run.first(), len(list(run.steps())), run.preview.digest, run.error
    ((0, 2000), 21, 'digest', None)
    """

    def __init__(self, preview: Callable[[Progress], UploadPreview]) -> None:
        self._news: queue.Queue[_News] = queue.Queue()
        self._shown: tuple[int, int] | None = None
        self.preview: UploadPreview | None = None
        self.error: ResolverError | None = None
        threading.Thread(target=self._run, args=(preview,), daemon=True).start()

    def _run(self, preview: Callable[[Progress], UploadPreview]) -> None:
        try:
            self._news.put(preview(self._checked))
        except BaseException as error:  # raised again where it is read
            self._news.put(error)

    def _checked(self, checked: int, total: int) -> None:
        """Tell a long file's first row and each :data:`STEPS`-th of it."""
        if total >= LONG and (
            checked == 0 or checked * STEPS // total > (checked - 1) * STEPS // total
        ):
            self._news.put((checked, total))

    def _next(self) -> tuple[int, int] | UploadPreview | ResolverError:
        news = self._news.get()
        if isinstance(news, BaseException) and not isinstance(news, ResolverError):
            raise news
        return news

    def first(self) -> tuple[int, int] | UploadPreview | ResolverError:
        """The first news: how far a long file got, else the preview or its refusal."""
        news = self._next()
        if isinstance(news, tuple):
            self._shown = news
        return news

    def steps(self) -> Iterator[tuple[int, int]]:
        """Each ``(checked, total)``, the first's included, until the preview ends."""
        if self._shown is not None:
            yield self._shown
        while isinstance(news := self._next(), tuple):
            yield news
        if isinstance(news, ResolverError):
            self.error = news
        else:
            self.preview = news


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
def preview(staff: SignedIn, form: StaffForm, sent: StaffFile) -> Response:
    """What each row of the file would do, nothing written; the form that commits it. A long
    file's page shows how far the preview got as it runs (:class:`PreviewRun`)."""
    values: dict[str, Any] = {"format": form.get("format", ""), "change": "change" in form}
    try:
        if sent is None or not sent[1]:
            raise UnacceptableError("choose a file to upload", field="file")
        kind = _kind(sent[0], form.get("format", ""))
    except ResolverError as error:
        return staff.page(PAGE, error=error, values=values)
    principal, data = staff.account.principal(), sent[1]
    run = PreviewRun(
        lambda progress: staff.services.uploads.preview(
            principal, data, kind, change_existing=values["change"], progress=progress
        )
    )
    news = run.first()
    if isinstance(news, ResolverError):
        return staff.page(PAGE, error=news, values=values)
    content = base64.b64encode(data).decode("ascii")
    if isinstance(news, tuple):
        return staff.stream(PAGE, values=values, run=run, kind=kind, content=content)
    return staff.page(PAGE, values=values, preview=news, kind=kind, content=content)


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
