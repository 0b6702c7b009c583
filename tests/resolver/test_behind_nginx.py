"""Two ``urnkit serve`` processes on one PostgreSQL behind the nginx site of ``docs/deploy/``
(Debian's nginx, really started; TLS, the cache): a write through one is resolved through the
other at once; a change is served fresh through the cache within the documented max-age; the
absolute URLs the servers build say what the client used (trusted proxies). nginx is required
in CI and under ``URNKIT_REQUIRE_NGINX=1`` (``.ci/run`` installs it); elsewhere, without it,
these tests are skipped."""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from resolver_support import Server, fresh_database, set_up_resolver

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from nginx_site import NginxError, find_nginx, free_port, running_nginx, urnkit_site

REDIRECT_MAX_AGE = 2  # seconds: cache_redirect of the servers here


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
        return httpx.Client(base_url=base_url, headers=headers, verify=False, timeout=30)


def _require_nginx() -> None:
    try:
        find_nginx()
    except NginxError as error:
        if os.environ.get("URNKIT_REQUIRE_NGINX") == "1" or os.environ.get("CI"):
            pytest.fail(f"{error} (required in CI and under URNKIT_REQUIRE_NGINX=1)")
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    _require_nginx()
    directory = tmp_path_factory.mktemp("behind-nginx")
    env = {
        "URNKIT_TRUSTED_PROXIES": "127.0.0.1",
        "URNKIT_CACHE_REDIRECT": str(REDIRECT_MAX_AGE),
        "URNKIT_CACHE_NOT_FOUND": str(REDIRECT_MAX_AGE),
    }
    with fresh_database("postgresql", directory) as url:
        tokens = set_up_resolver(url)
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
        changed = time.monotonic()
        while reader.get(f"/{urn}").headers["location"] != "https://example.org/new":
            assert time.monotonic() - changed <= REDIRECT_MAX_AGE + 1.5
            time.sleep(0.2)


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
    deadline = time.monotonic() + 5  # urnkit writes its access log lines in batches
    while f'"request_id":"{miss[0]}"' not in deployment.logs():
        assert time.monotonic() < deadline, "the miss's request id is in no server's log"
        time.sleep(0.1)


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
