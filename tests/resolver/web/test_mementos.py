"""Time travel black-box (RFC 7089 Memento) on SQLite and PostgreSQL: a real ``urnkit serve``
with a web archive named, the Memento project's client (memento_client) negotiating a datetime
against ``/{urn}``; the acceptance scenario (location A, then B from T, then deactivated for a
successor): before T leads to A, from T to B; the TimeMap lists every version and ``/{urn}``
links to it; a record whose locations are all broken offers its archived copy; the RFC's
headers on every answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.etree import ElementTree as ET

import httpx
import pytest
import requests
import rispy
from bibtexparser.entrypoint import parse_string
from memento_client import MementoClient
from resolver_support import (
    BROWSER,
    DATABASES,
    JSON,
    Server,
    fresh_database,
    set_up_resolver,
    urnkit_here,
)

from urnkit.resolver.domain import LinkCheck, next_link_state, parse_urn
from urnkit.resolver.store import Store

DC = "http://purl.org/dc/elements/1.1/"
ARCHIVE = "https://web.archive.org/web/{datetime}/{url}"
HTTP_DATE = "%a, %d %b %Y %H:%M:%S GMT"
ROOMS, IN_ROOMS = "10.78.0.0/16", "10.78.1.2"  # Test Library's reading rooms, an address there


class _Ok(BaseHTTPRequestHandler):
    """A repository whose every path is there."""

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.do_HEAD()

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass(frozen=True)
class Deployment:
    base: str
    database_url: str
    token: str
    site: str  # a repository on 127.0.0.1 answering 200 on every path

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=30)


@pytest.fixture(scope="module", params=DATABASES)
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    directory: Path = tmp_path_factory.mktemp("time-travel")
    site = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        with fresh_database(request.param, directory) as url:
            tokens = set_up_resolver(url)
            urnkit_here(
                "admin", "network", "set", "Test Library", "rooms", ROOMS, "--database-url", url
            )
            env = {"URNKIT_WEB_ARCHIVES": ARCHIVE, "URNKIT_TRUSTED_PROXIES": "127.0.0.1"}
            with Server(url, env=env) as server:
                yield Deployment(
                    server.base_url,
                    url,
                    tokens["registrant_token"],
                    f"http://127.0.0.1:{site.server_address[1]}",
                )
    finally:
        site.shutdown()
        site.server_close()


def _next_second() -> None:
    """Wait until the clock reaches the next second: a version a second (RFC 7089 §2.1.1)."""
    now = time.time()
    time.sleep(1 - (now % 1) + 0.01)


@dataclass(frozen=True)
class Scenario:
    urn: str
    a: str
    b: str
    t: datetime  # when the location became B


@pytest.fixture(scope="module")
def scenario(deployment: Deployment) -> Scenario:
    """Made at A, moved to B at T, deactivated for a successor: three versions."""
    urn = f"URN:NBN:fi:test-tt{time.time_ns()}"
    a, b = f"{deployment.site}/a", f"{deployment.site}/b"
    with deployment.client(deployment.token) as api:
        api.put(f"/api/v1/urns/{urn}", json={"locations": [{"url": a}]}).raise_for_status()
        _next_second()
        api.patch(f"/api/v1/urns/{urn}", json={"locations": [{"url": b}]}).raise_for_status()
        _next_second()
        api.put(f"/api/v1/urns/{urn}-next", json={"locations": [{"url": b}]}).raise_for_status()
        api.post(
            f"/api/v1/urns/{urn}/deactivate",
            json={"note": "superseded", "successors": [f"{urn}-next"]},
        ).raise_for_status()
        timemap = api.get(f"/timemap/json/{urn}").json()
    t = datetime.fromisoformat(timemap["mementos"][1]["datetime"])
    return Scenario(urn, a, b, t)


def _negotiate(deployment: Deployment, urn: str, moment: datetime) -> requests.Response:
    """The client's HEAD with Accept-Datetime to the TimeGate, redirects followed."""
    accept = MementoClient.convert_to_http_datetime(moment.replace(tzinfo=None))
    answer: requests.Response = MementoClient.request_head(
        f"{deployment.base}/{urn}", accept_datetime=accept, follow_redirects=True
    )
    return answer


