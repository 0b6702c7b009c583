"""Resolution (RFC 8458 §4.2): a URN to where it leads, on the hot path of ``GET /{urn}``."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from urnkit.pasted import cleaned
from urnkit.resolver.domain import (
    InvalidURNError,
    NotFoundError,
    PastedURNError,
    Record,
    client_address,
    parse_urn,
    read_targets,
    with_q_component,
)
from urnkit.resolver.domain.descriptions import Description
from urnkit.resolver.domain.versions import ArchivedCopy, Versions
from urnkit.resolver.services.descriptions import Rfc2483Requests
from urnkit.resolver.services.forwarding import ForwardingService
from urnkit.resolver.services.networks import NetworkService
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.services.time_travel import TimeTravel
from urnkit.resolver.statistics import ResolutionTally
from urnkit.resolver.store import ResolutionRow, Store
from urnkit.urn import URN


@dataclass(frozen=True, slots=True)
class Resolution:
    """What resolving a URN gives: a ``redirect`` to ``target``, a ``surrogate`` page of the
    record's metadata (RFC 8458 §4.5), or ``gone`` (deactivated) naming its successors.
    ``alternates`` are the URLs a redirect could lead to, best first (``target`` is the first),
    ``media_types`` the media type of each where the record gives any (else empty);
    ``predecessors`` the URNs of the deactivated records naming this one as a successor. The
    ``record`` shows only the locations the client may use; ``withheld`` names the
    organisations holding the others (restricted to networks the client is outside);
    ``routed``: the answer depends on the client's address (no shared cache may keep it).
    A URN of another namespace that records here carry in ``metadata.identifiers`` resolves
    ``via`` that URN as the one record's URN does (``urn``), or, carried by several, gives
    their URNs as ``choices``, oldest first, each with its title (if any). A record's
    redirect names its ``prefix`` (what the statistics count it by); one ``kept`` is given
    again while nothing changes (:meth:`ResolutionService.redirect_now`).

    A surrogate or gone answer, and a redirect resolved with its description
    (:meth:`ResolutionService.answer_async`), carry everything their answers show: the
    ``description`` (:class:`~urnkit.resolver.domain.descriptions.Description`, as the
    client may see it) and, for a surrogate whose every location is broken, the ``archived``
    copies of its locations in web archives."""

    kind: Literal["redirect", "surrogate", "gone", "choices"]
    urn: URN
    target: str | None = None
    key: str = ""
    record: Record | None = None
    alternates: tuple[str, ...] = ()
    media_types: tuple[str | None, ...] = ()
    predecessors: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    routed: bool = False
    via: str | None = None
    choices: tuple[tuple[str, str | None], ...] = ()
    description: Description | None = None
    archived: tuple[ArchivedCopy, ...] = ()
    prefix: str = ""
    kept: bool = False


MAX_CHOICES = 1_000  # records listed for a URN of another namespace that several carry
NEAREST = 5  # registered URNs the 404 page suggests
MAX_KEY = 2000  # records.equivalence_key's length: no longer key has neighbours to find


def closest(key: str, around: list[tuple[str, str]], limit: int = NEAREST) -> list[str]:
    """The URNs of ``around`` (equivalence key, URN) whose keys share the longest start with
    ``key``, longest first, then in key order, at most ``limit``: those sharing more than half of
    ``key`` and more than its namespace (``urn:{NID}:``).

    >>> around = [("urn:nbn:fi-123", "URN:NBN:fi-123"), ("urn:nbn:fi-129", "URN:NBN:fi-129"),
    ...           ("urn:nbn:fi-2", "URN:NBN:fi-2"), ("urn:nbn:de:1", "urn:nbn:de:1")]
    >>> closest("urn:nbn:fi-124", around)
    ['URN:NBN:fi-123', 'URN:NBN:fi-129', 'URN:NBN:fi-2']
    >>> closest("urn:nbn:fi-fe2019123456", around)
    []
    """
    namespace = key.find(":", 4) + 1
    least = max(namespace + 1, len(key) // 2 + 1)
    shared = {urn: (_shared_start(key, other), other) for other, urn in around}
    ranked = sorted((-length, other, urn) for urn, (length, other) in shared.items())
    return [urn for length, _, urn in ranked if -length >= least][:limit]


def _shared_start(one: str, other: str) -> int:
    length = 0
    while length < min(len(one), len(other)) and one[length] == other[length]:
        length += 1
    return length


class KeptRedirects:
    """The redirects of records a server process gave, by the URN as the client sent it,
    kept while the store's change counter
    (:meth:`~urnkit.resolver.store.Store.resolution_changes`) reads as it did before the
    lookup that gave them. When it moves, those of the keys ``changed`` names
    (:meth:`~urnkit.resolver.store.Store.resolution_changed`: the records whose redirects
    may have changed meanwhile) are forgotten, and all of them where it cannot say; so no
    answer outlives a change. Beyond ``MOST`` the oldest go first.

    >>> moves = {(7, 8): ["urn:nbn:fi-2"]}
    >>> kept, urn = KeptRedirects(lambda *move: moves.get(move)), parse_urn("urn:nbn:fi-1")
    >>> found = Resolution("redirect", urn, "https://example.org/", "urn:nbn:fi-1")
    >>> kept.get("urn:nbn:fi-1", 7) is None  # nothing kept yet
    True
    >>> kept.keep("urn:nbn:fi-1", 7, found)
    >>> kept.get("urn:nbn:fi-1", 8) is found  # only urn:nbn:fi-2 changed
    True
    >>> kept.get("urn:nbn:fi-1", 9)  # unknown: all forgotten
    """

    MOST = 100_000

    def __init__(self, changed: Callable[[int, int], Iterable[str] | None]) -> None:
        self._changed = changed
        # In order of keeping: the oldest goes first in constant time (a dict's first entry,
        # after many taken from its start, is found by walking past their empty slots).
        self._kept: OrderedDict[str, Resolution] = OrderedDict()
        self._texts: dict[str, list[str]] = {}  # by equivalence key, the texts kept for it
        self._changes: int | None = None

    def get(self, text: str, changes: int | None) -> Resolution | None:
        """The redirect kept for ``text`` if it is still what the counter reading ``changes``
        answers (None: there is no counter, and nothing is kept)."""
        if changes != self._changes:
            self._move(changes)
        return None if changes is None else self._kept.get(text)

    def keep(self, text: str, changes: int | None, found: Resolution) -> None:
        """Keep ``found``, looked up for ``text`` after the counter read ``changes``: not if it
        has moved since (another request saw it move while this one awaited its lookup)."""
        if changes is None or changes != self._changes:
            return
        if text not in self._kept:
            if len(self._kept) >= self.MOST:
                oldest, forgotten = self._kept.popitem(last=False)
                self._forget(forgotten.key, oldest)
            self._texts.setdefault(found.key, []).append(text)
        self._kept[text] = found

    def _move(self, changes: int | None) -> None:
        """Forget what the counter's move to ``changes`` may have changed: everything when
        the store cannot say what (or when it fails to)."""
        before, self._changes = self._changes, changes
        try:
            changed = None if before is None or changes is None else self._changed(before, changes)
        except Exception:
            self._forget_all()
            raise
        if changed is None:
            self._forget_all()
            return
        for key in changed:
            for text in self._texts.pop(key, ()):
                del self._kept[text]

    def _forget(self, key: str, text: str) -> None:
        """Forget that ``text`` is kept for ``key``."""
        texts = self._texts[key]
        texts.remove(text)
        if not texts:
            del self._texts[key]

    def _forget_all(self) -> None:
        """Forget every redirect kept."""
        self._kept.clear()
        self._texts.clear()


def _redirect(urn: URN, key: str, row: ResolutionRow, kept: bool = False) -> Resolution | None:
    """The redirect to an active record's best location not known broken, ``kept`` or not;
    None when the answer needs the whole record (no such location, or deactivated)."""
    status, targets, predecessors, prefix, _ = row
    if status == "active" and targets is not None:
        alternates, media_types = read_targets(targets)
        if urn.q_component:
            alternates = tuple(with_q_component(url, urn.q_component) for url in alternates)
        return Resolution(
            "redirect",
            urn,
            alternates[0],
            key,
            alternates=alternates,
            media_types=media_types,
            predecessors=() if predecessors is None else tuple(predecessors.split("\n")),
            prefix=prefix,
            kept=kept,
        )
    return None


class ResolutionService:
    """Resolves URNs over a store: registered ones by their ``records``, others by
    ``forwarding``. Each resolution of a registered URN counts into ``tally`` (flushed to the
    database by :meth:`OverviewService.flush_statistics`). A record with locations restricted
    to ``networks`` leads each client to the first it may use, judged by its address. What
    an answer other than a redirect shows is read by ``descriptions`` (with the copies
    ``time_travel`` finds in web archives)."""

    def __init__(
        self,
        store: Store,
        records: RecordService,
        forwarding: ForwardingService,
        tally: ResolutionTally,
        networks: NetworkService,
        time_travel: TimeTravel,
    ) -> None:
        self.store = store
        self.records = records
        self.forwarding = forwarding
        self.tally = tally
        self.networks = networks
        self.time_travel = time_travel
        self.descriptions = Rfc2483Requests(records)
        self.kept = KeptRedirects(store.resolution_changed)

    def resolve(self, text: str, client: str | None = None) -> Resolution:
        """Resolve a URN, components included: a q-component is copied into the locator's
        query (RFC 8141 §2.3.2); an r-component does not change where it leads (RFC 8458
        §4.2.1; the web layer reads the name of an RFC 2483 request from it). ``client`` is
        the client's address, which locations restricted to networks are judged by.

        Raises :class:`~urnkit.resolver.domain.InvalidURNError` or
        :class:`~urnkit.resolver.domain.NotFoundError`; :class:`PastedURNError` when the text,
        not registered as given, names a URN that is once cleaned of what pasting adds.
        """
        urn = self._parsed(text)
        key = urn.equivalence_key()
        row = self.store.resolution_row(key)
        if row is None:
            return self._unregistered(urn, text, client)
        self.tally.add(row[3])
        if row[4] is not None:
            if not self.networks.fresh():
                self.networks.load()
            row = self._routed(row, client)
        redirect = _redirect(urn, key, row)
        if redirect is None:
            return self._from_record(urn, key, row, client)
        return redirect if row[4] is None else replace(redirect, routed=True)

    async def resolve_async(
        self, text: str, client: str | None = None, suggest: bool = False
    ) -> Resolution:
        """:meth:`resolve` for the event loop (``GET /{urn}``): the lookup is
        :meth:`~urnkit.resolver.store.Store.resolution_row_async`; reading the whole record, for
        the rarer surrogate and gone answers, forwarding, and reading the networks when they
        are old, run in a worker thread. A record without restricted locations (its
        ``records.restricted`` NULL) is redirected without looking at the client. When
        ``suggest`` (a reader's page will show it), the NotFoundError of a URN found nowhere
        carries the registered URNs :meth:`nearest` it. On SQLite a record's redirect is kept
        (:class:`KeptRedirects`) and given again, the same object, while nothing changed: the
        change counter is read in this call, before the lookup."""
        changes = self.store.resolution_changes()
        kept = self._kept(text, changes)
        if kept is not None:
            return kept
        try:
            urn = parse_urn(text)
        except InvalidURNError:
            await asyncio.to_thread(self._pasted, text)
            raise
        key = urn.equivalence_key()
        row = await self.store.resolution_row_async(key)
        if row is None:
            return await asyncio.to_thread(self._unregistered, urn, text, client, suggest)
        self.tally.add(row[3])
        if row[4] is not None:
            if not self.networks.fresh():
                await asyncio.to_thread(self.networks.load)
            row = self._routed(row, client)
        redirect = _redirect(urn, key, row, changes is not None and row[4] is None)
        if redirect is None:
            return await asyncio.to_thread(self._from_record, urn, key, row, client)
        if row[4] is not None:
            return replace(redirect, routed=True)
        return self._keep(text, changes, redirect)

    def redirect_now(self, text: str) -> Resolution | None:
        """The redirect :meth:`resolve_async` gives for ``text`` when the services keep it
        (a record's, its locations not restricted to networks), found without waiting: kept,
        or read on the caller's thread from SQLite (the change counter is read here first);
        not counted: the caller counts the answer it gives (:meth:`count`). None for every
        other answer, and where nothing is kept (PostgreSQL, in-memory SQLite): the caller
        asks :meth:`resolve_async`. For a server's answer made below the application.

        >>> from urnkit.resolver.services import Services
        >>> Services(Store("sqlite://")).resolution.redirect_now("urn:nbn:fi-1") is None
        True
        """
        changes = self.store.resolution_changes()
        if changes is None:
            return None
        kept = self.kept.get(text, changes)
        if kept is not None:
            return kept
        try:
            urn = parse_urn(text)
        except InvalidURNError:
            return None
        key = urn.equivalence_key()
        row = self.store.resolution_row_now(key)
        if row is None or row[4] is not None:
            return None
        redirect = _redirect(urn, key, row, kept=True)
        if redirect is None:
            return None
        return self._keep(text, changes, redirect)

    def redirect_then(self, text: str, then: Callable[[Resolution | None], None]) -> bool:
        """Look ``text`` up for the redirect :meth:`resolve_async` gives, where lookups are
        batched (PostgreSQL: :meth:`~urnkit.resolver.store.Store.resolution_row_then`), and
        call ``then`` on the event loop with it, not counted (:meth:`count`); or with None for
        every other answer, a failed lookup included: the caller then asks
        :meth:`resolve_async`. False, and ``then`` never called, where the lookup is not made
        so (the text no URN; SQLite: :meth:`redirect_now`). For a server's answer made below
        the application.

        >>> from urnkit.resolver.services import Services
        >>> Services(Store("sqlite://")).resolution.redirect_then("urn:nbn:fi-1", print)
        False
        """
        try:
            urn = parse_urn(text)
        except InvalidURNError:
            return False
        key = urn.equivalence_key()

        def found(row: ResolutionRow | None, error: Exception | None) -> None:
            if row is None or row[4] is not None:  # an error's row is None
                then(None)
                return
            try:
                redirect = _redirect(urn, key, row)
            except Exception:  # the application meets it again, and answers it
                redirect = None
            then(redirect)

        return self.store.resolution_row_then(key, found)

    def count(self, answer: Resolution) -> None:
        """Count ``answer``, a record's redirect from :meth:`redirect_now` or
        :meth:`redirect_then`, once it is given (RFC 8458 §4.4: the statistics count every
        resolution, whichever path answers it; one the application ends up answering, it
        counts itself).

        >>> from urnkit.resolver.services import Services
        >>> services = Services(Store("sqlite://"))
        >>> answer = Resolution("redirect", parse_urn("urn:nbn:fi-1"), prefix="fi")
        >>> services.resolution.count(answer)
        >>> [(prefix, count) for prefix, _, count in services.resolution.tally.take()]
        [('fi', 1)]
        """
        self.tally.add(answer.prefix)

    def _kept(self, text: str, changes: int | None) -> Resolution | None:
        """The redirect kept for ``text`` while the counter reads ``changes``, counted."""
        kept = self.kept.get(text, changes)
        if kept is not None:
            self.count(kept)
        return kept

    def _keep(self, text: str, changes: int | None, redirect: Resolution) -> Resolution:
        """``redirect``, looked up for ``text`` after the counter read ``changes``, kept
        (:class:`KeptRedirects`) if it is marked so."""
        if redirect.kept:
            self.kept.keep(text, changes, redirect)
        return redirect

    async def answer_async(
        self,
        text: str,
        client: str | None = None,
        described: bool = False,
        suggest: bool = False,
    ) -> Resolution:
        """All that ``GET /{urn}`` answers for the URN in ``text``, in one call: what
        :meth:`resolve_async` gives (``suggest``: a URN found nowhere with the registered
        URNs nearest it), and, when ``described`` (the client asks for a format of the
        record rather than the redirect), a redirect of a record of ours with its
        ``description`` too, read in a worker thread. A surrogate or gone answer always
        carries it."""
        resolution = await self.resolve_async(text, client, suggest)
        if not described or resolution.kind != "redirect" or not resolution.key:
            return resolution
        description = await asyncio.to_thread(self.describe, str(resolution.urn), client)
        return replace(resolution, description=description)

    async def timegate_async(
        self,
        text: str,
        client: str | None = None,
        described: bool = False,
        suggest: bool = False,
    ) -> Versions | Resolution:
        """All that ``GET /{urn}`` with ``Accept-Datetime`` answers (RFC 7089 §4.1: ``/{urn}``
        is its record's TimeGate), in one call: the :meth:`versions` of the record here, or,
        for a text no record here has, what :meth:`answer_async` gives (forwarding, the
        records carrying it, the refusal of a pasted URN, of one found nowhere, of no URN)."""
        try:
            return await asyncio.to_thread(self.versions, text, client)
        except (NotFoundError, InvalidURNError):
            return await self.answer_async(text, client, described, suggest)

    def versions(self, text: str, client: str | None = None) -> Versions:
        """Every version of the record of the URN in ``text``, oldest first, as a client at
        ``client`` may see them (:meth:`TimeTravel.versions`: RFC 7089's Mementos);
        :class:`~urnkit.resolver.domain.NotFoundError` when none is registered."""
        return self.time_travel.versions(text, self.networks.reader(None, client))

    def describe(
        self, text: str, client: str | None = None, request: str = "", suggest: bool = False
    ) -> Description:
        """What is known of the registered URN in ``text``, as a client at ``client`` may see
        it (:meth:`Rfc2483Requests.describe`), for an RFC 2483 ``request`` or a format asked
        for by a query: with its current name for ``I2N``, the URNs related to it for
        ``I2Ns``. When none is registered, :class:`PastedURNError` if the text names one
        once cleaned (:meth:`pasted`), else :class:`~urnkit.resolver.domain.NotFoundError`
        (with the registered URNs :meth:`nearest` it when ``suggest``)."""
        try:
            description = self.descriptions.describe(text, self.networks.reader(None, client))
        except NotFoundError as error:
            self._pasted(text)
            if suggest:
                error.nearest = tuple(self.nearest(text))
            raise
        if request == "I2N":
            return replace(description, current=self.descriptions.current(text))
        if request == "I2Ns":
            return replace(description, related=tuple(self.descriptions.related(text)))
        return description

    def pasted(self, text: str) -> str | None:
        """The URN that ``text``, not registered as given, names once cleaned of what pasting
        adds (:func:`urnkit.pasted.cleaned`): the record's URN as registered, or the cleaned
        text when another resolver takes it or records carry it; None when the text is
        registered as given, or cleaning changes nothing or finds nothing. Components (from
        the first ``?``) are left out of both.
        """
        name = text.partition("?")[0]
        try:
            if self.store.resolution_row(parse_urn(name).equivalence_key()) is not None:
                return None
        except InvalidURNError:
            pass
        candidate = cleaned(name)
        if candidate == name:
            return None
        try:
            urn = parse_urn(candidate)
        except InvalidURNError:
            return None
        key = urn.equivalence_key()
        if self.store.resolution_row(key) is not None:
            with self.store.snapshot() as tx:
                record = tx.records.get(key)
            return None if record is None else record.urn
        try:
            self.forwarding.target(urn)
        except NotFoundError:
            if urn.nid.lower() == "nbn":
                return None
            with self.store.snapshot() as tx:
                if not tx.identifiers.carriers(key, 1):
                    return None
        return candidate

    def nearest(self, text: str, limit: int = NEAREST) -> list[str]:
        """Up to ``limit`` registered URNs closest to ``text`` (:func:`closest`), cleaned of
        what pasting adds (:func:`urnkit.pasted.cleaned`): what a 404 page suggests, found
        through the index of equivalence keys (:mod:`~urnkit.resolver.store.queries.neighbours`).

        >>> from urnkit.resolver.services import Services
        >>> Services(Store("sqlite://")).resolution.nearest("no URN")
        []
        """
        candidate = cleaned(text.partition("?")[0])
        try:
            key = parse_urn(candidate).equivalence_key()
        except InvalidURNError:
            key = candidate.lower()
        if key[:4] != "urn:" or len(key) > MAX_KEY:
            return []
        with self.store.snapshot() as tx:
            return closest(key, tx.neighbours.around(key, limit), limit)

    def _parsed(self, text: str) -> URN:
        """``text`` as a URN; :class:`~urnkit.resolver.domain.InvalidURNError` when it is none
        (:class:`PastedURNError` when it names one once cleaned: :meth:`_pasted`)."""
        try:
            return parse_urn(text)
        except InvalidURNError:
            self._pasted(text)
            raise

    def _pasted(self, text: str) -> None:
        """:class:`PastedURNError` if ``text``, not registered as given, names a URN that is
        once cleaned (:meth:`pasted`)."""
        found = self.pasted(text)
        if found is not None:
            raise PastedURNError(text.partition("?")[0], found)

    def _routed(self, row: ResolutionRow, client: str | None) -> ResolutionRow:
        """``row`` with the targets a client at ``client`` may use (its ``restricted``: every
        usable location with its network, best first), as ``records.targets`` writes them."""
        status, _, predecessors, prefix, restricted = row
        assert restricted is not None
        usable = self.networks.usable(restricted, client_address(client))
        return status, "\n".join(usable) or None, predecessors, prefix, restricted

    def _from_record(
        self, urn: URN, key: str, row: ResolutionRow, client: str | None
    ) -> Resolution:
        """The surrogate or gone answer: the record described as the client may see it, with
        the archived copies of a surrogate's locations when none is usable."""
        description = self.describe(str(urn), client)
        record = description.record
        if record.status == "deactivated":
            kind: Literal["surrogate", "gone"] = "gone"
            copies: tuple[ArchivedCopy, ...] = ()
        else:
            kind = "surrogate"
            usable = description.usable
            copies = () if usable else tuple(self.time_travel.archived_copies(record))
        return Resolution(
            kind,
            urn,
            key=key,
            record=record,
            predecessors=() if row[2] is None else tuple(row[2].split("\n")),
            withheld=description.withheld,
            routed=description.restricted,
            description=description,
            archived=copies,
        )

    def _unregistered(
        self, urn: URN, text: str, client: str | None, suggest: bool = False
    ) -> Resolution:
        """The answer for the URN in ``text`` when no record here has it: the URN it names
        once cleaned (:meth:`_pasted`), else where it leads elsewhere (:meth:`_elsewhere`);
        found nowhere, the NotFoundError carries the URNs :meth:`nearest` it when ``suggest``."""
        self._pasted(text)
        try:
            return self._elsewhere(urn, client)
        except NotFoundError as error:
            if suggest:
                error.nearest = tuple(self.nearest(text))
            raise

    def _elsewhere(self, urn: URN, client: str | None) -> Resolution:
        """The answer for a URN not registered here: forwarded (:meth:`_forward`) or, when no
        resolver takes a URN of another namespace than NBN, found through the records that
        carry it in ``metadata.identifiers`` (by its namespace's equivalence: an ISBN-10
        finds the record carrying its ISBN-13), if any, as the ``client`` may see it."""
        try:
            return self._forward(urn)
        except NotFoundError:
            if urn.nid.lower() == "nbn":
                raise
            with self.store.snapshot(standby=True) as tx:
                carriers = tx.identifiers.carriers(urn.equivalence_key(), MAX_CHOICES)
            if not carriers:
                raise
        if len(carriers) > 1:
            return Resolution("choices", urn, choices=tuple(carriers))
        q_component = f"?={urn.q_component}" if urn.q_component else ""
        found = self.resolve(carriers[0][0] + q_component, client)
        return replace(found, via=urn.assigned_name)

    def _forward(self, urn: URN) -> Resolution:
        """A redirect to another resolver (:meth:`ForwardingService.target`); the q-component
        travels as to a location."""
        target = self.forwarding.target(urn)
        return Resolution("redirect", urn, with_q_component(target, urn.q_component or ""))
