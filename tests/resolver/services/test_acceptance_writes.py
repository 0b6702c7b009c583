"""The acceptance rule where records are written without the API, in process on SQLite and
PostgreSQL: an import row, and the records service's own writes (a patch that would grow
metadata past its limit), are refused with the rule's error naming the URN and the place;
nothing of the refused batch is stored."""

from __future__ import annotations

from typing import Any

import pytest
from services_support import Principals

from urnkit.resolver.domain import (
    MAX_METADATA_BYTES,
    MAX_URN_LENGTH,
    NotFoundError,
    UnacceptableError,
    UnacceptableInputError,
)
from urnkit.resolver.services import Services


@pytest.mark.parametrize(
    ("row", "pointer"),
    [
        ({"metadata": {"t": float("nan")}}, "/metadata/t"),
        ({"metadata": {"t": ["\ud800"]}}, "/metadata/t/0"),
        ({"metadata": {"a\x00": 1}}, "/metadata/a\x00"),
        ({"note": "\x00"}, "/note"),
        ({"locations": [{"url": "https://example.org/", "label": "\udfff"}]}, "/locations/0/label"),
    ],
)
def test_an_import_row_is_refused_by_its_urn(
    services: Services, who: Principals, row: dict[str, Any], pointer: str
) -> None:
    rows = [{"urn": "urn:nbn:fi:demo-1"}, {"urn": "urn:nbn:fi:demo-2", **row}]
    with pytest.raises(UnacceptableInputError) as caught:
        services.transfer.import_records(enumerate(rows, 1))
    assert caught.value.detail.startswith(f"urn:nbn:fi:demo-2: {pointer}:")
    assert [e["pointer"] for e in caught.value.extensions["errors"]] == [pointer]
    with pytest.raises(NotFoundError):  # the batch holding the row is not stored
        services.records.get("urn:nbn:fi:demo-1")


def test_an_imported_urn_too_long_is_refused(services: Services, who: Principals) -> None:
    urn = "urn:nbn:fi:demo-" + "x" * MAX_URN_LENGTH
    with pytest.raises(UnacceptableError, match=f"at most {MAX_URN_LENGTH}"):
        services.transfer.import_records(enumerate([{"urn": urn}], 1))


def test_a_patch_keeps_metadata_within_its_limit(services: Services, who: Principals) -> None:
    urn = "urn:nbn:fi:demo-p"
    full = {"t": "x" * (MAX_METADATA_BYTES - len('{"t":""}'))}
    services.records.put(who.demo, urn, [], full)
    with pytest.raises(UnacceptableInputError, match=r"^the patched record: /metadata: metadata"):
        services.records.patch(who.demo, urn, {"metadata": {"u": 1}})
    assert services.records.get(urn).metadata == full
    assert len(services.records.history(urn)) == 1
