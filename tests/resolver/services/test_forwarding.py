"""Forwarding to national resolvers and DNS NAPTR discovery, black-box against running servers
(``urnkit serve``) on SQLite and PostgreSQL.

* RFC 8458 §4.4: a URN:NBN not registered here and under no prefix delegated here is forwarded
  (302) to its country's resolver, from a table admins edit; under an own prefix it is 404, and
  a country without a resolver is a 404 saying so.
* RFC 3402-3404: with URNKIT_DNS_DISCOVERY=1 the NAPTR rules at ``<nid>.<root>`` lead to the
  resolver, asked of a DNS server this test runs on 127.0.0.1.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import httpx
import pytest
from dns.rdtypes.IN.NAPTR import NAPTR
from resolver_support import (
    DATABASES,
    Resolver,
    Server,
    free_port,
    fresh_database,
    urnkit,
    urnkit_here,
)

PROBLEM = "application/problem+json"


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


# --- the table --------------------------------------------------------------------------------


def test_the_seeded_table_is_public(anonymous: httpx.Client) -> None:
    table = {row["country"]: row for row in anonymous.get("/api/v1/forwarding").json()}
    # The resolvers the issue names, each https with {urn} once.
    assert table["fi"]["url_template"] == "https://urn.fi/{urn}"
    assert table["se"]["url_template"] == "https://urn.kb.se/resolve?urn={urn}"
    for country in ("de", "at", "ch"):
        assert table[country]["url_template"] == "https://nbn-resolving.org/{urn}"
    for country in ("no", "cz", "nl"):
        assert table[country]["url_template"].startswith("https://")
    for row in table.values():
        assert row["url_template"].count("{urn}") == 1
        assert row["health"] in ("unknown", "up", "down")
    assert list(table) == sorted(table)


@pytest.mark.parametrize(
    ("urn", "location"),
    [
        # RFC 8458 §4.4: the country code leads to the national resolver, the URN as sent.
        ("URN:NBN:fi-fe{}", "https://urn.fi/URN:NBN:fi-fe{}"),
        ("urn:nbn:de:gbv:089-{}", "https://nbn-resolving.org/urn:nbn:de:gbv:089-{}"),
        ("urn:nbn:ch:bel-{}", "https://nbn-resolving.org/urn:nbn:ch:bel-{}"),
        ("urn:nbn:se:uu:diva-{}", "https://urn.kb.se/resolve?urn=urn:nbn:se:uu:diva-{}"),
        # fi:testx is not under fi:test (prefixes compare segment by segment): forwarded.
        ("urn:nbn:fi:testx-{}", "https://urn.fi/urn:nbn:fi:testx-{}"),
        # In a query the URN is a query value: "&" and "%" encoded, so "%2F" stays "%2F".
        ("urn:nbn:se:kb-{}&a%2Fb", "https://urn.kb.se/resolve?urn=urn:nbn:se:kb-{}%26a%252Fb"),
        # RFC 8141 §2.3.2: the q-component travels, as to a location.
        ("urn:nbn:no-nb_{}?=lang=no", "https://urn.nb.no/urn:nbn:no-nb_{}?lang=no"),
        ("urn:nbn:se:kb-{}?=lang=sv", "https://urn.kb.se/resolve?urn=urn:nbn:se:kb-{}&lang=sv"),
        # RFC 8141 §2.3.1: an r-component is not passed on, as locally.
        ("urn:nbn:fi-{}?+x=1", "https://urn.fi/urn:nbn:fi-{}"),
    ],
)
def test_a_foreign_urn_is_forwarded(
    anonymous: httpx.Client, unique: str, urn: str, location: str
) -> None:
    path = "/" + urn.format(unique)
    for response in (anonymous.get(path), anonymous.head(path)):
        assert response.status_code == 302
        assert response.headers["location"] == location.format(unique)


@pytest.mark.parametrize(
    "urn", ["urn:nbn:fi:test-{}", "urn:nbn:fi:test:sub{}-1", "urn:nbn:FI:OTHER-{}"]
)
def test_an_unknown_urn_under_an_own_prefix_is_not_found(
    anonymous: httpx.Client, unique: str, urn: str
) -> None:
    # fi is in the table, but these prefixes are delegated here: this resolver is the one.
    body = assert_problem(anonymous.get("/" + urn.format(unique)), 404)
    assert "registered here" in body["detail"]
    assert "no resolver is known" not in body["detail"]


def test_a_foreign_urn_registered_here_is_resolved_here(
    admin: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:se:test-{unique}"  # an admin may register under any prefix
    locations = [{"url": "https://example.org/here"}]
    assert admin.put(f"/api/v1/urns/{urn}", json={"locations": locations}).status_code == 201
    assert anonymous.get(f"/{urn}").headers["location"] == "https://example.org/here"


def test_a_country_without_a_resolver_is_not_found_saying_so(
    anonymous: httpx.Client, unique: str
) -> None:
    body = assert_problem(anonymous.get(f"/urn:nbn:ee-{unique}"), 404)
    assert "no resolver is known for the country 'ee'" in body["detail"]
    assert body["country"] == "ee"
    head = anonymous.head(f"/urn:nbn:ee-{unique}")
    assert head.status_code == 404


def test_admins_edit_the_table_and_every_process_sees_it_at_once(
    resolver: Resolver, admin: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:lt-{unique}"
    assert_problem(anonymous.get(f"/{urn}"), 404)
    with Server(resolver.database_url) as second:  # another process on the same database
        created = admin.put(
            "/api/v1/forwarding/LT",
            json={"url_template": "https://nbn.example.lt/{urn}", "note": "Lithuania"},
        )
        assert created.status_code == 201
        assert created.json()["country"] == "lt"
        assert created.json()["health"] == "unknown"
        found = httpx.get(f"{second.base_url}/{urn}")
        assert found.status_code == 302
        assert found.headers["location"] == f"https://nbn.example.lt/{urn}"

        replaced = admin.put(
            "/api/v1/forwarding/lt", json={"url_template": "https://r.example.lt/?id={urn}"}
        )
        assert replaced.status_code == 200
        assert replaced.json()["note"] is None  # PUT replaces the row whole
        found = httpx.get(f"{second.base_url}/{urn}")
        assert found.headers["location"] == f"https://r.example.lt/?id={urn}"

        assert admin.delete("/api/v1/forwarding/lt").status_code == 204
        assert_problem(httpx.get(f"{second.base_url}/{urn}"), 404)
    assert_problem(admin.delete("/api/v1/forwarding/lt"), 404)
    assert "lt" not in {row["country"] for row in anonymous.get("/api/v1/forwarding").json()}


def test_only_admins_edit_the_table(api: httpx.Client, anonymous: httpx.Client) -> None:
    body = {"url_template": "https://r.example.lv/{urn}"}
    assert_problem(anonymous.put("/api/v1/forwarding/lv", json=body), 401)
    assert_problem(api.put("/api/v1/forwarding/lv", json=body), 403)
    assert_problem(anonymous.delete("/api/v1/forwarding/fi"), 401)
    assert_problem(api.delete("/api/v1/forwarding/fi"), 403)
    assert "lv" not in {row["country"] for row in anonymous.get("/api/v1/forwarding").json()}


@pytest.mark.parametrize(
    ("country", "template", "words"),
    [
        ("lv", "http://r.example.lv/{urn}", "must be https"),
        ("lv", "ftp://r.example.lv/{urn}", "must be https"),
        ("lv", "https://r.example.lv/", "exactly once"),
        ("lv", "https://r.example.lv/{urn}/{urn}", "exactly once"),
        ("lv", "https://{urn}/x", "with a host"),
        ("lv", "https://r.example.lv/#{urn}", "path or the query"),
        ("lv", "https://r.example.lv/{id}?u={urn}", "no braces"),
        ("lv", "/relative/{urn}", "with a host"),
        # RFC 8458 §4.2: an ISO 3166-1 alpha-2 code, as URN:NBN prefixes begin.
        ("xx", "https://r.example/{urn}", "user assignment"),
        ("qq", "https://r.example/{urn}", "user assignment"),
        ("lvx", "https://r.example/{urn}", "two letters"),
        ("l1", "https://r.example/{urn}", "two letters"),
    ],
)
def test_a_bad_row_is_refused_saying_why(
    admin: httpx.Client, country: str, template: str, words: str
) -> None:
    response = admin.put(f"/api/v1/forwarding/{country}", json={"url_template": template})
    assert words in assert_problem(response, 422)["detail"]


def test_a_country_iso_3166_does_not_know_is_refused(admin: httpx.Client) -> None:
    # Two letters, but ISO 3166-1 assigns "yy" to no country (pycountry, urnkit[checks]).
    response = admin.put("/api/v1/forwarding/yy", json={"url_template": "https://r.example/{urn}"})
    assert "not an ISO 3166-1 alpha-2 country code" in assert_problem(response, 422)["detail"]


# --- the health check -----------------------------------------------------------------------


class _Resolver(http.server.BaseHTTPRequestHandler):
    """A national resolver stand-in: /up answers 404 (alive; it does not know the URN),
    /moved 302, /broken 503. It records the requests."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_HEAD(self) -> None:
        self.seen.append((self.command, self.path))
        status = {"up": 404, "moved": 302, "broken": 503}[
            self.path[1:].partition("/")[0].partition("?")[0]
        ]
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def http_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Resolver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_health_check_heads_each_resolver_and_records_it(
    resolver: Resolver, admin: httpx.Client, anonymous: httpx.Client
) -> None:
    url = ("--database-url", resolver.database_url)
    with http_server() as base:
        rows = {
            "lu": f"{base}/up/{{urn}}",
            "mt": f"{base}/moved?urn={{urn}}",
            "cy": f"{base}/broken/{{urn}}",
            "is": f"http://127.0.0.1:{free_port()}/{{urn}}",  # nothing listens
        }
        for country, template in rows.items():
            made = admin.put(f"/api/v1/forwarding/{country}", json={"url_template": template})
            assert made.status_code == 201
        done = urnkit_here(
            "admin", "forwarding", "check", *rows, "--timeout", "5", *url, check=False
        )
        assert done.returncode == 1, done.stderr  # a resolver is down
        assert ("HEAD", "/up/urn:nbn:lu-0") in _Resolver.seen
        assert ("HEAD", "/moved?urn=urn:nbn:mt-0") in _Resolver.seen
    table = {row["country"]: row for row in anonymous.get("/api/v1/forwarding").json()}
    assert {country: table[country]["health"] for country in rows} == {
        "lu": "up",  # a 404 for the probe URN: the resolver answers
        "mt": "up",  # a redirect is an answer, not followed
        "cy": "down",  # 503
        "is": "down",  # no connection
    }
    assert "HTTP 503" in table["cy"]["detail"]
    assert table["lu"]["checked"] is not None
    assert table["fi"]["checked"] is None  # only the countries named were checked
    # The same template keeps what the check found; a new one is unknown again.
    same = admin.put("/api/v1/forwarding/lu", json={"url_template": rows["lu"], "note": "x"})
    assert same.json()["health"] == "up"
    other = admin.put("/api/v1/forwarding/cy", json={"url_template": rows["lu"]})
    assert (other.json()["health"], other.json()["checked"]) == ("unknown", None)
    for country in rows:
        assert admin.delete(f"/api/v1/forwarding/{country}").status_code == 204


