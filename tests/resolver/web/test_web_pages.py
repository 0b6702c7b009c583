"""The pages for people and their JSON twins, black-box over HTTP against ``urnkit serve`` on
SQLite and PostgreSQL: search by URN, URL and title; the register of delegated prefixes; the
statistics (counted in memory, flushed by an adding upsert); ``/metrics``."""

from __future__ import annotations

import secrets
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser

import httpx
import pytest
from babel.numbers import parse_number
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from resolver_support import Resolver, Server, statistics_interval, wait_for

from urnkit.resolver.statistics import ResolutionTally
from urnkit.resolver.web.routes.pages import search_kind


def register(client: httpx.Client, urn: str, title: str, *urls: str) -> None:
    """Create ``urn`` with ``title`` and a location at each of ``urls``."""
    body = {"locations": [{"url": url} for url in urls], "metadata": {"title": title}}
    response = client.put(f"/api/v1/urns/{urn}", json=body)
    assert response.status_code == 201, response.text


class _Tables(HTMLParser):
    """The text of every table cell, row by row, and of ``<caption>``s."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.captions: list[str] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption" and self._caption is not None:
            self.captions.append("".join(self._caption).strip())
            self._caption = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)


def tables(html: str) -> _Tables:
    parsed = _Tables()
    parsed.feed(html)
    return parsed


# --- search ----------------------------------------------------------------------------------


def test_search_by_urn_finds_the_record_of_an_equivalent_urn(api: httpx.Client) -> None:
    token = secrets.token_hex(6)
    register(api, f"urn:nbn:fi:test-{token}", f"Found by URN {token}")
    # RFC 8141 §3.1: "URN", the NID and (for URN:NBN, RFC 8458 §4.3) the prefix are
    # case-insensitive, so this spelling is the same URN.
    found = api.get("/api/v1/search", params={"urn": f"URN:NBN:FI:TEST-{token}"})
    assert found.status_code == 200
    assert [r["urn"] for r in found.json()["records"]] == [f"urn:nbn:fi:test-{token}"]
    assert found.json()["next_cursor"] is None
    absent = api.get("/api/v1/search", params={"urn": f"urn:nbn:fi:test-{token}x"})
    assert absent.status_code == 200
    assert absent.json() == {"records": [], "next_cursor": None}
    page = api.get("/search", params={"q": f"urn:nbn:fi:test-{token}x"})
    assert "is registered here" in page.text
    assert f"No URN equivalent to <code>urn:nbn:fi:test-{token}x</code>" in page.text


def test_search_for_an_invalid_urn_says_where_it_stops_being_one(api: httpx.Client) -> None:
    # RFC 8141 §2: the NSS needs at least one character.
    answer = api.get("/api/v1/search", params={"urn": "urn:nbn:"})
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["position"] == 8
    page = api.get("/search", params={"q": "urn:nbn:"})
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in page.text
    assert "  urn:nbn:\n          ^" in page.text  # the caret under position 8


def test_search_by_url_is_a_reverse_lookup(api: httpx.Client) -> None:
    token = secrets.token_hex(6)
    shared, other = f"https://example.org/{token}/shared", f"https://example.org/{token}/other"
    register(api, f"urn:nbn:fi:test-{token}a", "A", shared)
    register(api, f"urn:nbn:fi:test-{token}b", "B", other, shared)
    register(api, f"urn:nbn:fi:test-{token}c", "C", other)
    found = api.get("/api/v1/search", params={"url": shared}).json()["records"]
    assert [r["urn"] for r in found] == [f"urn:nbn:fi:test-{token}a", f"urn:nbn:fi:test-{token}b"]
    assert api.get("/api/v1/search", params={"url": shared + "x"}).json()["records"] == []
    page = api.get("/search", params={"q": shared})  # detected as a URL
    assert page.text.count(f'<a href="/urn:nbn:fi:test-{token}') == 2


def test_search_by_title_is_case_insensitive_literal_and_paged(api: httpx.Client) -> None:
    token = secrets.token_hex(6)
    titles = [f"{token} Alpha 100% sure", f"{token} ALPHA_beta", f"{token} gamma alpha"]
    for number, title in enumerate(titles):
        register(api, f"urn:nbn:fi:test-{token}-{number}", title)
    register(api, f"urn:nbn:fi:test-{token}-x", f"{token} Alp ha")

    def all_pages(text: str) -> list[str]:
        urns: list[str] = []
        cursor = None
        while True:
            params: dict[str, str | int] = {"title": text, "limit": 1}
            if cursor is not None:
                params["cursor"] = cursor
            page = api.get("/api/v1/search", params=params).json()
            assert len(page["records"]) <= 1
            urns += [r["urn"] for r in page["records"]]
            cursor = page["next_cursor"]
            if cursor is None:
                return urns

    assert all_pages(f"{token} alpha") == [f"urn:nbn:fi:test-{token}-{n}" for n in (0, 1)]
    assert all_pages(f"{token} ALPHA") == [f"urn:nbn:fi:test-{token}-{n}" for n in (0, 1)]
    assert all_pages(token) == [f"urn:nbn:fi:test-{token}-{n}" for n in (0, 1, 2, "x")]
    # "%" and "_" are characters here, not LIKE's wildcards (as such they would match more).
    assert all_pages(f"{token} a%a") == []
    assert all_pages(f"{token} alpha_") == [f"urn:nbn:fi:test-{token}-1"]
    assert f"urn:nbn:fi:test-{token}-0" in all_pages("100% s")
    html = api.get("/search", params={"q": token, "by": "title"}).text
    assert html.count(f'<a href="/urn:nbn:fi:test-{token}-') == 4
    assert 'rel="next"' not in html  # 4 results fit one page of 20


@pytest.mark.parametrize(
    ("params", "detail"),
    [
        ({}, "exactly one of urn, url, title and identifier"),
        ({"urn": "urn:nbn:fi-1", "title": "x"}, "exactly one of urn, url, title and identifier"),
        ({"title": "a\x00b"}, "control character at position 1"),
        ({"title": ""}, "the title searched for is empty"),
    ],
)
def test_search_refuses_what_it_cannot_search_for(
    api: httpx.Client, params: dict[str, str], detail: str
) -> None:
    answer = api.get("/api/v1/search", params=params)
    assert answer.status_code == 422
    assert detail in answer.json()["detail"]


@given(st.text(max_size=20), st.sampled_from(["urn:", "URN:", "uRn:"]))
def test_a_text_beginning_with_urn_is_searched_as_a_urn(rest: str, scheme: str) -> None:
    # RFC 8141 §2: "urn" is case-insensitive; a URN of another namespace than NBN is an
    # identifier records carry (docs/resolution.md, "Other identifiers").
    assert search_kind(scheme + "nbn:" + rest) == "urn"
    assert search_kind(scheme + rest) in ("urn", "identifier")
    assert search_kind(f"https://{rest}") == "url"
    if not rest.lstrip().lower().startswith(("urn:", "http://", "https://")):
        assert search_kind(rest) == "title"


# --- the register of prefixes ----------------------------------------------------------------


def register_rows(client: httpx.Client) -> dict[str, list[str]]:
    page = tables(client.get("/prefixes").text)
    return {row[0]: row for row in page.rows[1:]}


def test_the_register_lists_each_prefix_its_organisation_and_urns(
    api: httpx.Client, admin: httpx.Client
) -> None:
    # RFC 8458 §4.3: the register of sub-namespaces is public.
    token = secrets.token_hex(4)
    sub = f"fi:test:r{token}"
    body = {"prefix": sub, "organisation": "Test Library"}
    assert admin.post("/api/v1/prefixes", json=body).status_code == 201
    before = register_rows(api)
    assert before[sub] == [sub, "Test Library", "sequential", "0"]
    assert before["fi:other"][1:3] == ["Other Library", "random"]
    register(api, f"urn:nbn:fi:test-{token}", "top")
    register(api, f"urn:nbn:fi:test:r{token}-1", "sub")
    register(api, f"urn:nbn:fi:test:r{token}-2", "sub")
    after = register_rows(api)
    # A URN counts for the longest delegated prefix covering its own; the page writes counts as
    # its language does (English: "2,483").
    count = {"before": before["fi:test"][3], "after": after["fi:test"][3]}
    assert parse_number(count["after"], locale="en") == parse_number(count["before"], "en") + 1
    assert after[sub][3] == "2"
    json_register = api.get("/api/v1/prefixes").json()
    assert {"prefix": sub, "organisation": "Test Library", "generator": "sequential"} in (
        json_register
    )
    assert sorted(after) == sorted(entry["prefix"] for entry in json_register)
    assert 'href="/api/v1/prefixes"' in api.get("/prefixes").text


# --- statistics --------------------------------------------------------------------------------


def statistics(client: httpx.Client, prefix: str) -> int:
    """Today's resolutions of ``prefix`` in /api/v1/statistics."""
    today = datetime.now(UTC).date().isoformat()
    counts = client.get("/api/v1/statistics", params={"days": 1}).json()["counts"]
    return sum(c["resolutions"] for c in counts if c["prefix"] == prefix and c["day"] == today)


