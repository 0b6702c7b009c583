"""Schemathesis against a live server's ``/openapi.json``: no 5xx, and no response that breaks
the schema the server publishes (status code, content type, body).

Acceptance point of the resolver issue: "schemathesis against /openapi.json finds no 5xx and no
response that breaks the schema." Each database gets one ``urnkit serve`` process, fuzzed by
schemathesis's own engine (the one its CLI runs: examples, coverage, fuzzing and stateful
phases) three times: with an admin token, with a registrant token, and with no token at all (then
schemathesis makes up ``Authorization`` headers of its own). Generation is deterministic and
bounded, so a failure reproduces on every run; each one is reported with a ``curl`` command.

Revoking a token is fuzzed last: the fuzzer would otherwise revoke the tokens the other runs
use (their ids are small numbers it tries first) and leave them testing nothing but 401s.

Schemathesis's pytest integration (``schemathesis.pytest.from_fixture``) fails under pytest 9.2
(it reads ``Function._nodeid``, which pytest no longer has), hence its engine inside a plain test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from resolver_support import DATABASES, Resolver, Server, fresh_database, set_up_resolver
from schemathesis import engine
from schemathesis.engine import Status, events
from schemathesis.schemas import BaseSchema

from urnkit.resolver.services import Services
from urnkit.resolver.store import Store
from urnkit.resolver.web import create_app

SEED = 20_260_101
MAX_EXAMPLES = 10  # per operation in the fuzzing phase, after the examples and coverage phases
# Every check of schemathesis. A schema-valid request may still be refused for what no schema
# can say (a prefix delegated to the caller, a URN:NBN in it, exactly one search term, a
# country on ISO 3166-1's list, no lone surrogate in a string): with 422 and a problem naming
# it, which positive_data_acceptance is told to expect besides its defaults.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "410", "422", "429"]
REVOKE = "/api/v1/tokens/{token_id}/revoke"


@dataclass(frozen=True)
class Finding:
    """Something schemathesis reports: a failed check, or an error that kept it from testing."""

    role: str
    operation: str
    what: str
    detail: str

    def __str__(self) -> str:
        return f"--- as {self.role}: {self.operation}: {self.what}\n{self.detail}"


def schemathesis_config(headers: dict[str, str]) -> schemathesis.Config:
    """Deterministic generation of a bounded number of cases, the four checks and no others,
    ``headers`` sent with every request."""
    checks: dict[str, Any] = {
        "enabled": True,
        "positive_data_acceptance": {"expected-statuses": ACCEPTED},
    }
    project: dict[str, Any] = {
        # /api/v1/urns/{urn}/history and …/deactivate are also /api/v1/urns/{urn} of a URN
        # ending "/history" (RFC 8141 §2: an NSS may hold "/"): PUT there is declared, by the
        # record's operation, and is no unsupported method.
        "operations": [
            {
                "include-path-regex": "^/api/v1/urns/{urn}/",
                "checks": {"unsupported_method": {"enabled": False}},
            },
            # schemathesis percent-encodes a {urn} but leaves the %XX octets the pattern lets
            # it generate: "urn:a:b%3F" goes as "urn%3Aa%3Ab%3F", which the API, reading a URN
            # encoded whole by decoding it once (docs/api.md), reads as "urn:a:b?", a text
            # the schema's pattern refuses. Its refusal (400 Not a URN) is right.
            {
                "include-path-regex": "{urn}",
                "checks": {"positive_data_acceptance": {"enabled": False}},
            },
        ],
        "generation": {"deterministic": True, "max-examples": MAX_EXAMPLES, "database": "none"},
        "checks": checks,
        "request-timeout": 30,
        "workers": 1,
    }
    if headers:
        project["headers"] = headers
    return schemathesis.Config.from_dict({"seed": SEED} | project)


def fuzz(resolver: Resolver, role: str, token: str | None, *, revoke: bool) -> list[Finding]:
    """Run schemathesis once against the server, as ``role``; what it found. ``revoke`` picks
    the token revocation operation alone, else every operation but it."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    loaded = schemathesis.openapi.from_url(
        resolver.base_url + "/openapi.json", config=schemathesis_config(headers)
    )
    # Not ``include(path=REVOKE)``: the configuration's operations (schemathesis_config) are
    # filters that an include is added to as an alternative, so it would keep every operation.
    schema: BaseSchema = (
        loaded.exclude(lambda context: context.operation.path != REVOKE)
        if revoke
        else loaded.exclude(path=REVOKE)
    )
    found: list[Finding] = []
    tested: set[str] = set()
    for event in engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            if event.recorder.cases:
                tested.add(event.recorder.label)
            if event.status == Status.FAILURE:
                found += _failures(role, event)
        elif isinstance(event, events.NonFatalError):
            found.append(Finding(role, event.label, "error", str(event.info)))
        elif isinstance(event, events.FatalError):
            found.append(Finding(role, "(engine)", "fatal error", repr(event.exception)))
        elif isinstance(event, events.EngineFinished):
            found += [Finding(role, "(run)", f.title, f.message) for f in event.failures]
    assert tested, f"schemathesis sent no request as {role}"
    revoking = {f"POST {REVOKE}"}
    assert tested == revoking if revoke else not tested & revoking, (role, sorted(tested))
    return found


