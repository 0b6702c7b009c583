"""Two ``urnkit serve`` processes on one database (SQLite, PostgreSQL) behind the nginx site of
``docs/deploy/`` (Debian's nginx, really started; TLS, the cache): a write through one is
resolved through the other at once; a change is served fresh through the cache within the
documented max-age; the absolute URLs the servers build say what the client used (trusted
proxies); what a client says in forwarding headers of its own reaches neither a restricted
location nor a cached answer; HSTS; too many request headers are refused. nginx is required in
CI and under ``URNKIT_REQUIRE_NGINX=1`` (``.ci/run`` installs it); elsewhere, without it, these
tests are skipped."""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from resolver_support import (
    DATABASES,
    Server,
    fresh_database,
    set_up_resolver,
    urnkit_here,
    wait_for,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from nginx_site import NginxError, find_nginx, free_port, running_nginx, urnkit_site

REDIRECT_MAX_AGE = 2  # seconds: cache_redirect of the servers here
# A reading room of Test Library's, and an address in it that clients elsewhere claim.
ROOMS, IN_ROOMS = "10.77.0.0/16", "10.77.1.2"
# The tests' clients reach nginx from this address: nginx's own (127.0.0.1), which the servers
# trust, is not the client's, as on a real deployment.
CLIENT_ADDRESS = "127.0.0.2"


@dataclass(frozen=True)
class Deployment:
    """The servers' URLs, nginx's (http and https), a registrant token of fi:test and what
    the servers have logged so far."""

    first: str
    second: str
    http: str
    https: str
    token: str
    logs: Callable[[], str]

    def client(self, base_url: str, authorized: bool = False) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if authorized else {}
        transport = httpx.HTTPTransport(local_address=CLIENT_ADDRESS, verify=False)
        return httpx.Client(base_url=base_url, headers=headers, transport=transport, timeout=30)


def _require_nginx() -> None:
    try:
        find_nginx()
    except NginxError as error:
        if os.environ.get("URNKIT_REQUIRE_NGINX") == "1" or os.environ.get("CI"):
            pytest.fail(f"{error} (required in CI and under URNKIT_REQUIRE_NGINX=1)")
        pytest.skip(str(error))


@pytest.fixture(scope="module", params=DATABASES)
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    _require_nginx()
    directory = tmp_path_factory.mktemp("behind-nginx")
    env = {
        "URNKIT_TRUSTED_PROXIES": "127.0.0.1",
        "URNKIT_CACHE_REDIRECT": str(REDIRECT_MAX_AGE),
        "URNKIT_CACHE_NOT_FOUND": str(REDIRECT_MAX_AGE),
    }
    with fresh_database(request.param, directory) as url:
        tokens = set_up_resolver(url)
        urnkit_here(
            "admin", "network", "set", "Test Library", "rooms", ROOMS, "--database-url", url
        )
        with Server(url, env=env) as first, Server(url, env=env) as second:
            http, https = free_port(), free_port()
            site = urnkit_site(directory, [first.port, second.port], http, https)
            with running_nginx(directory, site):
                yield Deployment(
                    first.base_url,
                    second.base_url,
                    f"http://127.0.0.1:{http}",
                    f"https://127.0.0.1:{https}",
                    tokens["registrant_token"],
                    lambda: first.output() + second.output(),
                )


def _put(client: httpx.Client, urn: str, url: str) -> None:
    client.put(f"/api/v1/urns/{urn}", json={"locations": [{"url": url}]}).raise_for_status()


def test_a_write_through_one_server_is_resolved_through_the_other_at_once(
    deployment: Deployment,
) -> None:
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with (
        deployment.client(deployment.first, authorized=True) as first,
        deployment.client(deployment.second) as second,
    ):
        for n in range(5):
            _put(first, urn, f"https://example.org/{n}")
            assert second.get(f"/{urn}").headers["location"] == f"https://example.org/{n}"


def test_a_change_is_served_fresh_through_the_cache_within_its_max_age(
    deployment: Deployment,
) -> None:
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with (
        deployment.client(deployment.https, authorized=True) as writer,
        deployment.client(deployment.https) as reader,
    ):
        _put(writer, urn, "https://example.org/old")
        first = reader.get(f"/{urn}")
        assert first.headers["location"] == "https://example.org/old"
        assert first.headers["x-cache-status"] == "MISS"
        cached = reader.get(f"/{urn}")
        assert cached.headers["x-cache-status"] == "HIT"
        _put(writer, urn, "https://example.org/new")
        wait_for(
            lambda: reader.get(f"/{urn}").headers["location"] == "https://example.org/new",
            "the change served through the cache",
            seconds=REDIRECT_MAX_AGE + 1.5,
        )


def test_citations_and_redirects_are_cached_apart(deployment: Deployment) -> None:
    # The site's cache key holds what Accept may choose (docs/resolution.md, "Citations").
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    with (
        deployment.client(deployment.https, authorized=True) as writer,
        deployment.client(deployment.https) as reader,
    ):
        _put(writer, urn, "https://example.org/cited")
        for accept in ["application/x-bibtex", browser, "application/x-research-info-systems"]:
            for _ in range(2):
                reader.get(f"/{urn}", headers={"Accept": accept})
        for accept, status, start in [
            ("application/x-bibtex", 200, "@misc{"),
            (browser, 302, ""),
            ("application/x-research-info-systems", 200, "TY  - GEN"),
        ]:
            answer = reader.get(f"/{urn}", headers={"Accept": accept})
            assert (answer.status_code, answer.headers["x-cache-status"]) == (status, "HIT")
            assert answer.text.startswith(start)


def test_an_expired_answer_is_served_stale_while_one_request_fetches_the_change(
    deployment: Deployment,
) -> None:
    # docs/caching.md: nginx never lets the hot set expire at once; the answer after expiry is
    # the old one (proxy_cache_use_stale updating, proxy_cache_background_update), the change
    # follows at once.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with (
        deployment.client(deployment.https, authorized=True) as writer,
        deployment.client(deployment.https) as reader,
    ):
        _put(writer, urn, "https://example.org/old")
        assert reader.get(f"/{urn}").headers["x-cache-status"] == "MISS"
        _put(writer, urn, "https://example.org/new")
        changed = time.monotonic()
        while (answer := reader.get(f"/{urn}")).headers["x-cache-status"] == "HIT":
            assert answer.headers["location"] == "https://example.org/old"
            assert time.monotonic() - changed <= REDIRECT_MAX_AGE + 1.5
            time.sleep(0.1)
        assert answer.headers["x-cache-status"] in {"STALE", "UPDATING"}
        assert answer.headers["location"] == "https://example.org/old"
        while (answer := reader.get(f"/{urn}")).headers["location"] != "https://example.org/new":
            assert answer.headers["x-cache-status"] in {"STALE", "UPDATING"}
            assert time.monotonic() - changed <= REDIRECT_MAX_AGE + 3
            time.sleep(0.05)
        assert answer.headers["x-cache-status"] == "HIT"  # fetched in the background