def test_statistics_count_resolutions_of_registered_urns_per_prefix_per_day(
    api: httpx.Client, admin: httpx.Client
) -> None:
    token = secrets.token_hex(4)
    prefix, later = f"fi:test:s{token}", f"fi:test:l{token}"
    for delegated in (prefix, later):
        body = {"prefix": delegated, "organisation": "Test Library"}
        assert admin.post("/api/v1/prefixes", json=body).status_code == 201
    urn = f"urn:nbn:{prefix}-1"
    register(api, urn, "counted", "https://example.org/counted")
    for spelling in (urn, urn.upper(), urn + "?=page=2", urn, urn):
        assert api.get(f"/{spelling}").status_code == 302
    register(api, f"{urn}s", "a surrogate: no location")
    for _ in range(2):  # the lookup's outcome is handed from the front to the route: once
        assert api.get(f"/{urn}s").status_code == 200
    assert api.get(f"/{urn}x").status_code == 404  # not registered: not counted
    wait_for(lambda: statistics(api, prefix) >= 7, "the statistics to catch up", seconds=10)
    # One more flush, seen by a resolution counted after the 7 were: nothing counted twice.
    register(api, f"urn:nbn:{later}-1", "later", "https://example.org/later")
    assert api.get(f"/urn:nbn:{later}-1").status_code == 302
    wait_for(lambda: statistics(api, later) == 1, "a later flush", seconds=10)
    assert statistics(api, prefix) == 7
    page = api.get("/statistics", params={"days": 1})
    today = datetime.now(UTC).date()
    # CLDR's medium English date (the day's <time datetime> is ISO 8601): Nov 25, 2026.
    assert [f"{today:%b} {today.day}, {today.year}", prefix, "7"] in tables(page.text).rows
    assert f'<time datetime="{today.isoformat()}">' in page.text
    assert tables(page.text).captions == [
        "Resolutions per prefix per day, the newest day first",
        "Records by status at the end of each day, the newest day first",
    ]
    # The chart draws the prefix (a line and its name in the legend) before the tables.
    chart = page.text[page.text.index("<svg") : page.text.index("</svg>")]
    assert 'role="img" aria-labelledby="resolutions-chart-title resolutions-chart-desc"' in chart
    assert f'dominant-baseline="middle">{prefix}</text>' in chart
    answer = api.get("/api/v1/statistics", params={"days": 7}).json()
    assert answer["since"] == (datetime.now(UTC).date() - timedelta(days=6)).isoformat()
    assert api.get("/api/v1/statistics", params={"days": 0}).status_code == 422


