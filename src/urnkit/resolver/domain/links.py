"""Link checking's rules: what an HTTP answer says of a location URL, and how checks add up to a
broken link, which resolution then skips."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

LinkStatus = Literal["ok", "broken", "refused"]
Verdict = Literal["ok", "gone", "failed", "refused"]
FAILURES_TO_BREAK = 3
"""Consecutive failed checks (timeouts, refused connections, 5xx …) that make a link broken: one
bad minute of a repository does not reroute resolution; a 404 or 410 does at once."""


def link_verdict(http_status: int) -> Verdict:
    """What an HTTP answer says of a link: ``ok`` (2xx; or 401/403: the resource is there behind
    access control, as legal deposit copies often are), ``gone`` (404, 410: broken at once), or
    ``failed`` (anything else: broken after :data:`FAILURES_TO_BREAK` in a row).

    >>> link_verdict(200), link_verdict(403), link_verdict(410), link_verdict(503)
    ('ok', 'ok', 'gone', 'failed')
    """
    if 200 <= http_status < 300 or http_status in (401, 403):
        return "ok"
    return "gone" if http_status in (404, 410) else "failed"


@dataclass(frozen=True, slots=True)
class LinkCheck:
    """One check of a location URL: the verdict, the final HTTP status if any answer came, and
    what happened in words (``"GET 200 OK (HEAD: 405)"``, ``"timed out after 10 s"``). A
    ``refused`` check fetched nothing: the URL, or a redirect, leads to an address the server
    does not fetch from (``services.outbound``)."""

    url: str
    verdict: Verdict
    http_status: int | None
    detail: str
    at: datetime


@dataclass(frozen=True, slots=True)
class LinkState:
    """What link checking knows of a URL: ``broken`` links are left out of resolution;
    ``refused`` ones (not fetched: not the public internet) are not known to be broken, and
    resolution keeps them. ``failures`` counts consecutive failed checks, ``since`` is when
    the status last changed, ``checked`` when the URL was last taken for checking (None: not
    yet)."""

    url: str
    status: LinkStatus
    http_status: int | None
    detail: str | None
    failures: int
    since: datetime
    checked: datetime | None


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """A location of a record whose link is broken, for its owner's report."""

    owner: str
    urn: str
    link: LinkState


def next_link_state(previous: LinkState | None, check: LinkCheck) -> LinkState:
    """A URL's state after ``check``: ok at once on an answer that is ok; broken at once when
    gone; broken after :data:`FAILURES_TO_BREAK` consecutive failures, else as it was; refused
    (no failure: nothing was fetched) when the check was.

    >>> from datetime import UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> state = None
    >>> for _ in range(FAILURES_TO_BREAK):
    ...     state = next_link_state(state, LinkCheck("https://x.example/", "failed", 503, "", t))
    ...     print(state.status, state.failures)
    ok 1
    ok 2
    broken 3
    >>> next_link_state(state, LinkCheck("http://10.0.0.5/", "refused", None, "", t)).status
    'refused'
    """
    failed = check.verdict in ("gone", "failed")
    failures = (previous.failures if previous else 0) + 1 if failed else 0
    status: LinkStatus
    if check.verdict == "ok" or check.verdict == "refused":
        status = check.verdict
    elif check.verdict == "gone" or failures >= FAILURES_TO_BREAK:
        status = "broken"
    else:
        status = previous.status if previous else "ok"
    since = previous.since if previous is not None and previous.status == status else check.at
    return LinkState(check.url, status, check.http_status, check.detail, failures, since, check.at)
