"""HTTP caching of the resolver's answers (RFC 9111) and conditional requests (RFC 9110 §13),
black-box against ``urnkit serve`` on SQLite and PostgreSQL, its max-ages set by
``URNKIT_CACHE_*``."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import DATABASES, Server, fresh_database, set_up_resolver

# Each max-age its own, so that a test sees which one an answer got.
POLICY = {
    "URNKIT_CACHE_REDIRECT": "11",
    "URNKIT_CACHE_RECORD": "22",
    "URNKIT_CACHE_NOT_FOUND": "33",
    "URNKIT_CACHE_INVALID": "44",
    "URNKIT_CACHE_GONE": "55",
}
JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html"}


@dataclass(frozen=True)
class Cached:
    """A server with :data:`POLICY`, a registrant's client, an anonymous one, and a test's own
    URNs: ``{n}-1`` active (one location), ``{n}-2`` without a location, ``{n}-3``
    deactivated naming ``{n}-1`` its successor."""

    anonymous: httpx.Client
    registrant: httpx.Client
    token: str
    n: str

    def put(self, suffix: str, url: str | None) -> None:
        locations = [] if url is None else [{"url": url}]
        body = {"locations": locations, "metadata": {"title": suffix}}
        self.registrant.put(f"/api/v1/urns/urn:nbn:fi:test-{self.n}-{suffix}", json=body)

    def deactivate(self, suffix: str, successor: str) -> None:
        body = {"note": "gone", "successors": [f"urn:nbn:fi:test-{self.n}-{successor}"]}
        urn = f"urn:nbn:fi:test-{self.n}-{suffix}"
        self.registrant.post(f"/api/v1/urns/{urn}/deactivate", json=body).raise_for_status()


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """A resolver with :data:`POLICY`: its URL and a registrant token of fi:test."""
    directory = tmp_path_factory.mktemp(f"cache-{request.param}")
    with fresh_database(request.param, directory) as url:
        tokens = set_up_resolver(url)
        with Server(url, env=POLICY) as running:
            yield running.base_url, tokens["registrant_token"]


@pytest.fixture
def cached(server: tuple[str, str]) -> Iterator[Cached]:
    base_url, token = server
    auth = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=base_url, timeout=30) as anonymous,
        httpx.Client(base_url=base_url, headers=auth, timeout=30) as registrant,
    ):
        made = Cached(anonymous, registrant, token, secrets.token_hex(4))
        made.put("1", "https://example.org/here")
        made.put("2", None)
        made.put("3", "https://example.org/here")
        made.deactivate("3", "1")
        yield made


@pytest.mark.parametrize(
    ("path", "headers", "status", "max_age"),
    [
        ("/urn:nbn:fi:test-{n}-1", {}, 302, 11),  # the front's redirect
        ("/urn:nbn:fi:test-{n}-1?s=I2L", {}, 302, 11),  # RFC 2483 §4.1
        ("/uri-res/I2R?urn:nbn:fi:test-{n}-1", {}, 302, 11),
        ("/urn:nbn:fi:test-{n}-2", HTML, 200, 22),  # RFC 8458 §4.5: the surrogate page
        ("/urn:nbn:fi:test-{n}-1", JSON, 200, 22),
        ("/uri-res/I2Ls?urn:nbn:fi:test-{n}-1", {}, 200, 22),
        ("/urn:nbn:fi:test-{n}-9", {}, 404, 33),  # may be registered at any time
        ("/urn:nbn:fi:test-{n}-9", HTML, 404, 33),
        ("/urn:nbn:fi:test-{n}-1?s=I2R", {"Accept": "image/png"}, 406, 33),
        ("/urn:a:{n}", {}, 400, 44),  # RFC 8141 §2: an NID of one letter
        ("/uri-res/I2L?", {}, 400, 44),
        ("/urn:nbn:fi:test-{n}-3", {}, 410, 55),  # RFC 8458 §4.1: never active again
        ("/urn:nbn:fi:test-{n}-3", HTML, 410, 55),
    ],
)
def test_each_resolution_outcome_has_its_max_age_and_varies_by_accept(
    cached: Cached, path: str, headers: dict[str, str], status: int, max_age: int
) -> None:
    # RFC 9111 §5.2.2.1: max-age; RFC 9110 §12.5.5: the answer is negotiated by Accept, and
    # a page also by Accept-Language (§12.5.4: its language; docs/languages.md).
    answer = cached.anonymous.get(path.format(n=cached.n), headers=headers)
    assert answer.status_code == status
    assert answer.headers["cache-control"] == f"max-age={max_age}"
    page = answer.headers.get("content-type", "").startswith("text/html")
    assert page == (headers is HTML)
    # RFC 7089 §4.1: /{urn} of a record here is its own TimeGate, negotiated by datetime too.
    timegate = "?" not in path and path.startswith("/urn:nbn") and status != 404
    vary = ["Accept", *(["accept-datetime"] * timegate), *(["Accept-Language"] * page)]
    assert [name.strip() for name in answer.headers["vary"].split(",")] == vary


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/urn:nbn:fi:test-{n}-1"),
        ("GET", "/api/v1/urns/urn:nbn:fi:test-{n}-1"),
        ("GET", "/api/v1/links/broken"),
        ("POST", "/api/v1/urns/urn:nbn:fi:test-{n}-2/deactivate"),
    ],
)
def test_an_authenticated_answer_is_never_stored(cached: Cached, method: str, path: str) -> None:
    # RFC 9111 §5.2.2.5: no-store, whatever the route would let a cache keep.
    answer = cached.registrant.request(method, path.format(n=cached.n), json={"note": "x"})
    assert answer.status_code < 400
    assert answer.headers["cache-control"] == "no-store"


def test_a_write_without_credentials_is_not_stored_either(cached: Cached) -> None:
    path = f"/api/v1/urns/urn:nbn:fi:test-{cached.n}-1"
    answer = cached.anonymous.put(path, json={"locations": []})
    assert answer.status_code == 401
    assert answer.headers["cache-control"] == "no-store"


CONDITIONAL = [
    ("/api/v1/urns/urn:nbn:fi:test-{n}-1", {}, "no-cache"),
    ("/api/v1/urns/urn:nbn:fi:test-{n}-1/history", {}, "no-cache"),
    ("/urn:nbn:fi:test-{n}-2", HTML, "max-age=22"),  # a landing page
    ("/urn:nbn:fi:test-{n}-1", JSON, "max-age=22"),
    ("/urn:nbn:fi:test-{n}-1?s=I2C", HTML, "max-age=22"),
    ("/uri-res/I2C?urn:nbn:fi:test-{n}-1", {"Accept": "application/xml"}, "max-age=22"),
    ("/uri-res/I2Cs?urn:nbn:fi:test-{n}-1", {}, "max-age=22"),
    ("/uri-res/I2Ls?urn:nbn:fi:test-{n}-1", {}, "max-age=22"),
    ("/uri-res/I2Rs?urn:nbn:fi:test-{n}-1", {}, "max-age=22"),
    ("/uri-res/I2N?urn:nbn:fi:test-{n}-3", {}, "max-age=22"),
    ("/uri-res/I2Ns?urn:nbn:fi:test-{n}-3", {}, "max-age=22"),
    ("/oai?verb=Identify", {}, "no-cache"),
    ("/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier=urn:nbn:fi:test-{n}-1", {}, "no-cache"),
]


@pytest.mark.parametrize(("path", "headers", "cache_control"), CONDITIONAL)
def test_a_representation_with_its_etag_again_is_not_modified(
    cached: Cached, path: str, headers: dict[str, str], cache_control: str
) -> None:
    path, client = path.format(n=cached.n), cached.anonymous
    first = client.get(path, headers=headers)
    assert first.status_code == 200
    etag = first.headers["etag"]
    assert etag[0] + etag[-1] == '""'  # a strong validator (RFC 9110 §8.8.3)
    # RFC 9110 §13.1.2: If-None-Match, compared weakly; a 304 repeats ETag, Cache-Control
    # and Vary and has no body (§15.4.5).
    again = client.get(path, headers=headers | {"If-None-Match": f'"other", W/{etag}'})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert again.headers["cache-control"] == cache_control
    assert again.headers.get("vary") == first.headers.get("vary")
    assert client.get(path, headers=headers | {"If-None-Match": '"other"'}).status_code == 200


def _date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


@pytest.mark.parametrize(("path", "headers", "_"), [c for c in CONDITIONAL if "I2N" not in c[0]])
def test_last_modified_answers_if_modified_since(
    cached: Cached, path: str, headers: dict[str, str], _: str
) -> None:
    path, client = path.format(n=cached.n), cached.anonymous
    modified = client.get(path, headers=headers).headers["last-modified"]
    stamp = datetime.strptime(modified, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    assert abs(stamp - datetime.now(UTC)) < timedelta(minutes=5)
    # RFC 9110 §13.1.3: not modified since then; modified since a second before.
    assert client.get(path, headers=headers | {"If-Modified-Since": modified}).status_code == 304
    earlier = {"If-Modified-Since": _date(stamp - timedelta(seconds=1))}
    assert client.get(path, headers=headers | earlier).status_code == 200
    # §13.1.3: If-Modified-Since is ignored when If-None-Match is sent.
    both = headers | {"If-Modified-Since": modified, "If-None-Match": '"other"'}
    assert client.get(path, headers=both).status_code == 200


def test_a_change_gives_a_new_etag_and_the_old_one_a_full_answer(cached: Cached) -> None:
    path, client = f"/api/v1/urns/urn:nbn:fi:test-{cached.n}-1", cached.anonymous
    before = client.get(path)
    time.sleep(1.1)  # Last-Modified counts whole seconds
    cached.put("1", "https://example.org/new")
    after = client.get(path, headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200
    assert after.json()["locations"][0]["url"] == "https://example.org/new"
    assert after.headers["etag"] != before.headers["etag"]
    assert after.headers["last-modified"] != before.headers["last-modified"]
    ims = {"If-Modified-Since": before.headers["last-modified"]}
    assert client.get(path, headers=ims).status_code == 200


def test_a_new_predecessor_is_a_change_of_the_successors_page(cached: Cached) -> None:
    # The page of {n}-1 names its predecessors: deactivating one more changes it.
    path, client = f"/urn:nbn:fi:test-{cached.n}-1?s=I2C", cached.anonymous
    before = client.get(path, headers=HTML)
    time.sleep(1.1)
    cached.put("4", "https://example.org/four")
    cached.deactivate("4", "1")
    ims = {"If-Modified-Since": before.headers["last-modified"]}
    after = client.get(path, headers=HTML | ims)
    assert after.status_code == 200
    assert f"urn:nbn:fi:test-{cached.n}-4" in after.text


_VISIBLE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60).map(str.strip)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(none_match=st.one_of(st.none(), _VISIBLE), modified_since=st.one_of(st.none(), _VISIBLE))
def test_any_validators_give_the_answer_or_a_304(
    cached: Cached, none_match: str | None, modified_since: str | None
) -> None:
    # An input boundary: whatever a client sends as validators, never an error, and a 304
    # only for the entity tag (or "*") it holds, or for a date it gives.
    headers = {"If-None-Match": none_match, "If-Modified-Since": modified_since}
    sent = {name: value for name, value in headers.items() if value is not None}
    path = f"/api/v1/urns/urn:nbn:fi:test-{cached.n}-1"
    answer = cached.anonymous.get(path, headers=sent)
    assert answer.status_code in (200, 304)
    if answer.status_code == 304 and none_match is not None and none_match.strip():
        assert answer.headers["etag"].strip('"') in none_match or "*" in none_match