def statuses_today(client: httpx.Client) -> dict[str, int]:
    """Today's records by status in /api/v1/statistics/statuses."""
    answer = client.get("/api/v1/statistics/statuses", params={"days": 2}).json()
    today = datetime.now(UTC).date().isoformat()
    assert answer["since"] == (datetime.now(UTC).date() - timedelta(days=1)).isoformat()
    assert [c["day"] for c in answer["counts"]] == [today] * 3 + [answer["since"]] * 3
    return {c["status"]: c["records"] for c in answer["counts"] if c["day"] == today}


def test_records_by_status_today_follow_registration_and_deactivation(
    api: httpx.Client,
) -> None:
    before = statuses_today(api)
    urn = f"urn:nbn:fi:test-st{secrets.token_hex(4)}"
    register(api, urn, "counted by status", "https://example.org/st")
    registered = statuses_today(api)
    assert registered == {**before, "active": before["active"] + 1}
    api.post(f"/api/v1/urns/{urn}/deactivate", json={}).raise_for_status()
    deactivated = statuses_today(api)
    assert deactivated == {**before, "deactivated": before["deactivated"] + 1}
    # The page's table (in German: 1.234) and its chart say the same.
    page = api.get("/statistics", params={"days": 2, "lang": "de"})
    header, today, _ = [row for row in tables(page.text).rows if len(row) == 4]
    assert header == ["Tag (UTC)", "reserviert", "aktiv", "deaktiviert"]
    assert [int(n.replace(".", "")) for n in today[1:]] == [
        deactivated[s] for s in ("reserved", "active", "deactivated")
    ]
    assert 'aria-labelledby="statuses-chart-title statuses-chart-desc"' in page.text
    assert api.get("/api/v1/statistics/statuses", params={"days": 367}).status_code == 422


