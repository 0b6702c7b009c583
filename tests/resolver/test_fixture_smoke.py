from resolver_support import Resolver


def test_put_then_resolve(resolver: Resolver, unique: str) -> None:
    with resolver.client(resolver.registrant_token) as api:
        made = api.put(f"/api/v1/urns/urn:nbn:fi:test-{unique}", json={"locations": [{"url": "https://example.org/a"}], "metadata": {}})
        assert made.status_code == 201, made.text
        found = api.get(f"/URN:NBN:FI:TEST-{unique}", follow_redirects=False)
        assert found.status_code == 302
