"""Legacy and mistaken resolver URLs (``web/routes/legacy.py``; docs/resolution.md, "Stable
URLs"): each form moves permanently to ``/{urn}``; nothing else does. The mapping as a property
of any RFC 8141 URN, then black-box against ``urnkit serve`` on SQLite and PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import Resolver, register

from urnkit.resolver.web.routes.legacy import canonical_target

# RFC 8141 §2 (pchar: RFC 3986 §3.3), written out: a URN as an HTTP request carries it, without
# an f-component (a fragment is never sent).
PCHAR = st.sampled_from([*"abcXYZ019-._~!$&'()*+,;=:@", "%2F", "%41", "%c3%a4"])
NSS = st.builds(
    lambda first, rest: first + "".join(rest), PCHAR, st.lists(PCHAR | st.just("/"), max_size=8)
)
COMPONENT = st.lists(PCHAR | st.sampled_from(["/", "?"]), min_size=1, max_size=6).map("".join)


@dataclass(frozen=True)
class Parts:
    """A URN as sent: its assigned name, r- and q-components (RFC 8141 §2)."""

    assigned_name: str
    r_component: str | None
    q_component: str | None

    @property
    def text(self) -> str:
        r = "" if self.r_component is None else f"?+{self.r_component}"
        q = "" if self.q_component is None else f"?={self.q_component}"
        return self.assigned_name + r + q


SENT = st.builds(
    Parts,
    st.builds(
        lambda urn, nid, nss: f"{urn}:{nid}:{nss}",
        st.sampled_from(["urn", "URN", "Urn"]),
        st.sampled_from(["nbn", "NBN", "isbn", "example-a1"]),
        NSS,
    ),
    st.none() | COMPONENT,
    st.none() | COMPONENT,
)
RESOLVERS = ["https://nbn-resolving.org", "http://urn.fi", "http:/urn.fi", "HTTPS://host:8443"]


def _split(url: str) -> tuple[str, str]:
    path, _, query = url.partition("?")
    return path, query


@given(parts=SENT, around=st.sampled_from(["/redirect/", "/urn/", "/REDIRECT/"]))
def test_a_path_form_moves_to_the_urn_with_its_components(parts: Parts, around: str) -> None:
    # RFC 8141 §2: the r- and q-components follow the assigned name after "?"; they go along.
    assert canonical_target(*_split(around + parts.text)) == "/" + parts.text


@given(parts=SENT, resolver=st.sampled_from(RESOLVERS), nested=st.booleans())
def test_another_resolvers_url_around_a_urn_moves_to_it(
    parts: Parts, resolver: str, nested: bool
) -> None:
    url = f"/{resolver}/{'urn/' if nested else ''}{parts.text}"
    assert canonical_target(*_split(url)) == "/" + parts.text


@given(
    parts=SENT,
    path=st.sampled_from(["/resolve", "/resolver", "/", "/resolver/"]),
    name=st.sampled_from(["urn", "identifier", "URN"]),
    before=st.sampled_from(["", "lang=de&", "x&"]),
    resolver=st.sampled_from(["", *RESOLVERS]),
)
def test_a_query_form_moves_to_the_assigned_name(
    parts: Parts, path: str, name: str, before: str, resolver: str
) -> None:
    urn = parts.assigned_name
    if "&" in urn:  # a query's separator: such a URN cannot travel unencoded in a parameter
        urn = urn.replace("&", "%26")
    path = f"/{resolver}{path}" if resolver else path
    assert canonical_target(path, f"{before}{name}={urn}&after=1") == "/" + urn


def test_a_urn_encoded_whole_is_decoded_once() -> None:
    assert canonical_target("/resolve", "urn=urn%3Anbn%3Ade%3A101-1") == "/urn:nbn:de:101-1"
    assert canonical_target("/urn/urn%3Anbn%3Ade%3A101-1", "") == "/urn:nbn:de:101-1"
    # Encoded in part, it stays as sent: %2F and / differ in a URN (RFC 8141 §3).
    assert canonical_target("/resolve", "urn=urn:nbn:de:a%2Fb") == "/urn:nbn:de:a%2Fb"


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/urn:nbn:fi:test-1", ""),  # the canonical form itself
        ("/resolve", "urn=not-a-urn"),
        ("/resolve", "q=urn:nbn:de:1"),  # another parameter's URN
        ("/resolve", "urn="),
        ("/search", "identifier=urn:nbn:de:1"),
        ("/redirect/", ""),
        ("/redirect/urn:", ""),
        ("/https://example.org/page", ""),
        ("/api/v1/urns/urn:nbn:fi:test-1", ""),
        ("/", ""),
    ],
)
def test_other_urls_are_not_moved(path: str, query: str) -> None:
    assert canonical_target(path, query) is None


def test_every_legacy_form_moves_and_then_resolves(resolver: Resolver, api: httpx.Client) -> None:
    # Black-box, on each database: each documented form answers 301 to /{urn} (HEAD too),
    # cacheable as a 400 is; following it resolves as /{urn} does.
    urn = "urn:nbn:fi:test-legacy-1"
    register(api, urn, [{"url": "https://example.org/legacy"}])
    forms = [
        f"/resolve?urn={urn}",
        f"/resolver?urn={urn}",
        f"/?identifier={urn}",
        f"/redirect/{urn}",
        f"/urn/{urn}",
        f"/https://nbn-resolving.org/{urn}",
        f"/http://urn.fi/URN:NBN:{urn[8:]}",  # RFC 8141 §3: "urn" and the NID in any case
        f"/https://nbn-resolving.org/resolver?identifier={urn}",
    ]
    with httpx.Client(base_url=resolver.base_url) as client:
        for form in forms:
            for method in ("GET", "HEAD"):
                moved = client.request(method, form)
                assert moved.status_code == 301, (form, moved.text)
                location = moved.headers["location"]
                assert location.lower() == f"/{urn}", form
                assert moved.headers["cache-control"] == "max-age=86400"
            found = client.get(location)
            assert found.status_code == 302, form
            assert found.headers["location"] == "https://example.org/legacy"
        # A form carries the URN's q-component along (RFC 8141 §2.3.2).
        moved = client.get(f"/redirect/{urn}?=lang=fi")
        assert moved.headers["location"] == f"/{urn}?=lang=fi"
        # What names no URN is left to the other routes; an authenticated request is private.
        assert client.get("/?identifier=nothing").status_code == 200  # the home page
        private = client.get(f"/urn/{urn}", headers={"Authorization": "Bearer x"})
        assert private.headers["cache-control"] == "no-store"