def test_a_cached_answer_names_the_request_that_made_it(deployment: Deployment) -> None:
    # docs/resolver.md: a hit carries the X-Request-ID of the miss that filled the cache, whose
    # line in urnkit's access log says when and how the answer was made.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with deployment.client(deployment.https, authorized=True) as writer:
        _put(writer, urn, "https://example.org/traced")
    with deployment.client(deployment.https) as reader:
        answers = [reader.get(f"/{urn}", headers={"X-Request-ID": f"client-{n}"}) for n in (1, 2)]
    assert [answer.headers["x-cache-status"] for answer in answers] == ["MISS", "HIT"]
    miss, hit = (answer.headers.get_list("x-request-id") for answer in answers)
    assert miss == hit
    assert len(miss) == 1
    assert not miss[0].startswith("client-")  # nginx's id, not what the client sent
    wait_for(  # urnkit writes its access log lines in batches
        lambda: f'"request_id":"{miss[0]}"' in deployment.logs(),
        "the miss's request id in a server's log",
        seconds=5,
    )


def test_a_hit_that_a_plain_client_filled_may_be_read_by_any_site(deployment: Deployment) -> None:
    # The Fetch standard's CORS protocol (§3.2.5): the answer a client without Origin put in
    # the cache lets another site's script read it (the same bytes for all: no Vary: Origin);
    # a preflight reaches the servers through the site.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with deployment.client(deployment.https, authorized=True) as writer:
        _put(writer, urn, "https://example.org/shared")
    with deployment.client(deployment.https) as reader:
        miss = reader.get(f"/{urn}")
        hit = reader.get(f"/{urn}", headers={"Origin": "https://app.example"})
        preflight = reader.options(
            f"/api/v1/urns/{urn}",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "PUT"},
        )
    assert [miss.headers["x-cache-status"], hit.headers["x-cache-status"]] == ["MISS", "HIT"]
    assert hit.headers["access-control-allow-origin"] == "*"
    assert "Link" in hit.headers["access-control-expose-headers"]
    assert "origin" not in hit.headers["vary"].lower()
    assert preflight.status_code == 204
    assert "PUT" in preflight.headers["access-control-allow-methods"]