def test_the_cli_lists_sets_and_removes(resolver: Resolver) -> None:
    url = ("--database-url", resolver.database_url)
    listed = urnkit_here("admin", "forwarding", "list", *url).stdout.splitlines()
    assert "fi\thttps://urn.fi/{urn}\t" in "\n".join(listed)
    refused = urnkit(
        "admin", "forwarding", "set", "gb", "http://x.example/{urn}", *url, check=False
    )
    assert refused.returncode == 1
    assert "must be https" in refused.stderr
    made = urnkit_here("admin", "forwarding", "set", "GB", "https://x.example/{urn}", *url)
    assert made.stdout.startswith("created\tgb\thttps://x.example/{urn}\tunknown")
    assert urnkit_here("admin", "forwarding", "remove", "gb", *url).returncode == 0


# --- DNS NAPTR discovery (RFC 3402-3404) -------------------------------------------------------

ROOT = "urn.test"


def _naptr(order: int, preference: int, flags: str, services: str, regexp: str, to: str) -> NAPTR:
    return NAPTR(  # type: ignore[no-untyped-call]  # dnspython leaves this one unannotated
        dns.rdataclass.IN,
        dns.rdatatype.NAPTR,
        order,
        preference,
        flags.encode(),
        services.encode(),
        regexp.encode(),
        dns.name.from_text(to),
    )


