"""What the resolver harvests URN:NBN -> URL mappings from: OAI-PMH 2.0 repositories."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class HarvestSource:
    """An OAI-PMH repository whose records the harvester registers as URN:NBN -> URL mappings:
    only under ``organisation``'s delegated prefixes, only
    location URLs that fully match ``url_pattern``, read from records in ``metadata_prefix``
    (``oai_dc`` or ``epicur``). ``next_from`` is the datestamp the next
    incremental harvest asks ``from=``, in the repository's ``granularity``. A harvest stopped
    at its deadline left ``resumption_token``, which the next run asks with, and
    ``resumption_from``, the ``next_from`` once that list is read to its end."""

    id: int
    name: str
    base_url: str
    organisation: str
    url_pattern: str
    set_spec: str | None = None
    metadata_prefix: str = "oai_dc"
    granularity: str | None = None
    next_from: str | None = None
    harvested: datetime | None = None
    created: datetime | None = None
    resumption_token: str | None = None
    resumption_from: str | None = None


@dataclass(frozen=True, slots=True)
class HarvestRun:
    """One harvest of a source, kept for the staff pages: when it started and ended, whether
    it was ``ok``, ``stopped`` (at its deadline; the next run resumes) or ``failed``, its
    summary (or the failure), and each refusal (what was not written, and why)."""

    source_id: int
    started: datetime
    finished: datetime
    outcome: str
    summary: str
    refused: tuple[str, ...] = ()
