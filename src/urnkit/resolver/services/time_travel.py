"""Time travel (RFC 7089 Memento): the versions of a record, as a reader may see them, and the
archived copies of its locations when link checking has found every one of them broken.

>>> from urnkit.resolver.domain import Location, PUBLIC
>>> from urnkit.resolver.services import Services
>>> from urnkit.resolver.store import Store
>>> services = Services(Store("sqlite://"), web_archives=("https://archive.example/{datetime}/{url}",))
>>> services.store.upgrade()
>>> services.admin.create_organisation("Demo Library")
'Demo Library'
>>> services.admin.delegate("Demo Library", "FI:Demo")
'fi:demo'
>>> who = services.access.authenticate(services.admin.create_token("Demo Library", "admin"))
>>> _ = services.records.put(who, "URN:NBN:fi:demo-1", [Location("https://a.example/")], {})
>>> versions = services.time_travel.versions("urn:nbn:fi:demo-1", PUBLIC)
>>> versions.urn, [entry.action for entry in versions.entries]
('urn:nbn:fi:demo-1', ['created'])
>>> services.time_travel.archived_copies(services.records.get("urn:nbn:fi:demo-1"))
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from urnkit.resolver.domain import Reader, Record, parse_urn, shown_document
from urnkit.resolver.domain.versions import ArchivedCopy, Versions, archived_copy
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.store import Store


class TimeTravel:
    """The versions of the records of a :class:`~urnkit.resolver.store.Store` and archived
    copies of their locations in the ``web_archives`` (URL templates, see
    :func:`~urnkit.resolver.representations.memento.archived_copy`)."""

    def __init__(self, store: Store, records: RecordService, web_archives: Sequence[str]) -> None:
        self.store = store
        self.records = records
        self.web_archives = tuple(web_archives)

    def versions(self, text: str, reader: Reader) -> Versions:
        """Every version of the record of a URN, oldest first, without the locations
        ``reader`` may not see (RFC 7089's Mementos); NotFoundError if none is registered."""
        history = self.records.history(text)
        restricted = any(
            location.get("restricted_to")
            for entry in history
            for location in entry.record.get("locations") or ()
        )
        shown = [replace(entry, record=shown_document(entry.record, reader)) for entry in history]
        return Versions.of(parse_urn(text).equivalence_key(), shown, restricted)

    def archived_copies(self, record: Record) -> list[ArchivedCopy]:
        """The copies of ``record``'s locations in each web archive, when link checking has
        found every location broken (none otherwise: resolution leads to one that works);
        asked for at the moment each location was last found working. Nothing is fetched."""
        if not self.web_archives or not record.locations:
            return []
        urls = [location.url for location in record.locations]
        with self.store.snapshot() as tx:
            states = tx.links.states(urls)
            if any(url not in states or states[url].status != "broken" for url in urls):
                return []
            working = tx.links.last_working(urls)
        return [
            ArchivedCopy(archived_copy(template, url, when), url, when)
            for url in dict.fromkeys(urls)
            for when in (working.get(url, states[url].since),)
            for template in self.web_archives
        ]
