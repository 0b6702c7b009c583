"""The server fetches only the public internet, and harvests are bounded
(services/outbound.py, services/oai_feed.py): the address classes refused, link checks,
"recheck now" and harvests of local servers on 127.0.0.1 refused unless the operator allows
the network (``fetch_allowed_networks``), a redirect to a refused address refused; a huge
answer refused without being read, a trickling one cut at the run's deadline, which then
resumes. On SQLite and PostgreSQL where a database is involved.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from oai_support import OLD, PATTERN, Upstream
from resolver_support import urnkit
from services_support import LOCAL, Principals

from urnkit.resolver.domain import Location, address_class, fetch_refusal
from urnkit.resolver.services import Services
from urnkit.resolver.services.link_checker import CheckOptions, check_url
from urnkit.resolver.services.oai_feed import Bounds, HarvestError
from urnkit.resolver.services.outbound import fetch

CLASSES = [
    ("loopback", "127.0.0.0/8"),
    ("loopback", "::1/128"),
    ("private", "10.0.0.0/8"),  # RFC 1918
    ("private", "172.16.0.0/12"),
    ("private", "192.168.0.0/16"),
    ("link-local", "169.254.0.0/16"),  # the cloud's metadata service: 169.254.169.254
    ("link-local", "fe80::/10"),
    ("unique-local", "fc00::/7"),  # RFC 4193
    ("shared (carrier-grade NAT)", "100.64.0.0/10"),  # RFC 6598
    ("unspecified", "0.0.0.0/32"),
    ("unspecified", "::/128"),
    ("multicast", "224.0.0.0/4"),
    ("multicast", "ff00::/8"),
    ("reserved", "240.0.0.0/4"),
]
REFUSED = "refused: address 127.0.0.1 is loopback; allow it with fetch_allowed_networks"
QUICK = CheckOptions(per_host_interval=0.0, timeout=5.0)


@given(st.sampled_from(CLASSES), st.integers(min_value=0))
def test_each_address_class_is_refused_unless_its_network_is_allowed(
    kind_and_network: tuple[str, str], offset: int
) -> None:
    kind, text = kind_and_network
    network = ipaddress.ip_network(text)
    address = network[offset % network.num_addresses]
    assert address_class(address) == kind
    assert fetch_refusal(address, ()) == (
        f"address {address} is {kind}; allow it with fetch_allowed_networks"
    )
    assert fetch_refusal(address, (network,)) is None
    if address.version == 4:  # RFC 4291 §2.5.5.2: the IPv4 address inside is what is reached
        mapped = ipaddress.IPv6Address(f"::ffff:{address}")
        assert address_class(mapped) == kind
        assert fetch_refusal(mapped, (network,)) is None


@given(st.integers(min_value=0, max_value=2**32 - 1) | st.integers(2**125, 2**126 - 1))
def test_global_addresses_are_fetched(number: int) -> None:
    address = ipaddress.ip_address(number)
    assume(address.is_global and not address.is_multicast)
    assert address_class(address) is None
    assert fetch_refusal(address, ()) is None


# --- live: a local site on 127.0.0.1 ------------------------------------------------------------


class Site:
    """An HTTP server on 127.0.0.1: ``/ok`` answers 200, ``/away`` (whatever its query)
    redirects to ``away``; ``paths`` the paths asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.hosts: list[str] = []  # the Host header of each request
        self.away = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                site.paths.append(self.path)
                site.hosts.append(self.headers.get("host", ""))
                if self.path.split("?")[0] == "/away":
                    self.send_response(302)
                    self.send_header("Location", site.away)
                else:
                    self.send_response(200 if self.path == "/ok" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD  # noqa: N815

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def site() -> Iterator[Site]:
    made = Site()
    worker = threading.Thread(target=made.server.serve_forever, daemon=True)
    worker.start()
    yield made
    made.server.shutdown()
    made.server.server_close()
    worker.join()


def test_a_link_check_of_a_loopback_url_is_refused_until_its_network_is_allowed(
    site: Site,
) -> None:
    refused = asyncio.run(check_url(site.url("/ok"), QUICK))
    assert (refused.verdict, refused.http_status, refused.detail) == ("refused", None, REFUSED)
    assert site.paths == []  # never connected
    allowed = asyncio.run(check_url(site.url("/ok"), QUICK, LOCAL))
    assert (allowed.verdict, allowed.http_status) == ("ok", 200)
    assert site.paths == ["/ok"]


def test_a_redirect_from_an_allowed_server_to_a_loopback_address_is_refused(site: Site) -> None:
    # LOCAL allows 127.0.0.1 alone: 127.0.0.2 is loopback, this machine, and refused.
    site.away = f"http://127.0.0.2:{site.port}/ok"
    check = asyncio.run(check_url(site.url("/away"), QUICK, LOCAL))
    assert check.verdict == "refused"
    assert check.detail == (
        "refused: address 127.0.0.2 is loopback; allow it with fetch_allowed_networks "
        f"(redirected to {site.away})"
    )
    assert site.paths == ["/away"]  # HEAD alone: a refused check asks no GET


def test_the_name_is_looked_up_once_and_kept_for_the_host_header(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DNS rebinding: a name that answers an allowed address to the check and another to the
    # connection. The guard looks it up once and connects to the address it checked.
    lookups: list[str] = []
    answers = iter(["127.0.0.1", "10.0.0.5"])
    real = socket.getaddrinfo

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        return real(next(answers), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = f"http://rebind.example:{site.port}/ok"
    with LOCAL.client(5.0, {}) as client:
        answer = fetch(client, url, 1000, 5.0)
    assert (answer.status, lookups) == (200, ["rebind.example"])
    assert site.hosts == [f"rebind.example:{site.port}"]


def test_recheck_now_of_a_loopback_url_is_refused_and_resolution_keeps_it(
    services: Services, who: Principals, site: Site
) -> None:
    url = site.url("/ok")
    # Registering such a location stays allowed: legal-deposit copies live on intranets.
    services.records.put(who.demo, "URN:NBN:fi:demo-1", [Location(url)], {})
    guarded = Services(services.store)  # the default: no network allowed
    state = guarded.links.recheck(who.demo, url, QUICK)
    assert (state.status, state.detail, state.failures) == ("refused", REFUSED, 0)
    assert site.paths == []
    assert guarded.links.broken_links() == []  # refused is not broken
    resolution = guarded.resolution.resolve("URN:NBN:fi:demo-1")
    assert (resolution.kind, resolution.target) == ("redirect", url)
    assert services.links.recheck(who.demo, url, QUICK).status == "ok"  # allowed: fetched


def test_a_round_of_checks_counts_refused_urls_and_the_report_leaves_them_out(
    database_url: str, services: Services, who: Principals, site: Site
) -> None:
    services.records.put(who.demo, "URN:NBN:fi:demo-1", [Location(site.url("/ok"))], {})
    flags = ("--per-host-interval", "0", "--database-url", database_url)
    unallowed = {"URNKIT_FETCH_ALLOWED_NETWORKS": ""}  # the operator's default
    done = urnkit("links", "check", *flags, env=unallowed)
    assert "0 broken (0 newly), 0 failing, 1 refused, 0 recovered" in done.stdout
    assert site.paths == []
    report = urnkit("links", "report", "--format", "json", "--database-url", database_url)
    assert json.loads(report.stdout)["count"] == 0
    allowed = urnkit("links", "check", "--older-than", "0", *flags)  # the tests' allowance
    assert "1 URLs checked: 1 ok" in allowed.stdout
    assert site.paths == ["/ok"]


def _source(services: Services, upstream: Upstream, items: int) -> None:
    for n in range(items):
        upstream.add(
            f"oai:repo:{n}",
            OLD,
            identifier=[f"URN:NBN:fi:demo-h{n}", f"https://repo.example.org/items/{n}"],
        )
    services.harvest.add_source("repo", "Demo Library", upstream.base_url, PATTERN)


def test_a_harvest_of_a_loopback_repository_is_refused_until_allowed(
    services: Services, who: Principals, upstream: Upstream
) -> None:
    _source(services, upstream, 1)  # a source on an intranet may be added
    guarded = Services(services.store)
    with pytest.raises(HarvestError, match=re.escape(REFUSED)):
        guarded.harvest.harvest(guarded.harvest.sources(["repo"])[0])
    assert upstream.requests == []
    report = services.harvest.harvest(services.harvest.sources(["repo"])[0])
    assert report.created == 1


def test_a_harvest_redirected_to_a_loopback_address_is_refused(
    services: Services, who: Principals, site: Site
) -> None:
    site.away = f"http://127.0.0.2:{site.port}/oai"  # LOCAL allows 127.0.0.1 alone
    services.harvest.add_source("moved", "Demo Library", site.url("/away"), PATTERN)
    refused = "refused: address 127.0.0.2 is loopback; allow it with fetch_allowed_networks"
    with pytest.raises(HarvestError, match=re.escape(refused)):
        services.harvest.harvest(services.harvest.sources(["moved"])[0])
    assert site.paths == ["/away?verb=Identify"]


@pytest.mark.parametrize("how", ["huge", "declared"])
def test_a_huge_answer_is_refused_without_being_read(
    services: Services, who: Principals, upstream: Upstream, how: str
) -> None:
    _source(services, upstream, 1)
    bounded = Services(services.store, fetch_guard=LOCAL, harvest_bounds=Bounds(2**20, 30))
    upstream.break_with = how
    with pytest.raises(HarvestError, match="more than 1,048,576") as refused:
        bounded.harvest.harvest(bounded.harvest.sources(["repo"])[0])
    # What was sent stops at the limit and what the sockets' buffers took meanwhile.
    assert upstream.sent < 32 * 2**20
    assert bounded.harvest.last_runs()[bounded.harvest.sources(["repo"])[0].id].outcome == (
        "failed"
    )
    assert "bytes" in refused.value.detail


def test_an_answer_has_its_seconds_in_all_not_each_read(
    services: Services, who: Principals
) -> None:
    with Upstream(batch_size=2) as upstream:
        _source(services, upstream, 3)
        upstream.break_with = "trickle"  # a byte every 0.5 s: no read waits long
        bounded = Services(services.store, fetch_guard=LOCAL, harvest_bounds=Bounds(2**20, 2))
        started = time.monotonic()
        with pytest.raises(HarvestError, match="no whole answer within 2 s"):
            bounded.harvest.harvest(bounded.harvest.sources(["repo"])[0])
        assert time.monotonic() - started < 2 + 5


def test_a_trickling_answer_stops_the_run_at_its_deadline_and_the_next_run_resumes(
    services: Services, who: Principals
) -> None:
    with Upstream(batch_size=2) as upstream:
        _source(services, upstream, 5)
        upstream.break_with = "trickle"  # every page after the first, a byte every 0.5 s
        harvester = services.harvest
        started = time.monotonic()
        first = harvester.harvest(harvester.sources(["repo"])[0], seconds=3)
        assert time.monotonic() - started < 3 + 5  # not the ~17 minutes the trickle would take
        source = harvester.sources(["repo"])[0]
        token = source.resumption_token
        assert token is not None
        assert source.next_from is None
        assert first.created == 2
        assert first.stopped == (
            f"stopped after 3 s; the next run resumes with resumptionToken={token}"
        )
        assert harvester.last_runs()[source.id].outcome == "stopped"
        assert first.stopped in harvester.last_runs()[source.id].summary
        upstream.break_with = None
        asked = len(upstream.requests)
        second = harvester.harvest(source)
        # OAI-PMH 2.0 §3.5: the list goes on with the token it stopped at, not from its start.
        lists = [r for r in upstream.requests[asked:] if r.get("verb") == "ListRecords"]
        assert lists[0] == {"verb": "ListRecords", "resumptionToken": token}
        assert (second.resumed, second.created, second.stopped) == (token, 3, None)
        done = harvester.sources(["repo"])[0]
        assert done.resumption_token is None
        assert done.next_from == source.resumption_from  # the first run's responseDate
