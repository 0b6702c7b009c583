"""URNs whose NSS holds dot-segments are refused by every way in (RFC 3986 §5.2.4: HTTP clients
remove them, so such a URN could never be resolved): the API's PUT, PATCH and batch against a
running server (both databases), import, and the stored ones are reported by ``urnkit db check``.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import httpx
import pytest
from resolver_support import Resolver, assert_problem, urnkit
from services_support import Principals

from urnkit.resolver.domain import Record, UnacceptableError, parse_urn
from urnkit.resolver.services import Services
from urnkit.resolver.store import now


def send_as_is(
    resolver: Resolver, method: str, path: str, body: object
) -> tuple[int, dict[str, object]]:
    """``method path`` with the path sent exactly (httpx would remove its dot-segments)."""
    address = urlsplit(resolver.base_url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    headers = {
        "Authorization": f"Bearer {resolver.registrant_token}",
        "Content-Type": "application/merge-patch+json" if method == "PATCH" else "application/json",
    }
    try:
        connection.request(method, path, json.dumps(body), headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize("segment", ["..", ".", "%2E%2E", "%2e"])
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_the_api_refuses_a_urn_with_a_dot_segment(
    resolver: Resolver, api: httpx.Client, unique: str, segment: str, method: str
) -> None:
    # RFC 3986 §5.2.4: a client resolving /{urn} would send another path.
    urn = f"urn:nbn:fi:test-{unique}/{segment}/x"
    status, problem = send_as_is(resolver, method, f"/api/v1/urns/{urn}", {"locations": []})
    assert status == 422
    assert "RFC 3986 §5.2.4" in str(problem["detail"])
    assert problem["section"] == "RFC 3986 §5.2.4"
    assert api.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}/x").status_code == 404


def test_a_batch_with_a_dot_segment_urn_stores_nothing(api: httpx.Client, unique: str) -> None:
    # RFC 3986 §5.2.4; the example points at another organisation's URN.
    good = f"urn:nbn:fi:test-{unique}"
    bad = f"urn:nbn:fi:test-{unique}/../../urn:nbn:fi:other-3"
    body = {"records": [{"urn": good}, {"urn": bad}]}
    problem = assert_problem(api.post("/api/v1/urns:batch", json=body), 422)
    assert problem["index"] == 1
    assert "RFC 3986 §5.2.4" in problem["detail"]
    assert api.get(f"/api/v1/urns/{good}").status_code == 404


def test_an_import_refuses_a_dot_segment_urn(services: Services, who: Principals) -> None:
    # RFC 3986 §5.2.4: import holds registered URNs to the same rule.
    rows = [{"urn": "urn:nbn:fi:demo-1/./x", "locations": [{"url": "https://example.org/"}]}]
    with pytest.raises(UnacceptableError, match=r"RFC 3986 §5\.2\.4"):
        services.transfer.import_records(enumerate(rows, 1))
    assert services.records.records(None, 0, 10)[0] == []


def store_as_before(services: Services, *texts: str) -> None:
    """Records of ``texts`` written as they were before the rule (straight to the store)."""
    with services.store.transaction() as tx:
        owner_id = tx.organisations.id("Demo Library")
        assert owner_id is not None
        for text in texts:
            urn = parse_urn(text)
            moment = now()
            record = Record(
                text, urn.equivalence_key(), "fi:demo", "active", "Demo Library", moment, moment
            )
            assert tx.records.insert(record, owner_id) is not None


def test_db_check_reports_the_stored_urns_that_break_the_rule(
    services: Services, who: Principals, database_url: str
) -> None:
    # RFC 3986 §5.2.4: rows stored before the rule are reported, one line each, exit 1.
    store_as_before(services, "urn:nbn:fi:demo-1", "urn:nbn:fi:demo-2/a.b")
    clean = urnkit("db", "check", "--database-url", database_url, check=False)
    assert (clean.returncode, clean.stdout) == (0, "")
    bad = ["urn:nbn:fi:demo-3/../x", "urn:nbn:fi:demo-4/%2e"]
    store_as_before(services, *bad)
    found = urnkit("db", "check", "--database-url", database_url, check=False)
    assert found.returncode == 1
    lines = found.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == bad
    assert all("RFC 3986 §5.2.4" in line for line in lines)