def test_a_datetime_request_never_gets_a_cached_present_answer(deployment: Deployment) -> None:
    # RFC 7089 §4.1: /{urn} varies by Accept-Datetime; the site's cache key does not hold it,
    # so such a request bypasses the cache and leaves nothing in it.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    past = {"Accept-Datetime": "Tue, 01 Jan 2019 00:00:00 GMT"}
    with deployment.client(deployment.https, authorized=True) as writer:
        _put(writer, urn, "https://example.org/present")
    with deployment.client(deployment.https) as reader:
        present = [reader.get(f"/{urn}") for _ in range(2)]
        negotiated = [reader.get(f"/{urn}", headers=past) for _ in range(2)]
        after = reader.get(f"/{urn}")
    assert [answer.headers["x-cache-status"] for answer in present] == ["MISS", "HIT"]
    assert "accept-datetime" in present[1].headers["vary"].lower()
    assert [answer.headers["x-cache-status"] for answer in negotiated] == ["BYPASS", "BYPASS"]
    for answer in negotiated:
        assert answer.status_code == 302
        assert answer.headers["location"].startswith(f"{deployment.https}/memento/")
    assert after.headers["x-cache-status"] == "HIT"
    assert after.headers["location"] == "https://example.org/present"


def test_nothing_authenticated_is_cached(deployment: Deployment) -> None:
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with deployment.client(deployment.https, authorized=True) as client:
        _put(client, urn, "https://example.org/private")
        answers = [client.get(f"/api/v1/urns/{urn}") for _ in range(2)]
    assert [answer.headers["x-cache-status"] for answer in answers] == ["BYPASS", "BYPASS"]
    assert {answer.headers["cache-control"] for answer in answers} == {"no-store"}


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_absolute_urls_say_what_the_client_used(deployment: Deployment, scheme: str) -> None:
    # The Link header of a deactivated URN names its successor at its absolute resolution URL
    # (RFC 8288), built from the scheme and host nginx forwards (X-Forwarded-Proto, -Host).
    base = deployment.http if scheme == "http" else deployment.https
    old, new = (f"urn:nbn:fi:test-{secrets.token_hex(4)}" for _ in range(2))
    with deployment.client(base, authorized=True) as writer:
        _put(writer, old, "https://example.org/old")
        body = {"note": "moved", "successors": [new]}
        writer.post(f"/api/v1/urns/{old}/deactivate", json=body).raise_for_status()
    with deployment.client(base) as reader:
        gone = reader.get(f"/{old}")
    assert gone.status_code == 410
    assert f'<{base}/{new}>; rel="successor-version"' in gone.headers["link"]


def _restricted(deployment: Deployment) -> tuple[str, str, str]:
    """A new record of Test Library's: a copy restricted to its reading rooms (``ROOMS``),
    then an open one; the URN and the two URLs."""
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    shut, open_ = f"https://library.example/deposit/{urn}", f"https://example.org/{urn}"
    locations = [{"url": shut, "restricted_to": "rooms"}, {"url": open_, "priority": 2}]
    with deployment.client(deployment.first, authorized=True) as writer:
        writer.put(f"/api/v1/urns/{urn}", json={"locations": locations}).raise_for_status()
    return urn, shut, open_


@pytest.mark.parametrize(
    "claim",
    [
        {"Forwarded": f"for={IN_ROOMS}"},
        {"Forwarded": f'for="{IN_ROOMS}:4711";proto=https, for={IN_ROOMS}'},
        {"X-Forwarded-For": IN_ROOMS},
        {"X-Forwarded-For": f"{IN_ROOMS}, {IN_ROOMS}"},
        {"X-Real-IP": IN_ROOMS},
    ],
)
def test_a_client_claiming_a_reading_rooms_address_is_not_let_in(
    deployment: Deployment, claim: dict[str, str]
) -> None:
    urn, shut, open_ = _restricted(deployment)
    # The servers believe nginx, 127.0.0.1: what it says of a client in the rooms lets it in.
    said = httpx.get(f"{deployment.first}/{urn}", headers={"X-Forwarded-For": IN_ROOMS})
    assert said.headers["location"] == shut
    for base in (deployment.http, deployment.https):
        with deployment.client(base) as client:
            answer = client.get(f"/{urn}", headers=claim)
        assert answer.headers["location"] == open_
        assert shut not in answer.headers["link"]

    def all_logged() -> list[dict[str, object]]:  # urnkit writes its access log in batches
        lines = _logged(deployment, f"/{urn}")
        return lines if len(lines) >= 3 else []

    # The servers took the client for what it is: the address nginx received it from.
    lines = wait_for(all_logged, "the three requests in the servers' logs", seconds=5)
    clients = sorted(str(line["client"]) for line in lines)
    assert clients == sorted([IN_ROOMS, CLIENT_ADDRESS, CLIENT_ADDRESS])


