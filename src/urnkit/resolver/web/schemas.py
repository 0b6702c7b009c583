"""The API's models: they make ``/openapi.json`` (their names and fields are what it publishes)."""

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from urnkit.resolver.domain import (
    ASSIGNED_NAME_PATTERN,
    MAX_DEPTH,
    MAX_METADATA_BYTES,
    MAX_URN_LENGTH,
    NETWORK_NAME_PATTERN,
    PREFIX_PATTERN,
)
from urnkit.resolver.services.locations import LONGEST, MAX_PRIORITY
from urnkit.resolver.services.records import MAX_BATCH, MAX_NOTE, MAX_SUCCESSORS

# What every JSON body may hold, and a record's metadata in particular (domain.acceptance).
METADATA_RULE = (
    f"Any JSON object of at most {MAX_METADATA_BYTES} bytes (compact UTF-8 JSON), nesting at "
    f"most {MAX_DEPTH} arrays and objects (itself the first). Refused with 422 anywhere in a "
    "body: lone surrogates (U+D800 to U+DFFF), U+0000, NaN, Infinity and numbers beyond a "
    "double (1e400), floats of magnitude 1e16 or more (send them as integers) and -0.0. "
    "The order of an object's members is not kept."
)
URN_RULE = f"A URN of at most {MAX_URN_LENGTH} characters"


class LocationModel(BaseModel):
    """A location of the resource: lower priority numbers are tried first."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(
        min_length=1, max_length=LONGEST["url"], examples=["https://example.org/thesis.pdf"]
    )
    priority: int = Field(1, ge=0, le=MAX_PRIORITY, strict=True)  # true is no priority
    label: str | None = Field(None, max_length=LONGEST["label"])
    media_type: str | None = Field(
        None, max_length=LONGEST["media_type"], examples=["application/pdf"]
    )
    organisation: str | None = Field(
        None,
        max_length=200,
        description="The organisation holding the location (the record's owner or a grantee): "
        "shown on every stored location; in a write it may be left out, and if given must "
        "name the location's holder",
    )
    restricted_to: str | None = Field(
        None,
        pattern=f"^{NETWORK_NAME_PATTERN}$",
        examples=["reading-rooms"],
        description="A network of the organisation holding the location: only clients inside "
        "it are sent to it or shown its URL (docs/resolution.md)",
    )


class RecordIn(BaseModel):
    """What a registrant sends to create or replace a record."""

    model_config = ConfigDict(extra="forbid")
    locations: list[LocationModel] = Field(default_factory=list, max_length=100)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=METADATA_RULE,
        examples=[{"title": "A thesis", "creators": ["Ann Author"]}],
    )


class BatchItem(RecordIn):
    """One record of a batch: its URN and what :class:`RecordIn` holds."""

    urn: str = Field(
        min_length=1,
        max_length=MAX_URN_LENGTH,
        description=URN_RULE,
        examples=["urn:nbn:fi:demo-1"],
        json_schema_extra={"pattern": ASSIGNED_NAME_PATTERN},
    )


class BatchIn(BaseModel):
    """Up to 10,000 records, written all together or not at all."""

    model_config = ConfigDict(extra="forbid")
    records: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH)


class RecordOut(BaseModel):
    """A registered URN and what the service knows of it."""

    urn: str
    status: Literal["reserved", "active", "deactivated"]
    locations: list[LocationModel]
    metadata: dict[str, Any]
    successors: list[str]
    note: str | None
    owner: str
    grants: list[str] = Field(
        description="The organisations the owner lets add and maintain their own locations"
    )
    created: str = Field(description="RFC 3339 time")
    updated: str = Field(description="RFC 3339 time")


class OwnLocationsIn(BaseModel):
    """The locations an organisation holds on a record: they replace its own, no others."""

    model_config = ConfigDict(extra="forbid")
    locations: list[LocationModel] = Field(max_length=100)


class GrantOut(BaseModel):
    """An organisation's right to add and maintain its own locations on a record."""

    organisation: str
    granted: str = Field(description="RFC 3339 time")
    granted_by: str = Field(description="Who granted it, as history names actors")


