"""What the API and the commands show: records, history entries, link states and forwarding
rows as JSON objects.

>>> from datetime import datetime, UTC
>>> t = datetime(2026, 1, 1, tzinfo=UTC)
>>> record_json(Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t))["created"]
'2026-01-01T00:00:00+00:00'
"""

from __future__ import annotations

from typing import Any

from urnkit.resolver.domain import BrokenLink, HistoryEntry, LinkState, Record
from urnkit.resolver.domain.forwarding import Forwarding


def record_json(record: Record) -> dict[str, Any]:
    """A record as the API shows it."""
    return {
        "urn": record.urn,
        "status": record.status,
        "locations": [
            {
                "url": loc.url,
                "priority": loc.priority,
                "label": loc.label,
                "media_type": loc.media_type,
                "organisation": loc.organisation,
                "restricted_to": loc.restricted_to,
            }
            for loc in record.locations
        ],
        "metadata": dict(record.metadata),
        "successors": list(record.successors),
        "note": record.note,
        "owner": record.owner,
        "grants": list(record.grants),
        "created": record.created.isoformat(),
        "updated": record.updated.isoformat(),
    }


def history_json(entry: HistoryEntry) -> dict[str, Any]:
    """A history entry as the API shows it."""
    return {
        "at": entry.at.isoformat(),
        "action": entry.action,
        "actor": entry.actor,
        "record": dict(entry.record),
    }


def link_json(state: LinkState) -> dict[str, Any]:
    """What link checking knows of a URL, as the API shows it."""
    return {
        "url": state.url,
        "status": state.status,
        "http_status": state.http_status,
        "detail": state.detail,
        "failures": state.failures,
        "since": state.since.isoformat(),
        "checked": None if state.checked is None else state.checked.isoformat(),
    }


def broken_link_json(broken: BrokenLink) -> dict[str, Any]:
    """A broken location as the report shows it: its owner, its record's URN, the link's state.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> link = LinkState("https://example.org/x", "broken", 404, "GET 404 Not Found", 1, t, t)
    >>> broken_link_json(BrokenLink("Library", "URN:NBN:fi:lib-1", link))["http_status"]
    404
    """
    return {"owner": broken.owner, "urn": broken.urn} | link_json(broken.link)


def forwarding_json(entry: Forwarding) -> dict[str, Any]:
    """A row of the forwarding table as the API shows it.

    >>> forwarding_json(Forwarding("fi", "https://urn.fi/{urn}"))["health"]
    'unknown'
    """
    return {
        "country": entry.country,
        "url_template": entry.url_template,
        "health": entry.health,
        "checked": None if entry.checked is None else entry.checked.isoformat(),
        "detail": entry.detail,
        "note": entry.note,
    }