def test_memento_client_is_led_to_a_before_t_and_to_b_from_t(
    deployment: Deployment, scenario: Scenario
) -> None:
    # RFC 7089 §4.1.1: /{urn} is its own TimeGate, 302-style; its Memento then redirects as
    # resolution did at that moment.
    client = MementoClient(check_native_timegate=False)
    for moment, expected in (
        (scenario.t - timedelta(seconds=1), scenario.a),
        (scenario.t, scenario.b),
        (datetime(1990, 1, 1, tzinfo=UTC), scenario.a),  # §4.5.3: before it existed: the first
    ):
        answer = _negotiate(deployment, scenario.urn, moment)
        timegate, memento = answer.history
        assert MementoClient.is_timegate(timegate.url, response=timegate)
        assert MementoClient.is_memento(memento.url, response=memento)
        assert answer.url == expected
        info = client.get_memento_info(
            f"{deployment.base}/{scenario.urn}",
            moment.replace(tzinfo=None),
            tg_response=answer,
        )
        assert info["mementos"]["closest"]["uri"] == [expected]
        assert info["mementos"]["first"]["datetime"] <= moment.replace(tzinfo=None) or (
            moment.year == 1990
        )


def test_a_json_client_gets_the_version_as_a_memento(
    deployment: Deployment, scenario: Scenario
) -> None:
    before = MementoClient.convert_to_http_datetime(
        scenario.t.replace(tzinfo=None) - timedelta(seconds=1)
    )
    with deployment.client() as client:
        answer = client.get(
            f"/{scenario.urn}",
            headers={"Accept-Datetime": before, "Accept": JSON},
            follow_redirects=True,
        )
    assert answer.status_code == 200
    assert [loc["url"] for loc in answer.json()["locations"]] == [scenario.a]
    assert MementoClient.convert_to_datetime(
        answer.headers["memento-datetime"]
    ) < scenario.t.replace(tzinfo=None)
    rels = MementoClient.get_uri_dt_for_rel(
        MementoClient.parse_link_header(answer.headers["link"]),
        ["original", "timegate", "timemap", "first", "last", "next"],
    )
    key = parse_urn(scenario.urn).equivalence_key()  # as cite-as names it
    assert rels["original"]["uri"] == f"{deployment.base}/{key}"
    assert rels["next"]["datetime"] == [scenario.t.strftime(HTTP_DATE)]


def test_the_timemap_lists_every_version_and_resolution_links_to_it(
    deployment: Deployment, scenario: Scenario
) -> None:
    with deployment.client() as client:
        gone = client.get(f"/{scenario.urn}", headers={"Accept": BROWSER})
        links = MementoClient.parse_link_header(gone.headers["link"])
        (timemap_url,) = (
            uri
            for uri, link in links.items()
            if "timemap" in link["rel"] and link.get("type") == ["application/link-format"]
        )
        timemap = client.get(timemap_url)
    assert gone.status_code == 410
    assert "accept-datetime" in gone.headers["vary"].lower()
    assert timemap.headers["content-type"] == "application/link-format"
    listed = MementoClient.parse_link_header(timemap.text)
    mementos = sorted(
        MementoClient.convert_to_datetime(link["datetime"][0])
        for link in listed.values()
        if "memento" in link["rel"]
    )
    assert len(mementos) == 3
    assert mementos[1] == scenario.t.replace(tzinfo=None)
    # The redirect of the successor, answered ahead of routing, links to its TimeMap too.
    with deployment.client() as client:
        redirect = client.get(f"/{scenario.urn}-next")
    assert redirect.status_code == 302
    found = MementoClient.get_uri_dt_for_rel(
        MementoClient.parse_link_header(redirect.headers["link"]), ["timegate", "timemap"]
    )
    key = parse_urn(f"{scenario.urn}-next").equivalence_key()
    assert found["timegate"]["uri"] == f"{deployment.base}/{key}"
    assert "accept-datetime" in redirect.headers["vary"].lower()


def test_a_malformed_accept_datetime_is_refused(deployment: Deployment, scenario: Scenario) -> None:
    # RFC 7089 §4.5.3: 400.
    with deployment.client() as client:
        answer = client.get(f"/{scenario.urn}", headers={"Accept-Datetime": "last year"})
    assert answer.status_code == 400
    assert "Accept-Datetime" in answer.json()["detail"]