class GrantsOut(BaseModel):
    """The grants on a record, by organisation."""

    urn: str
    grants: list[GrantOut]


class RecordPage(BaseModel):
    """A page of records and the cursor of the next page (null on the last)."""

    records: list[RecordOut]
    next_cursor: str | None


class HistoryEntryOut(BaseModel):
    """One change: when, what, by whom, and the record as it was after it."""

    at: str
    action: str
    actor: str
    record: dict[str, Any]


class HistoryOut(BaseModel):
    """Every change to a record, oldest first."""

    urn: str
    entries: list[HistoryEntryOut]


class DeactivateIn(BaseModel):
    """Why a URN is deactivated and which URNs succeed it."""

    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(None, max_length=MAX_NOTE)
    successors: list[
        Annotated[
            str,
            Field(
                max_length=MAX_URN_LENGTH,
                description=URN_RULE,
                json_schema_extra={"pattern": ASSIGNED_NAME_PATTERN},
            ),
        ]
    ] = Field(default_factory=list, max_length=MAX_SUCCESSORS)


class GeneratedOut(BaseModel):
    """The URN:NBNs generated and reserved; ``urn`` is the first of ``urns``."""

    urn: str
    urns: list[str]


class BatchResult(BaseModel):
    """What happened to one record of a batch."""

    urn: str
    result: Literal["created", "replaced"]


class BatchOut(BaseModel):
    """What happened to each record of a batch, in order."""

    count: int
    results: list[BatchResult]


class PrefixOut(BaseModel):
    """A delegated prefix (RFC 8458 §4.3), whom it is delegated to and how URNs are generated."""

    prefix: str
    organisation: str
    generator: Literal["sequential", "random"]


class DelegateIn(BaseModel):
    """Delegate a prefix to an organisation."""

    model_config = ConfigDict(extra="forbid")
    prefix: str = Field(
        min_length=2,
        max_length=200,
        examples=["fi:demo"],
        json_schema_extra={"pattern": PREFIX_PATTERN},
    )
    organisation: str = Field(min_length=1, max_length=200)
    generator: Literal["sequential", "random"] = "sequential"


class OrganisationIn(BaseModel):
    """A new organisation."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class OrganisationOut(BaseModel):
    """An organisation."""

    name: str


class NetworkIn(BaseModel):
    """A network's address ranges: IPv4 or IPv6 addresses or networks in CIDR notation."""

    model_config = ConfigDict(extra="forbid")
    ranges: list[str] = Field(
        min_length=1, max_length=1000, examples=[["192.0.2.0/24", "2001:db8::/32"]]
    )


class NetworkOut(BaseModel):
    """An organisation's named network."""

    organisation: str
    name: str
    ranges: list[str]


class TokenIn(BaseModel):
    """A new token's role and a label to recognise it by."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["admin", "registrant"] = "registrant"
    label: str = Field("", max_length=200)


class TokenOut(BaseModel):
    """A new token: shown once, stored only hashed."""

    token: str
    token_id: int = Field(description="What POST /api/v1/tokens/{token_id}/revoke takes")
    organisation: str
    role: str


class BrokenLinkOut(BaseModel):
    """A location whose link is broken: whose it is, its record's URN, and the link's state."""

    owner: str = Field(description="The organisation that registered the location")
    urn: str
    url: str
    status: Literal["ok", "broken"]
    http_status: int | None = Field(description="The last answer's status; null: none came")
    detail: str | None = Field(description="What the last check found, in words")
    failures: int = Field(description="Consecutive failed checks")
    since: str = Field(description="RFC 3339 time the status last changed")
    checked: str | None = Field(description="RFC 3339 time of the last check")


class BrokenLinksOut(BaseModel):
    """The broken links of an organisation (or of all, for an admin who names none)."""

    owner: str | None
    count: int
    links: list[BrokenLinkOut]


class Problem(BaseModel):
    """An RFC 9457 problem: what went wrong, and where when the input was at fault."""

    model_config = ConfigDict(extra="allow")
    type: str = "about:blank"
    title: str
    status: int
    detail: str


class HarvestSourceIn(BaseModel):
    """An OAI-PMH repository to harvest URN:NBN -> URL mappings from."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200, examples=["doria"])
    organisation: str = Field(min_length=1, max_length=200)
    base_url: str = Field(min_length=1, max_length=2000, examples=["https://repo.example.org/oai"])
    url_pattern: str = Field(
        min_length=1,
        max_length=2000,
        description="A regular expression every location URL must fully match",
        examples=[r"https://repo\.example\.org/handle/\d+/\d+"],
    )
    set_spec: str | None = Field(None, max_length=200, description="Harvest only this set")
    metadata_prefix: str = Field(
        "oai_dc",
        max_length=30,
        description="The metadata format harvested: oai_dc or epicur (xepicur)",
        examples=["oai_dc", "epicur"],
    )


