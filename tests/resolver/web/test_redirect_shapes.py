"""A record's redirect headers filled into the shape they share with others
(``web/front.py``, ``RedirectShapes``), as pairs and encoded as sent, are byte for byte those
made whole (``redirect_headers``): for any key, target and locations, with any media types, at any
resolver URL (RFC 8288 ``Link``, RFC 9110 ``Location``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import parse_urn
from urnkit.resolver.services.resolution import Resolution
from urnkit.resolver.web.front import SLOT, RedirectShapes, base_key, redirect_headers

# Characters of URLs and keys as the database may hold them: what a URI allows and what
# uri_reference must percent-encode (space, non-ASCII, "%", quotes and angle brackets).
_TEXT = st.text(
    st.sampled_from([*"az09-._~:/?#[]@!$&'()*+,;=%", " ", "ä", "€", '"', "<", ">", "\\"]),
    max_size=12,
)
_URLS = _TEXT.map(lambda tail: f"https://example.org/{tail}")
_MEDIA = st.sampled_from([None, "application/pdf", "text/html"])


def _scope(scheme: str, host: bytes, root: str) -> dict[str, Any]:
    headers = [(b"host", host)] if host else []
    return {"type": "http", "scheme": scheme, "server": ("r.example", 80), "root_path": root,
            "path": "/", "query_string": b"", "headers": headers}  # fmt: skip


@given(
    key=_TEXT.map(lambda tail: f"urn:nbn:fi-{tail}"),
    target=_URLS,
    located=st.lists(st.tuples(_URLS, _MEDIA), min_size=1, max_size=3),
    scheme=st.sampled_from(["http", "https"]),
    host=st.sampled_from([b"", b"resolver.example", b"127.0.0.1:8000"]),
    root=st.sampled_from(["", "/resolver"]),
    cache_control=st.sampled_from([b"max-age=300", b"no-store"]),
)
def test_a_shape_filled_is_the_redirect_made_whole(
    key: str,
    target: str,
    located: list[tuple[str, str | None]],
    scheme: str,
    host: bytes,
    root: str,
    cache_control: bytes,
) -> None:
    alternates = tuple(url for url, _ in located)
    media = tuple(kind for _, kind in located)
    typed = media if any(media) else ()
    found = Resolution("redirect", parse_urn("urn:nbn:fi-1"), target, key,
                       alternates=alternates, media_types=typed, kept=True)  # fmt: skip
    shapes, scope = RedirectShapes(), _scope(scheme, host, root)
    whole = redirect_headers(scope, target, cache_control, found)
    assert shapes.filled(scope, cache_control, found) == whole
    sent = b"".join(name + b": " + value + b"\r\n" for name, value in whole)
    assert shapes.encoded(base_key(scope), cache_control, found) == sent
    # The shape now kept, filled for another record of it.
    other = Resolution("redirect", parse_urn("urn:nbn:fi-2"), target + "x", key + "y",
                       alternates=tuple(url + "z" for url in alternates), media_types=typed,
                       kept=True)  # fmt: skip
    assert shapes.filled(scope, cache_control, other) == redirect_headers(
        scope, target + "x", cache_control, other
    )
    assert len(shapes.templates) == 1


def test_records_with_predecessors_or_a_url_holding_a_slot_are_made_whole() -> None:
    urn = parse_urn("urn:nbn:fi-1")
    found = Resolution("redirect", urn, "https://a.example/", "urn:nbn:fi-1",
                       alternates=("https://a.example/",), kept=True)  # fmt: skip
    succeeding = Resolution("redirect", urn, "https://a.example/", "urn:nbn:fi-1",
                            alternates=("https://a.example/",), predecessors=("urn:nbn:fi-0",),
                            kept=True)  # fmt: skip
    shapes = RedirectShapes()
    assert shapes.filled(_scope("http", b"r.example", ""), b"no-store", succeeding) is None
    assert shapes.filled(_scope("http", f"{SLOT}key-".encode(), ""), b"no-store", found) is None
    assert shapes.templates == {}