def test_servers_sharing_a_database_add_up_and_flush_when_stopped(
    api: httpx.Client, admin: httpx.Client, resolver: Resolver
) -> None:
    token = secrets.token_hex(4)
    prefix = f"fi:test:m{token}"
    body = {"prefix": prefix, "organisation": "Test Library"}
    assert admin.post("/api/v1/prefixes", json=body).status_code == 201
    urn = f"urn:nbn:{prefix}-1"
    register(api, urn, "counted twice over", "https://example.org/m")
    # A second server on the same database that would flush only in an hour: its counts
    # reach the database when it stops (SIGTERM), and add to the first server's.
    with statistics_interval(3600), Server(resolver.database_url) as second:
        for _ in range(4):
            assert httpx.get(f"{second.base_url}/{urn}").status_code == 302
        for _ in range(3):
            assert api.get(f"/{urn}").status_code == 302
        wait_for(lambda: statistics(api, prefix) >= 3, "the first server's flush", seconds=10)
        assert statistics(api, prefix) == 3
    assert statistics(api, prefix) == 7


def test_the_tally_sums_per_prefix_and_day_and_keeps_what_failed_to_flush() -> None:
    tally = ResolutionTally()
    for prefix, day in [("fi:a", 1), ("fi:a", 1), ("fi:a", 2)]:
        tally.add(prefix, day)
    tally.add("se:uu:diva", 1)
    taken = tally.take()
    assert taken == [
        ("fi:a", date(1970, 1, 2), 2),
        ("fi:a", date(1970, 1, 3), 1),
        ("se:uu:diva", date(1970, 1, 2), 1),
    ]
    tally.give_back(taken)
    tally.add("fi:a", 2)
    assert tally.take() == [
        ("fi:a", date(1970, 1, 2), 2),
        ("fi:a", date(1970, 1, 3), 2),
        ("se:uu:diva", date(1970, 1, 2), 1),
    ]
    assert tally.take() == []


# --- /metrics ----------------------------------------------------------------------------------


def scrape(client: httpx.Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics by name and labels, parsed as Prometheus parses the format."""
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def test_metrics_count_requests_resolutions_and_records(
    api: httpx.Client, resolver: Resolver
) -> None:
    token = secrets.token_hex(6)
    register(api, f"urn:nbn:fi:test-{token}", "metered", "https://example.org/metered")
    register(api, f"urn:nbn:fi:test-{token}s", "a surrogate: no location")
    before = scrape(api)
    assert api.get(f"/urn:nbn:fi:test-{token}").status_code == 302
    assert api.get(f"/urn:nbn:fi:test-{token}").status_code == 302
    assert api.get(f"/urn:nbn:fi:test-{token}s").status_code == 200
    assert api.get(f"/urn:nbn:fi:test-{token}x").status_code == 404
    assert api.get("/urn:nbn:").status_code == 400
    after = scrape(api)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    outcomes = {"redirect": 2, "surrogate": 1, "not_found": 1, "invalid": 1, "gone": 0}
    for outcome, count in outcomes.items():
        assert grew("urnkit_resolutions_total", outcome=outcome) == count, outcome
    route = "/{urn:path}"
    assert grew("urnkit_http_requests_total", route=route, status="3xx") == 2
    assert grew("urnkit_http_requests_total", route=route, status="2xx") == 1
    assert grew("urnkit_http_requests_total", route=route, status="4xx") == 2
    assert grew("urnkit_http_requests_total", route="/metrics", status="2xx") == 1
    register(api, f"urn:nbn:fi:test-{token}n", "one more")
    assert scrape(api)[("urnkit_records", (("status", "active"),))] == (
        after[("urnkit_records", (("status", "active"),))] + 1
    )
    assert after[("process_cpu_seconds_total", ())] > 0
