"""Requests to one OAI-PMH repository for a harvest (:mod:`~urnkit.resolver.services.harvest`),
each through the fetch guard (:mod:`~urnkit.resolver.services.outbound`: the public internet,
and the networks ``fetch_allowed_networks`` allows) and bounded.

Bounds: an answer is read as it comes and refused once it is longer than
``harvest_max_bytes`` (never more than that is held); each answer has ``harvest_timeout``
seconds in all, connection, redirects and every read of its body together (a server sending
a byte every few seconds is cut at it); a run may have a deadline (the staff page's "at most
60 seconds"), before which every answer and every wait for a busy repository's
``Retry-After`` must end. A run that reaches its deadline is :class:`HarvestStopped` with the
arguments of the request it did not finish: the harvest keeps the resumption token, and its
next run asks with it (OAI-PMH 2.0 §3.5); a token the repository no longer knows
(``badResumptionToken``) starts the list again.

>>> Bounds().answer_bytes // 2**20
64
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from xml.etree import ElementTree as ET

import httpx

from urnkit.resolver.domain import HarvestSource, ResolverError
from urnkit.resolver.representations.dublin_core import OAI_PMH
from urnkit.resolver.services.outbound import FetchError, fetch

GRANULARITIES = ("YYYY-MM-DD", "YYYY-MM-DDThh:mm:ssZ")
RETRIES = 3  # times a request is repeated when the repository answers 503 with Retry-After
MAX_WAIT = 300  # seconds of Retry-After waited; a longer wait fails the harvest


@dataclass(frozen=True, slots=True)
class Bounds:
    """What each answer of a harvest may take: ``answer_bytes`` at most, and
    ``answer_seconds`` in all (the ``harvest_max_bytes`` and ``harvest_timeout`` settings)."""

    answer_bytes: int = 64 * 2**20
    answer_seconds: float = 60.0


class HarvestError(ResolverError):
    """A harvest that could not be completed: the repository failed or answered nonsense."""

    title = "Harvest failed"


class HarvestStopped(Exception):  # noqa: N818 - not an error: the run's time was up
    """The run reached its deadline before the request for ``arguments`` was answered."""

    def __init__(self, arguments: dict[str, str]) -> None:
        super().__init__(f"stopped at the deadline before {arguments}")
        self.arguments = arguments


class Feed:
    """Requests to one repository through ``client`` (a guarded one) within ``bounds``, by
    ``deadline`` (``time.monotonic()``'s; None: none): each answer parsed, every failure a
    :class:`HarvestError` naming the source and the URL asked."""

    def __init__(
        self,
        source: HarvestSource,
        client: httpx.Client,
        bounds: Bounds,
        deadline: float | None = None,
    ) -> None:
        self.source = source
        self.client = client
        self.bounds = bounds
        self.deadline = deadline
        self.requests = 0

    def fail(self, what: str, url: str) -> HarvestError:
        return HarvestError(
            f"harvesting {self.source.name!r}: {what} ({url})", source=self.source.name, url=url
        )

    def seconds(self, arguments: dict[str, str], wait: float = 0.0) -> float:
        """The seconds the next answer may take after ``wait``: the answer's bound, or less
        before the run's deadline; :class:`HarvestStopped` when no time is left."""
        if self.deadline is None:
            return self.bounds.answer_seconds
        left = self.deadline - time.monotonic() - wait
        if left <= 0:
            raise HarvestStopped(arguments)
        return min(self.bounds.answer_seconds, left)

    def ask(self, **arguments: str) -> tuple[ET.Element, list[tuple[str, str]], str]:
        """The response's root element, its OAI-PMH errors (code, message) and the URL."""
        url = str(httpx.URL(self.source.base_url, params=arguments))
        for attempt in range(1 + RETRIES):
            self.requests += 1
            seconds = self.seconds(arguments)
            try:
                answer = fetch(self.client, url, self.bounds.answer_bytes, seconds)
            except FetchError as error:
                if error.timed_out and seconds < self.bounds.answer_seconds:
                    raise HarvestStopped(arguments) from None  # the run's deadline cut it
                raise self.fail(error.detail, url) from None
            # OAI-PMH 2.0 §3.1.2.2 (flow control): 503 with Retry-After asks us to come back.
            wait = answer.headers.get("Retry-After", "")
            if answer.status != 503 or not wait.isdigit() or int(wait) > MAX_WAIT:
                break
            if attempt < RETRIES:
                self.seconds(arguments, int(wait))  # no waiting past the deadline
                time.sleep(int(wait))
        if answer.status != 200:
            raise self.fail(f"HTTP {answer.status} {answer.reason}", url)
        try:
            root = ET.fromstring(answer.body)
        except ET.ParseError as error:
            raise self.fail(f"malformed XML: {error}", url) from None
        if root.tag != f"{{{OAI_PMH}}}OAI-PMH":
            raise self.fail(f"not an OAI-PMH response (the root element is {root.tag})", url)
        errors = [
            (error.get("code", ""), (error.text or "").strip())
            for error in root.iterfind(f"{{{OAI_PMH}}}error")
        ]
        return root, errors, url

    def answer(self, **arguments: str) -> tuple[ET.Element, str]:
        """:meth:`ask`, an OAI-PMH error being a failure."""
        root, errors, url = self.ask(**arguments)
        if errors:
            raise self.fail("; ".join(f"{code}: {message}" for code, message in errors), url)
        return root, url

    def granularity(self) -> str:
        """The repository's datestamp granularity, as Identify gives it."""
        root, url = self.answer(verb="Identify")
        granularity = root.findtext(f"{{{OAI_PMH}}}Identify/{{{OAI_PMH}}}granularity", "")
        if granularity.strip() not in GRANULARITIES:
            raise self.fail(f"Identify gives an unknown granularity {granularity!r}", url)
        return granularity.strip()

    def pages(
        self, arguments: dict[str, str], resume: str | None = None
    ) -> Iterator[tuple[ET.Element, list[ET.Element], str, bool]]:
        """Each ListRecords response, its records, its URL, and whether it begins the list
        (its ``responseDate`` is the next ``from=``), resumption tokens followed; from
        ``resume``'s response on when a token is given (the list again when the repository no
        longer knows it); noRecordsMatch is an empty list."""
        seen: set[str] = set()
        asked = arguments if resume is None else {"verb": "ListRecords", "resumptionToken": resume}
        while True:
            root, errors, url = self.ask(**asked)
            codes = [code for code, _ in errors]
            if resume is not None and codes == ["badResumptionToken"] and not seen:
                resume, asked = None, arguments  # expired meanwhile: the list from its start
                continue
            begins = "resumptionToken" not in asked
            if codes == ["noRecordsMatch"]:
                yield root, [], url, begins
                return
            if errors:
                raise self.fail("; ".join(f"{code}: {text}" for code, text in errors), url)
            listed = root.find(f"{{{OAI_PMH}}}ListRecords")
            if listed is None:
                raise self.fail("the response has no ListRecords element", url)
            yield root, listed.findall(f"{{{OAI_PMH}}}record"), url, begins
            token = listed.findtext(f"{{{OAI_PMH}}}resumptionToken", "").strip()
            if not token:
                return
            if token in seen:
                raise self.fail(f"the resumption token {token!r} came back: a loop", url)
            seen.add(token)
            asked = {"verb": "ListRecords", "resumptionToken": token}
