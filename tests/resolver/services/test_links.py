"""Link checking, black-box: ``urnkit links check`` and the server's periodic job against local
HTTP servers (threads on 127.0.0.1), resolution through a running ``urnkit serve``, the broken
links report (CLI and API), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import Server, urnkit, urnkit_here, wait_for
from services_support import LOCAL, Principals

from urnkit.resolver.domain import (
    FAILURES_TO_BREAK,
    ForbiddenError,
    LinkCheck,
    LinkState,
    Location,
    NotFoundError,
    Verdict,
    next_link_state,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.link_checker import USER_AGENT, CheckOptions, check_url
from urnkit.resolver.store import Store, link_checks, url_hash

# --- local HTTP servers ---------------------------------------------------------------------------


@dataclass
class InFlight:
    """Requests being answered now, over any number of sites, and the most there ever were."""

    now: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


@dataclass(frozen=True)
class Seen:
    """A request a site answered: its method, path, User-Agent, and when it was being worked on
    (before the answer was sent)."""

    method: str
    path: str
    agent: str
    start: float
    end: float


class Site:
    """An HTTP server on 127.0.0.1 (a host of its own: its port) whose paths answer as set:
    ``status[path]`` for GET and HEAD (404 if unset), ``head[path]`` for HEAD alone,
    ``redirect[path]`` a 302 to another path, ``delay[path]`` seconds before answering."""

    def __init__(self, shared: InFlight | None = None, delay: float = 0.0) -> None:
        self.status: dict[str, int] = {}
        self.head: dict[str, int] = {}
        self.redirect: dict[str, str] = {}
        self.delay: dict[str, float] = {}
        self.default_delay = delay
        self.seen: list[Seen] = []
        self.arrived: list[tuple[str, str]] = []  # (method, path), as each request came
        self.here = InFlight()
        self.shared = shared or InFlight()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                self._answer("HEAD")

            def do_GET(self) -> None:
                self._answer("GET")

            def _answer(self, method: str) -> None:
                site.arrived.append((method, self.path))
                site.here.enter()
                site.shared.enter()
                start = time.monotonic()
                path = self.path
                time.sleep(site.delay.get(path, site.default_delay))
                end = time.monotonic()
                site.here.leave()
                site.shared.leave()
                agent = self.headers.get("user-agent", "")
                site.seen.append(Seen(method, path, agent, start, end))
                if path in site.redirect:
                    self.send_response(302)
                    self.send_header("Location", site.redirect[path])
                else:
                    status = site.head.get(path) if method == "HEAD" else None
                    self.send_response(status or site.status.get(path, 404))
                body = b"x" * 100_000
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if method == "GET":
                    with suppress(OSError):  # the checker reads no body: it may have gone
                        self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


# --- the resolver's database, set up in process ---------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    admin: str
    test: str
    other: str


def set_up(database_url: str) -> Tokens:
    """The schema, "Test Library" (fi:test) and "Other Library" (fi:other), and their tokens."""
    store = Store(database_url)
    try:
        store.upgrade()
        services = Services(store, fetch_guard=LOCAL)
        for name, prefix in (("Test Library", "fi:test"), ("Other Library", "fi:other")):
            services.admin.create_organisation(name)
            services.admin.delegate(name, prefix)
        return Tokens(
            admin=services.admin.create_token("Test Library", "admin"),
            test=services.admin.create_token("Test Library"),
            other=services.admin.create_token("Other Library"),
        )
    finally:
        store.close()


def put(server: Server, token: str, urn: str, *urls: str) -> None:
    """Register ``urn`` with locations at ``urls``, best first, through the API."""
    body = {"locations": [{"url": url, "priority": n} for n, url in enumerate(urls)]}
    headers = {"Authorization": f"Bearer {token}"}
    response = httpx.put(f"{server.base_url}/api/v1/urns/{urn}", json=body, headers=headers)
    assert response.status_code == 201, response.text


def resolve(server: Server, urn: str) -> httpx.Response:
    """``GET /{urn}`` as a client that takes anything (a JSON client would get the record)."""
    return httpx.get(f"{server.base_url}/{urn}", headers={"Accept": "*/*"})


def check(database_url: str, *flags: str) -> str:
    """Run ``urnkit links check`` in this process (quick settings for local servers); its
    summary line."""
    quick = ("--per-host-interval", "0", "--timeout", "2")
    done = urnkit_here("links", "check", "--database-url", database_url, *quick, *flags)
    return done.stdout.strip()


def checks_of(database_url: str, url: str) -> list[tuple[datetime, str, int | None]]:
    """The stored checks of ``url``, oldest first: when, verdict, HTTP status."""
    store = Store(database_url)
    try:
        with store.snapshot() as tx:
            rows = tx.connection.execute(
                sa.select(link_checks.c.at, link_checks.c.status, link_checks.c.http_status)
                .where(link_checks.c.url_hash == url_hash(url))
                .order_by(link_checks.c.id)
            ).all()
        return [(at if at.tzinfo else at.replace(tzinfo=UTC), s, h) for at, s, h in rows]
    finally:
        store.close()


def states(database_url: str, *urls: str) -> dict[str, LinkState]:
    store = Store(database_url)
    try:
        return Services(store, fetch_guard=LOCAL).links.link_states(urls)
    finally:
        store.close()


# --- one check ------------------------------------------------------------------------------------


def test_what_a_check_finds(site: Site) -> None:
    site.status |= {"/ok": 200, "/gone": 410, "/error": 500, "/locked": 403, "/slow": 200}
    site.status |= {"/no-head": 200, "/head-404": 200, "/end": 200}
    site.head |= {"/no-head": 405, "/head-404": 404}
    site.redirect |= {"/r2": "/r1", "/r1": site.url("/end"), "/loop": "/loop"}
    site.redirect["/to-ftp"] = "ftp://127.0.0.1/x"
    site.delay["/slow"] = 2.0
    options = CheckOptions(per_host_interval=0, timeout=0.5)

    def found(path: str) -> LinkCheck:
        return asyncio.run(check_url(site.url(path), options, LOCAL))

    ok = found("/ok")
    assert (ok.verdict, ok.http_status, ok.detail) == ("ok", 200, "HEAD 200 OK")
    gone = found("/gone")
    assert (gone.verdict, gone.http_status) == ("gone", 410)
    assert gone.detail == "GET 410 Gone (HEAD: 410)"  # HEAD's answer is confirmed by GET
    assert found("/missing").verdict == "gone"  # 404
    assert (found("/error").verdict, found("/error").http_status) == ("failed", 500)
    assert found("/locked").verdict == "ok"  # there, behind access control
    no_head = found("/no-head")  # HEAD refused (405): GET decides
    assert (no_head.verdict, no_head.detail) == ("ok", "GET 200 OK (HEAD: 405)")
    assert found("/head-404").verdict == "ok"
    redirected = found("/r2")
    assert redirected.verdict == "ok"
    assert redirected.detail == f"HEAD 200 OK after 2 redirects (to {site.url('/end')})"
    loop = found("/loop")
    assert (loop.verdict, loop.http_status) == ("failed", 302)
    assert "more than 10 redirects" in loop.detail
    to_ftp = found("/to-ftp")
    assert (to_ftp.verdict, to_ftp.http_status) == ("failed", 302)
    assert to_ftp.detail.startswith("GET: redirected to 'ftp://127.0.0.1/x', not a usable")
    began = time.monotonic()
    slow = found("/slow")
    assert (slow.verdict, slow.http_status) == ("failed", None)
    assert slow.detail == "no answer within 0.5 s"
    assert time.monotonic() - began < 1.5  # HEAD timed out: no GET after it
    assert [method for method, path in site.arrived if path == "/slow"] == ["HEAD"]
    assert {s.agent for s in site.seen} == {USER_AGENT}
    assert USER_AGENT.startswith("urnkit/")
    site.server.shutdown()
    site.server.server_close()
    refused = found("/ok")
    assert (refused.verdict, refused.http_status) == ("failed", None)
    assert refused.detail.startswith("GET: ConnectError")


verdicts = st.lists(st.sampled_from(["ok", "gone", "failed"]), min_size=1, max_size=12)


@given(verdicts)
def test_broken_means_gone_or_failing_again_and_again(sequence: list[Verdict]) -> None:
    # A model of the rule: the failures are the trailing run of verdicts that are not ok; the
    # link is broken when that run holds a "gone" or is FAILURES_TO_BREAK long, else ok.
    state = None
    for n, verdict in enumerate(sequence):
        at = datetime(2026, 1, 1, 0, 0, n, tzinfo=UTC)
        before = state
        state = next_link_state(state, LinkCheck("https://x.example/", verdict, None, "", at))
        run = sequence[: n + 1]
        trailing = len(run) - max((i + 1 for i, v in enumerate(run) if v == "ok"), default=0)
        tail = run[len(run) - trailing :]
        assert state.failures == trailing
        broken = "gone" in tail or trailing >= FAILURES_TO_BREAK
        assert state.status == ("broken" if broken else "ok")
        changed = before is None or before.status != state.status
        assert (state.since == at) == changed
        assert state.checked == at


# --- urnkit links check and resolution ------------------------------------------------------------


def test_resolution_skips_broken_links_and_takes_them_back(database_url: str, site: Site) -> None:
    tokens = set_up(database_url)
    site.status |= {"/a1": 404, "/a2": 200, "/b1": 500, "/b2": 200, "/c1": 200, "/c2": 200}
    a1, a2, b1, b2, c1, c2 = (site.url(p) for p in ("/a1", "/a2", "/b1", "/b2", "/c1", "/c2"))
    with Server(database_url) as server:
        put(server, tokens.test, "urn:nbn:fi:test-a", a1, a2)
        put(server, tokens.test, "urn:nbn:fi:test-b", b1, b2)
        put(server, tokens.test, "urn:nbn:fi:test-c", c1, c2)
        assert resolve(server, "urn:nbn:fi:test-a").headers["location"] == a1  # not checked yet

        summary = check(database_url)
        assert summary.startswith("6 URLs checked: 4 ok, 1 broken (1 newly), 1 failing")
        # RFC 8458 §4.4: resolution leads to the resource: past a 404, to the next location.
        assert resolve(server, "urn:nbn:fi:test-a").headers["location"] == a2
        assert resolve(server, "urn:nbn:fi:test-b").headers["location"] == b1  # one 500 only

        site.status |= {"/a1": 200, "/c1": 410, "/c2": 404}
        check(database_url)
        assert resolve(server, "urn:nbn:fi:test-a").headers["location"] == a1  # back
        assert resolve(server, "urn:nbn:fi:test-b").headers["location"] == b1  # two 500s
        # Every location broken: the record's page (RFC 8458 §4.5), not a dead redirect.
        every_broken = resolve(server, "urn:nbn:fi:test-c")
        assert every_broken.status_code == 200
        assert "location" not in every_broken.headers
        assert "urn:nbn:fi:test-c" in every_broken.text

        check(database_url)
        assert resolve(server, "urn:nbn:fi:test-b").headers["location"] == b2  # three: broken

        site.status["/b1"] = 200
        assert check(database_url).startswith("6 URLs checked: 4 ok, 2 broken (0 newly)")
        assert resolve(server, "urn:nbn:fi:test-b").headers["location"] == b1
        # A URN written later with a known broken location resolves past it at once.
        put(server, tokens.test, "urn:nbn:fi:test-d", c2, a2)
        assert resolve(server, "urn:nbn:fi:test-d").headers["location"] == a2

    assert [(v, h) for _, v, h in checks_of(database_url, b1)] == [
        ("failed", 500),
        ("failed", 500),
        ("failed", 500),
        ("ok", 200),
    ]
    known = states(database_url, b1, c1, "https://never.example/")
    assert set(known) == {b1, c1}
    assert (known[b1].status, known[b1].failures, known[b1].http_status) == ("ok", 0, 200)
    assert known[b1].since == known[b1].checked  # it has just recovered
    assert (known[c1].status, known[c1].detail) == ("broken", "GET 410 Gone (HEAD: 410)")
    assert check(database_url, "--older-than", "3600").startswith("0 URLs checked")


def test_politeness_per_host_and_bounded_concurrency(database_url: str) -> None:
    set_up(database_url)
    shared = InFlight()
    sites = [Site(shared, delay=0.1), Site(shared, delay=0.3), Site(shared), Site(shared, 0.3)]
    busy = sites[0]
    urls = [busy.url(f"/{n}") for n in range(5)]
    urls += [s.url(f"/{n}") for s in sites[1:] for n in range(2)]
    for s in sites:
        s.status |= {f"/{n}": 200 for n in range(5)}
    store = Store(database_url)
    services = Services(store, fetch_guard=LOCAL)
    admin = services.access.authenticate(services.admin.create_token("Test Library", "admin"))
    for n, url in enumerate(urls):
        services.records.put(admin, f"urn:nbn:fi:test-{n}", [Location(url)], {})
    store.close()
    flags = ("--concurrency", "2", "--per-host-interval", "0.3", "--timeout", "5")
    with sites[0], sites[1], sites[2], sites[3]:
        done = urnkit_here("links", "check", "--database-url", database_url, *flags)
    assert done.stdout.startswith("11 URLs checked: 11 ok")
    for s in sites:
        assert s.here.most == 1  # one request at a time per host
        starts = sorted(seen.start for seen in s.seen)
        gaps = [later - earlier for earlier, later in pairwise(starts)]
        # From the end of one answer to the next request: 0.3 s at least.
        assert all(gap >= 0.3 for gap in gaps), gaps
    assert len(busy.seen) == 5
    assert shared.most == 2  # two in flight at most, and the two were used


# --- the report -----------------------------------------------------------------------------------


def test_broken_links_report_per_owner(database_url: str, site: Site, tmp_path: Path) -> None:
    tokens = set_up(database_url)
    site.status |= {"/fine": 200}
    mine, theirs, fine = site.url("/mine"), site.url("/theirs"), site.url("/fine")
    with Server(database_url) as server:
        put(server, tokens.test, "urn:nbn:fi:test-1", mine, fine)
        put(server, tokens.other, "urn:nbn:fi:other-1", theirs)
        check(database_url)
        base = server.base_url + "/api/v1/links/broken"

        def get(token: str | None, **params: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return httpx.get(base, params=params, headers=headers)

        assert get(None).status_code == 401
        own = get(tokens.test)
        assert own.status_code == 200
        assert own.json()["owner"] == "Test Library"
        assert [(b["urn"], b["url"], b["http_status"]) for b in own.json()["links"]] == [
            ("urn:nbn:fi:test-1", mine, 404)
        ]
        refused = get(tokens.test, owner="Other Library")
        assert refused.status_code == 403
        assert "Other Library" in refused.json()["detail"]
        assert [b["url"] for b in get(tokens.admin, owner="Other Library").json()["links"]] == [
            theirs
        ]
        every = get(tokens.admin).json()
        assert (every["owner"], every["count"]) == (None, 2)
        assert [b["owner"] for b in every["links"]] == ["Other Library", "Test Library"]
        assert get(tokens.admin, owner="Nobody").status_code == 404

    url = ("--database-url", database_url)
    table = urnkit_here("links", "report", "--owner", "Test Library", *url).stdout
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [(r["owner"], r["urn"], r["url"], r["status"]) for r in rows] == [
        ("Test Library", "urn:nbn:fi:test-1", mine, "broken")
    ]
    assert rows[0]["http_status"] == "404"
    assert rows[0]["detail"] == "GET 404 Not Found (HEAD: 404)"
    assert rows[0]["since"]
    assert rows[0]["checked"]
    urnkit_here("links", "report", "-o", str(tmp_path / "all.json"), *url)
    report = json.loads((tmp_path / "all.json").read_text())
    assert report["count"] == 2
    assert {b["url"] for b in report["links"]} == {mine, theirs}
    unknown = urnkit_here("links", "report", "--owner", "Nobody", *url, check=False)
    assert unknown.returncode == 1
    assert "no organisation is called 'Nobody'" in unknown.stderr
    bad = urnkit("links", "check", "--timeout", "soon", *url, check=False)
    assert bad.returncode == 2
    assert "must be a number of seconds" in bad.stderr
    never = urnkit("links", "check", "--timeout", "0", *url, check=False)
    assert never.returncode == 2
    assert "--timeout must be more than 0 seconds" in never.stderr


# --- the server's periodic job --------------------------------------------------------------------


def test_servers_check_links_periodically_and_share_the_work(database_url: str, site: Site) -> None:
    tokens = set_up(database_url)
    site.status |= {"/up": 200}
    down, up = site.url("/down"), site.url("/up")
    job = {"URNKIT_LINK_CHECK_INTERVAL": "2"}
    with Server(database_url, env=job) as first, Server(database_url, env=job):
        put(first, tokens.test, "urn:nbn:fi:test-1", down, up)
        wait_for(
            lambda: resolve(first, "urn:nbn:fi:test-1").headers["location"] == up,
            "resolution to pass over the broken location",
            seconds=30,
        )
        wait_for(lambda: len(checks_of(database_url, up)) >= 2, "two rounds of checks", seconds=30)
    # Two processes, one database: one round at a time, each URL once a round, and the host
    # never asked twice at once.
    for url in (down, up):
        moments = [at for at, _, _ in checks_of(database_url, url)]
        gaps = [(b - a).total_seconds() for a, b in pairwise(moments)]
        assert all(gap >= 1.9 for gap in gaps), gaps
    assert site.here.most == 1


def test_one_round_at_a_time_on_a_database(database_url: str) -> None:
    set_up(database_url)
    first, second = Store(database_url), Store(database_url)  # as two processes would
    try:
        with first.lock("links", wait=False) as held:
            assert held
            with second.lock("links", wait=False) as also:
                assert not also
        with second.lock("links", wait=False) as held:
            assert held
    finally:
        first.close()
        second.close()


FAST = CheckOptions(per_host_interval=0.0, timeout=5.0)


# --- one URL rechecked now, by an organisation holding a location there ---------------------------


def test_a_holder_rechecks_one_url_now(services: Services, who: Principals, site: Site) -> None:
    site.status |= {"/gone": 404, "/here": 200}
    gone, here = site.url("/gone"), site.url("/here")
    urn = "URN:NBN:fi:demo-1"
    services.records.put(who.demo, urn, [Location(gone, 1), Location(here, 2)], {})
    key = urn.lower()
    assert services.store.resolution_row(key)[1] == f"{gone}\n{here}"  # type: ignore[index]

    state = services.links.recheck(who.demo, gone, FAST)
    assert (state.status, state.http_status) == ("broken", 404)  # a 404: broken at once
    assert site.arrived == [("HEAD", "/gone"), ("GET", "/gone")]
    # RFC 8458 §4.4: resolution leads past the broken link from the commit on.
    assert services.store.resolution_row(key)[1] == here  # type: ignore[index]
    assert [b.link.url for b in services.links.broken_links_for(who.demo, None)[1]] == [gone]

    site.status["/gone"] = 200
    assert services.links.recheck(who.admin, gone, FAST).status == "ok"
    assert services.store.resolution_row(key)[1] == f"{gone}\n{here}"  # type: ignore[index]
    assert [c[1] for c in checks_of(services.store.url, gone)] == ["gone", "ok"]


def test_only_a_holder_rechecks_a_url(services: Services, who: Principals, site: Site) -> None:
    url = site.url("/x")
    services.records.put(who.demo, "URN:NBN:fi:demo-1", [Location(url)], {})
    with pytest.raises(ForbiddenError) as refused:
        services.links.recheck(who.other, url, FAST)
    assert refused.value.extensions["field"] == "url"
    with pytest.raises(NotFoundError) as unknown:
        services.links.recheck(who.demo, site.url("/nowhere"), FAST)
    assert unknown.value.extensions["field"] == "url"
    assert site.arrived == []  # nothing was asked of the site