# The zone: RFC 3404 §2, the first well-known rule gives the NID, looked up under the root.
ZONE: Mapping[str, Sequence[NAPTR]] = {
    f"nbn.{ROOT}": [
        # Non-terminal rules ("" flags): the regexp gives the next domain.
        _naptr(100, 10, "", "", r"!^urn:nbn:pl:.*$!pl.nbn.urn.test!i", "."),
        _naptr(100, 20, "", "", r"!^urn:nbn:ua-.*$!loop.urn.test!", "."),
        _naptr(100, 30, "", "", r"!^urn:nbn:by-.*$!silent.urn.test!", "."),
        _naptr(100, 40, "", "", r"!^urn:nbn:md-.*$!bad.urn.test!", "."),
        # A later order is not considered when a rule of an earlier order applies.
        _naptr(200, 10, "u", "http+N2L", r"!^(urn:nbn:.*)$!https://late.example/\1!", "."),
    ],
    f"pl.nbn.{ROOT}": [
        _naptr(100, 10, "u", "z3950+N2L", r"!^(.*)$!z3950://zed.example/\1!", "."),  # not web
        _naptr(100, 20, "u", "http+N2C", r"!^(.*)$!https://cat.example/\1!", "."),  # not N2L/N2R
        _naptr(
            100,
            30,
            "u",
            "http+N2L+N2C",
            r"!^urn:nbn:pl:([^-]+)-(.*)$!https://r.pl.example/\1/\2!i",
            ".",
        ),
        _naptr(100, 40, "u", "http+N2L", r"!^(.*)$!https://second.example/\1!", "."),
    ],
    f"loop.{ROOT}": [_naptr(100, 10, "", "", "", f"loop.{ROOT}")],  # a replacement, a loop
    f"bad.{ROOT}": [_naptr(100, 10, "u", "http+N2L", r"!^(.*)$!javascript:alert(1)//\1!", ".")],
    f"isbn.{ROOT}": [
        _naptr(
            100, 10, "u", "E2U+web:https", r"!^urn:isbn:(.*)$!https://books.example/?isbn=\1!", "."
        )
    ],
}