def _check(store: Store, url: str, verdict: str, at: datetime) -> None:
    """A check of ``url`` as link checking saves it (no test site is broken on demand)."""
    check = LinkCheck(url, verdict, 200 if verdict == "ok" else 404, verdict, at)  # type: ignore[arg-type]
    with store.transaction() as tx:
        previous = tx.links.states([url]).get(url)
        tx.links.save_checks([next_link_state(previous, check)], [check])
        tx.links.refresh_targets({url})


def test_a_record_whose_locations_are_all_broken_offers_its_archived_copy(
    deployment: Deployment,
) -> None:
    urn = f"URN:NBN:fi:test-ar{time.time_ns()}"
    gone = "https://repository.example/thesis.pdf"
    seen = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    with deployment.client(deployment.token) as api:
        api.put(f"/api/v1/urns/{urn}", json={"locations": [{"url": gone}]}).raise_for_status()
    store = Store(deployment.database_url)
    try:
        _check(store, gone, "ok", seen)
        _check(store, gone, "gone", seen + timedelta(days=30))
    finally:
        store.close()
    copy = f"https://web.archive.org/web/20240506070809/{gone}"
    with deployment.client() as client:
        record = client.get(f"/{urn}", headers={"Accept": JSON})
        page = client.get(f"/{urn}", headers={"Accept": BROWSER})
    assert record.json()["archived"] == [
        {"url": copy, "location": gone, "datetime": "2024-05-06T07:08:09+00:00"}
    ]
    # Robust Links: the copy as rel="memento" with its datetime, in the page and its Link.
    assert page.status_code == 200
    assert f'href="{copy}" rel="memento"' in page.text
    assert 'data-versiondate="2024-05-06"' in page.text
    links = MementoClient.parse_link_header(page.headers["link"])
    assert links[copy]["rel"] == ["memento"]
    assert links[copy]["datetime"] == ["Mon, 06 May 2024 07:08:09 GMT"]


def test_a_restricted_location_stays_restricted_in_the_past(deployment: Deployment) -> None:
    # A copy restricted to the reading rooms is in a version only for a client inside them,
    # and what a version shows then is not for caches to keep.
    urn = f"URN:NBN:fi:test-rr{time.time_ns()}"
    shut, open_ = "https://library.example/deposit", "https://example.org/open"
    located = [{"url": shut, "restricted_to": "rooms"}, {"url": open_, "priority": 2}]
    with deployment.client(deployment.token) as api:
        api.put(f"/api/v1/urns/{urn}", json={"locations": located}).raise_for_status()
        _next_second()
        api.patch(f"/api/v1/urns/{urn}", json={"locations": [{"url": open_}]}).raise_for_status()
    with deployment.client() as client:
        first = client.get(f"/timemap/json/{urn}").json()["mementos"][0]["uri"]
        outside = client.get(first)
        inside = client.get(first, headers={"X-Forwarded-For": IN_ROOMS})
        outside_json = client.get(first, headers={"Accept": JSON})
        listed = client.get(first, headers={"Accept": "text/uri-list"})
        listed_inside = client.get(
            first, headers={"Accept": "text/uri-list", "X-Forwarded-For": IN_ROOMS}
        )
        timemap = client.get(f"/timemap/link/{urn}")
    assert outside.headers["location"] == open_
    assert inside.headers["location"] == shut
    assert [loc["url"] for loc in outside_json.json()["locations"]] == [open_]
    assert [line for line in listed.text.splitlines() if line[:1] != "#"] == [open_]
    assert [line for line in listed_inside.text.splitlines() if line[:1] != "#"] == [shut, open_]
    for answer in (outside, inside, outside_json, listed, listed_inside, timemap):
        assert answer.headers["cache-control"] == "no-store"
        assert "memento-datetime" in answer.headers or answer is timemap


def _versions(deployment: Deployment, urn: str) -> list[str]:
    """The Mementos of ``urn``'s record, oldest first, as its JSON TimeMap lists them."""
    with deployment.client() as client:
        timemap = client.get(f"/timemap/json/{urn}").json()
    return [memento["uri"] for memento in timemap["mementos"]]


