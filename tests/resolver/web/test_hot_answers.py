"""The redirects a server process keeps (web/hot_answers.py) are the answers it would build: the
same headers, counted in the statistics, and forgotten at once when the record changes, through
this server or any other (tests/resolver/test_behind_nginx.py writes through one server and
resolves through another)."""

from __future__ import annotations

import httpx
from resolver_support import Resolver, register

_PER_REQUEST = {"x-request-id", "date", "server"}


def _answer(client: httpx.Client, path: str) -> tuple[int, list[tuple[str, str]]]:
    response = client.get(path)
    headers = sorted((k, v) for k, v in response.headers.multi_items() if k not in _PER_REQUEST)
    return response.status_code, headers


def test_a_kept_redirect_is_the_one_built_and_a_change_is_seen_at_once(
    resolver: Resolver, api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.4: the redirect leads to the record's current location, kept or not.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/first"}, {"url": "https://b.example/"}])
    built = _answer(anonymous, f"/{urn}")
    assert built[0] == 302
    assert ("location", "https://example.org/first") in built[1]
    for _ in range(5):  # kept by the server process after the first
        assert _answer(anonymous, f"/{urn}") == built
    changed = api.put(f"/api/v1/urns/{urn}", json={"locations": [{"url": "https://c.example/"}]})
    assert changed.is_success, changed.text
    for _ in range(3):
        status, headers = _answer(anonymous, f"/{urn}")
        assert (status, dict(headers)["location"]) == (302, "https://c.example/")