@contextmanager
def dns_server(zone: Mapping[str, Sequence[NAPTR]], silent: str) -> Iterator[str]:
    """A UDP DNS server on 127.0.0.1 answering NAPTR queries from ``zone`` (NXDOMAIN for other
    names) and never answering queries for ``silent``; its ``address:port``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                wire, client = sock.recvfrom(4096)
            except TimeoutError:
                continue
            query = dns.message.from_wire(wire)
            question = query.question[0]
            name = question.name.to_text().rstrip(".").lower()
            if name == silent:
                continue
            response = dns.message.make_response(query)
            if name in zone and question.rdtype == dns.rdatatype.NAPTR:
                response.answer.append(dns.rrset.from_rdata_list(question.name, 0, zone[name]))
            elif name not in zone:
                response.set_rcode(dns.rcode.NXDOMAIN)
            sock.sendto(response.to_wire(), client)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        sock.close()


@pytest.fixture(scope="module", params=DATABASES)
def discovering(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A server with DNS discovery on, asking the test's DNS server, over a new database of
    each kind; its base URL."""
    directory = tmp_path_factory.mktemp(f"discovery-{request.param}")
    with (
        fresh_database(request.param, directory) as database_url,
        dns_server(ZONE, silent=f"silent.{ROOT}") as nameserver,
    ):
        env = {
            "URNKIT_DNS_DISCOVERY": "1",
            "URNKIT_DNS_NAMESERVER": nameserver,
            "URNKIT_DNS_ROOT": ROOT,
        }
        with Server(database_url, env=env) as server:
            yield server.base_url


def test_dns_discovery_finds_the_resolver(discovering: str) -> None:
    def location(path: str) -> str:
        response = httpx.get(discovering + path)
        assert response.status_code == 302, response.text
        return response.headers["location"]

    # RFC 3402 §3.2: a non-terminal rule leads on; the terminal "U" rule's regexp, applied to
    # the URN (case-insensitively with "i"), gives the URI; only web resolution services count.
    assert location("/URN:NBN:PL:ABC-123") == "https://r.pl.example/ABC/123"
    # RFC 8141 §2.3.2: the q-component travels.
    assert location("/urn:nbn:pl:abc-123?=x=1") == "https://r.pl.example/abc/123?x=1"
    # Any namespace: the first well-known rule is the NID (RFC 3404 §2); E2U-style services.
    assert location("/urn:isbn:9789521234567") == "https://books.example/?isbn=9789521234567"
    # RFC 3403 §4.1: once a rule of order 100 applies, order 200 is not considered; it is
    # used where none of order 100 does.
    assert location("/urn:nbn:lv-1") == "https://late.example/urn:nbn:lv-1"
    # The table comes first: fi has a row.
    assert location("/urn:nbn:fi-1") == "https://urn.fi/urn:nbn:fi-1"
    response = httpx.head(discovering + "/URN:NBN:PL:ABC-123")
    assert response.headers["location"] == "https://r.pl.example/ABC/123"


def test_dns_discovery_that_finds_nothing_is_not_found(discovering: str) -> None:
    for country in ("ua", "md"):  # a rule leading back to itself; a URI that is not http(s)
        body = assert_problem(httpx.get(f"{discovering}/urn:nbn:{country}-1"), 404)
        assert body["detail"].endswith(
            f"no resolver is known for the country {country!r}; DNS discovery found none "
            "(RFC 8458 §4.4)"
        )
    body = assert_problem(httpx.get(f"{discovering}/urn:example:1"), 404)  # NXDOMAIN
    assert body["detail"] == "no URN equivalent to urn:example:1 is registered here"


def test_dns_discovery_is_bounded_in_time(discovering: str) -> None:
    started = time.monotonic()
    body = assert_problem(httpx.get(f"{discovering}/urn:nbn:by-1", timeout=30), 404)
    assert time.monotonic() - started < 5  # naptr.TIME_LIMIT is 2 s
    assert "no resolver is known for the country 'by'" in body["detail"]