def _is_memento(answer: httpx.Response, url: str) -> None:
    """RFC 7089 §2.1.1 and §2.2: the Memento's datetime, and its Link names it a memento."""
    assert answer.headers["memento-datetime"].endswith(" GMT")
    links = MementoClient.parse_link_header(answer.headers["link"])
    assert "memento" in links[url]["rel"]
    assert links[url]["datetime"] == [answer.headers["memento-datetime"]]
    assert answer.headers["vary"] == "Accept"


def test_every_version_answers_in_every_representation(
    deployment: Deployment, scenario: Scenario
) -> None:
    # Issue 34: each Memento (RFC 7089 §4.1.2) in what /{urn} gives, chosen by Accept.
    first, moved, _ = _versions(deployment, scenario.urn)
    with deployment.client() as client:
        answers = {
            accept: client.get(moved, headers={"Accept": accept})
            for accept in (
                "application/xml",
                "text/uri-list",
                "application/linkset+json",
                "application/linkset",
                "application/x-bibtex",
                "application/x-research-info-systems",
                "application/vnd.citationstyles.csl+json",
                "text/x-bibliography; style=apa",
            )
        }
        then = client.get(first, headers={"Accept": "text/uri-list"}).text
    for accept, answer in answers.items():
        assert answer.status_code == 200, accept
        assert answer.headers["content-type"].startswith(accept.partition(";")[0]), accept
        _is_memento(answer, moved)
    assert then.splitlines()[-1] == scenario.a  # RFC 2483 §5: the locations then
    assert answers["text/uri-list"].text.splitlines()[-1] == scenario.b
    dc = ET.fromstring(answers["application/xml"].content)
    identifiers = [element.text for element in dc.iter(f"{{{DC}}}identifier")]
    assert scenario.urn in identifiers
    # RFC 9264 §4.2 and §4.1: the version's links, its own address their context
    (context,) = answers["application/linkset+json"].json()["linkset"]
    assert context["anchor"] == moved
    assert [target["href"] for target in context["alternate"]] == [scenario.b]
    assert "memento" in " ".join(context)
    text_form = MementoClient.parse_link_header(answers["application/linkset"].text)
    assert text_form[scenario.b]["anchor"] == [moved]
    (entry,) = parse_string(answers["application/x-bibtex"].text).entries
    key = parse_urn(scenario.urn).equivalence_key()
    assert entry.fields_dict["url"].value == f"{deployment.base}/{key}"
    (ris,) = rispy.loads(answers["application/x-research-info-systems"].text)
    assert ris["urls"] == [f"{deployment.base}/{key}"]
    (item,) = answers["application/vnd.citationstyles.csl+json"].json()
    assert item["URL"] == f"{deployment.base}/{key}"
    assert key in answers["text/x-bibliography; style=apa"].text


def test_a_deactivated_version_presents_no_former_location(
    deployment: Deployment, scenario: Scenario
) -> None:
    # RFC 8458 §4.4: a deactivated URN resolves to no resource, then as now.
    *_, gone = _versions(deployment, scenario.urn)
    with deployment.client() as client:
        listed = client.get(gone, headers={"Accept": "text/uri-list"})
        links = client.get(gone, headers={"Accept": "application/linkset+json"})
        dc = client.get(gone, headers={"Accept": "application/xml"})
        record = client.get(gone, headers={"Accept": JSON})
    assert listed.text.splitlines() == [f"# {scenario.urn}"]
    assert record.json()["status"] == "deactivated"
    assert record.json()["locations"] == []
    (context,) = links.json()["linkset"]
    assert "alternate" not in context
    assert "item" not in context
    assert scenario.b not in dc.text
    for answer in (listed, links, dc, record):
        _is_memento(answer, gone)


def test_a_memento_refuses_what_it_cannot_give(deployment: Deployment, scenario: Scenario) -> None:
    # RFC 9110 §15.5.7: 406, naming what it gives.
    first = _versions(deployment, scenario.urn)[0]
    with deployment.client() as client:
        answer = client.get(first, headers={"Accept": "application/rdf+xml"})
        style = client.get(first, headers={"Accept": "text/x-bibliography; style=no-such"})
    assert answer.status_code == 406
    assert "application/linkset" in answer.json()["available"]
    assert style.status_code == 406