def _logged(deployment: Deployment, path: str) -> list[dict[str, object]]:
    """The servers' access log lines of requests for ``path``."""
    lines = (json.loads(line) for line in deployment.logs().splitlines() if line[:1] == "{")
    return [line for line in lines if line.get("path") == path]


@pytest.mark.parametrize(
    "spoof",
    [
        {"Forwarded": "host=evil.example"},
        {"Forwarded": 'for=192.0.2.1;proto=http;host="evil.example:8443"'},
        {"X-Forwarded-Host": "evil.example"},
        {"X-Forwarded-Proto": "evil"},
        {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http"},
        {"Host": "127.0.0.1:9"},  # nginx's $host has no port: a key once without it
        {"Host": "evil.example"},
    ],
)
def test_no_chosen_host_reaches_a_later_cached_answer(
    deployment: Deployment, spoof: dict[str, str]
) -> None:
    # A deactivated URN's 410 (kept a day) names its successor at an absolute URL; the other
    # names the resolver's own host in its Link header and body.
    old, new = (f"urn:nbn:fi:test-{secrets.token_hex(4)}" for _ in range(2))
    with deployment.client(deployment.https, authorized=True) as writer:
        _put(writer, old, "https://example.org/old")
        body = {"note": "moved", "successors": [new]}
        writer.post(f"/api/v1/urns/{old}/deactivate", json=body).raise_for_status()
    for base in (deployment.https, deployment.http):
        for path in (f"/{old}", f"/{old}?s=I2C", f"/uri-res/N2L?{old}"):
            with deployment.client(base) as client:
                client.get(path, headers=spoof)  # whatever it answers this client
                clean = client.get(path)
            assert clean.headers.get("x-cache-status") == "HIT" or "Host" in spoof
            shown = f"{clean.headers.get('link')} {clean.headers.get('location')} {clean.text}"
            assert "evil" not in shown
            assert ":9/" not in shown
            if clean.status_code == 410 and path == f"/{old}":
                assert f'<{base}/{new}>; rel="successor-version"' in clean.headers["link"]


def test_https_answers_carry_hsts_and_http_ones_not(deployment: Deployment) -> None:
    # RFC 6797 §7.2: a host sends Strict-Transport-Security over secure transport only.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with deployment.client(deployment.https, authorized=True) as writer:
        _put(writer, urn, "https://example.org/hsts")
    paths = (f"/{urn}", f"/{urn}", "/staff/sign-in", "/api/v1/prefixes", "/no/such/path")
    with deployment.client(deployment.https) as client:
        for path in paths:
            hsts = client.get(path).headers.get_list("strict-transport-security")
            assert hsts == ["max-age=31536000"], path
    with deployment.client(deployment.http) as client:
        for path in paths:
            assert "strict-transport-security" not in client.get(path).headers, path


def test_too_many_header_fields_are_refused_through_the_site(deployment: Deployment) -> None:
    # RFC 6585 §5, from urnkit: more than 100 fields, or more than 16 KiB of them, each line
    # within nginx's buffers (docs/deploy.md, "Request limits").
    many = {f"x-{n:03d}": "1" for n in range(150)}
    large = {f"x-{n}": "a" * 6000 for n in range(3)}
    with deployment.client(deployment.https) as client:
        for fields in (many, large):
            answer = client.get("/api/v1/prefixes", headers=fields)
            assert answer.status_code == 431
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.headers["strict-transport-security"] == "max-age=31536000"
        assert client.get("/api/v1/prefixes", headers=dict(list(many.items())[:40])).is_success
        # nginx's own refusal: a line longer than one of its 8 KiB buffers gets its 400 page.
        answer = client.get("/api/v1/prefixes", headers={"x-long": "a" * 9000})
        assert answer.status_code == 400
        assert "Request Header Or Cookie Too Large" in answer.text


def test_readers_paths_pass_the_site_as_they_were_sent(deployment: Deployment) -> None:
    # issue 32 points 4 and 6: nginx passes the URI as sent (proxy_pass without a URI), so a
    # pasted URN, a double-prefixed Czech form and the ordinary paths reach urnkit unchanged.
    urn = f"urn:nbn:fi:test-{secrets.token_hex(4)}"
    with (
        deployment.client(deployment.https, authorized=True) as writer,
        deployment.client(deployment.https) as reader,
    ):
        _put(writer, urn, "https://example.org/pasted")
        for form in (
            f"/{urn}.%E2%80%8B",
            f"/{urn}%C2%A0",
            f"/http://resolver.nkp.cz/web/urn/{urn}",
        ):
            moved = reader.get(form)
            assert moved.status_code == 301, form
            assert moved.headers["location"] == f"/{urn}", form
        assert reader.get("/robots.txt").text.startswith("# urnkit")
        assert reader.get("/favicon.ico").headers["content-type"] == "image/vnd.microsoft.icon"