def _failures(role: str, event: events.ScenarioFinished) -> list[Finding]:
    """The failed checks of a scenario, each with the response and a ``curl`` to reproduce."""
    found = []
    for case_id, checks in event.recorder.checks.items():
        interaction = event.recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        answer = (
            ""
            if response is None
            else f"\n[{response.status_code}] {response.content[:500].decode(errors='replace')}"
        )
        for check in checks:
            if check.status == Status.FAILURE and check.failure_info is not None:
                failure = check.failure_info.failure
                found.append(
                    Finding(
                        role,
                        event.recorder.label,
                        f"{check.name}: {failure.title}",
                        f"{failure.message}{answer}\n{check.failure_info.code_sample}",
                    )
                )
    return found


@pytest.fixture(params=DATABASES)
def fuzzed_server(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Resolver, Server]]:
    """A server of its own: the fuzzer's writes (organisations, prefixes, tokens, revocations)
    reach no other test."""
    with fresh_database(request.param, tmp_path) as url:
        set_up = set_up_resolver(url)
        with Server(url) as server:
            yield Resolver(server.base_url, url, **set_up), server


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    fuzzed_server: tuple[Resolver, Server],
) -> None:
    """As admin, registrant and anonymous client: every generated request gets a documented
    status, content type and body, never a 5xx; the server logs no exception. On PostgreSQL
    as admin only: the other roles' requests are refused by rules the database does not
    enter (tokens, prefixes delegated), which SQLite's run fuzzes; the admin's are stored."""
    fuzzed_resolver, server = fuzzed_server
    roles: dict[str, str | None] = {"admin": fuzzed_resolver.admin_token}
    if fuzzed_resolver.database_url.startswith("sqlite"):
        roles |= {"registrant": fuzzed_resolver.registrant_token, "anonymous client": None}
    found: list[Finding] = []
    for revoke in (False, True):
        for role, token in roles.items():
            found += fuzz(fuzzed_resolver, role, token, revoke=revoke)
    unique: dict[tuple[str, str, str], Finding] = {}
    for finding in found:  # each phase reports the same problem again
        unique.setdefault((finding.role, finding.operation, finding.what), finding)
    report = "\n".join(map(str, unique.values()))
    assert not unique, f"schemathesis found {len(unique)} problems:\n{report}"
    assert "Traceback" not in server.output(), server.output()[-5000:]


def test_published_schema_names_operations_once_and_declares_path_parameters() -> None:
    """Two MUSTs of OpenAPI 3.1 that schemathesis does not check itself, or only by refusing to
    test: operationIds are unique, and each ``{name}`` in a path is a declared path parameter."""
    document = create_app(Services(Store("sqlite://"))).openapi()
    operations = [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    ids = [operation["operationId"] for _, _, operation in operations]
    assert len(ids) == len(set(ids)), sorted(ids)
    for method, path, operation in operations:
        declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
        assert declared == set(re.findall(r"{([^}]+)}", path)), (method, path)