class HarvestSourceOut(HarvestSourceIn):
    """A harvest source and where its next incremental harvest starts."""

    granularity: str | None
    next_from: str | None = Field(description="The next harvest's from=; null before a success")
    harvested: str | None = Field(description="RFC 3339 time of the last successful harvest")


class DayCountOut(BaseModel):
    """How many times URNs under a prefix were resolved on a day (UTC)."""

    prefix: str
    day: date
    resolutions: int


class StatisticsOut(BaseModel):
    """Resolutions per prefix per day from ``since`` (UTC) on, the newest day first."""

    since: date
    counts: list[DayCountOut]


class StatusCountOut(BaseModel):
    """How many records were in a status at the end of a day (UTC): today's, so far."""

    status: Literal["reserved", "active", "deactivated"]
    day: date
    records: int


class StatusStatisticsOut(BaseModel):
    """Records by status at the end of each day from ``since`` (UTC) on, the newest day
    first, each day's statuses in the order reserved, active, deactivated."""

    since: date
    counts: list[StatusCountOut]


class HealthOut(BaseModel):
    """Liveness: the process answers."""

    status: Literal["ok"]


class DatabaseOut(BaseModel):
    """One of the databases of a server with standbys, as last seen."""

    name: str = Field(examples=["primary", "standby 1"])
    state: Literal["ok", "lagging", "unreachable"] = Field(
        description="lagging: its replay is further behind than replica_max_lag; reads skip it"
    )
    lag_seconds: float | None = Field(
        default=None, description="How far a standby's replay is behind (absent: the primary)"
    )


class ReadinessOut(BaseModel):
    """Readiness: whether the database answers and holds the latest schema; if not, why.
    With standbys, each database's state, and whether only reads are served for now."""

    status: Literal["ready", "not ready"]
    database: Literal["ok", "unreachable"]
    schema_: Literal["current", "outdated", "empty", "unknown"] = Field(alias="schema")
    reason: str | None = Field(
        default=None,
        description="Why not ready (absent when ready)",
        examples=["the database does not accept connections"],
    )
    read_only: bool | None = Field(
        default=None,
        description="With standbys: true while no primary answers (writes get 503, reads go on)",
    )
    databases: list[DatabaseOut] | None = Field(
        default=None, description="With standbys: the primary and each standby"
    )


class ForwardingIn(BaseModel):
    """A national resolver: its URL template, ``{urn}`` where the URN goes, and a note."""

    model_config = ConfigDict(extra="forbid")
    url_template: str = Field(
        min_length=8, max_length=2000, examples=["https://urn.kb.se/resolve?urn={urn}"]
    )
    note: str | None = Field(None, max_length=1000)


class ForwardingOut(BaseModel):
    """A country's national resolver (RFC 8458 §4.4) and its last health check."""

    country: str = Field(description="ISO 3166-1 alpha-2, lower case", examples=["se"])
    url_template: str
    health: Literal["unknown", "up", "down"]
    checked: str | None = Field(description="RFC 3339 time of the last health check")
    detail: str | None = Field(description="What the last health check saw")
    note: str | None
