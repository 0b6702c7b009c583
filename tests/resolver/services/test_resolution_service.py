"""Resolution (``urnkit.resolver.services.resolution``), in process, on SQLite and
PostgreSQL: components (RFC 8141 §2.3), reserved URNs (RFC 8458 §4.5), unknown URNs."""

from __future__ import annotations

import pytest
from services_support import Principals

from urnkit.resolver.domain import (
    Location,
    NotFoundError,
)
from urnkit.resolver.services import Services

# --- resolution ----------------------------------------------------------------------------------


def test_resolution(services: Services, who: Principals) -> None:
    services.records.put(
        who.demo,
        "urn:nbn:fi:demo-1",
        [Location("https://example.org/b?x=1", priority=2), Location("https://example.org/a")],
        {},
    )
    # RFC 8141 §2.3.2: the q-component is copied into the locator's query; §3: neither the
    # q- nor the f-component changes which record it is.
    found = services.resolution.resolve("URN:NBN:FI:DEMO-1?=lang=fi#section")
    assert (found.kind, found.target) == ("redirect", "https://example.org/a?lang=fi")
    services.records.patch(
        who.demo, "urn:nbn:fi:demo-1", {"locations": [Location("https://e.org/?q")]}
    )
    assert services.resolution.resolve("urn:nbn:fi:demo-1?=p=2").target == "https://e.org/?q&p=2"
    assert services.resolution.resolve("urn:nbn:fi:demo-1").target == "https://e.org/?q"
    reserved = services.records.generate(who.demo, "fi:demo")[0]
    assert (
        services.resolution.resolve(reserved.urn).kind == "surrogate"
    )  # RFC 8458 §4.5: no location yet
    with pytest.raises(NotFoundError):
        services.resolution.resolve("urn:nbn:fi:demo-404")
