"""Fixtures for the resolver: fresh databases (SQLite, PostgreSQL) and real server processes.

Each test that takes ``resolver`` runs once per database against a server started with
``urnkit serve`` in its own process, set up through the ``urnkit admin`` commands, exactly as an
operator would. PostgreSQL tests skip when no server answers at ``URNKIT_TEST_PG`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``), and fail instead under
``URNKIT_REQUIRE_PG=1`` (CI).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from oai_support import Upstream
from resolver_support import (
    DATABASES,
    LEAST_HASHING,
    Resolver,
    Server,
    fresh_database,
    set_up_resolver,
)
from services_support import LOCAL, LOCAL_NETWORK, Principals, set_up

from urnkit.resolver.services import Services
from urnkit.resolver.store import Store


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a new, empty database of each kind, dropped afterwards."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def empty_store(database_url: str) -> Iterator[Store]:
    """A store on a new database without any schema."""
    store = Store(database_url)
    yield store
    store.close()


@pytest.fixture
def store(empty_store: Store) -> Store:
    """A store on a new database with the current schema."""
    empty_store.upgrade()
    return empty_store


STATISTICS_INTERVAL = 1  # seconds between flushes of the resolution counts in ``resolver``
TRUSTED_PROXIES = "127.0.0.1, ::1"  # whose X-Forwarded-For ``resolver`` believes


@pytest.fixture(scope="session")
def running_resolvers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Resolver]]:
    """The session's resolvers by database, each started on first use (``resolver``) and kept
    to the end: a parametrized session fixture would be stopped and started again whenever the
    order of the tests (a parallel run's, by file) changes databases."""
    with ExitStack() as stack:
        yield _StartedOnFirstUse(stack, tmp_path_factory)


class _StartedOnFirstUse(dict[str, Resolver]):
    """Resolvers by database (``"sqlite"``, ``"postgresql"``): a missing one is started, its
    database and server stopped with ``stack``."""

    def __init__(self, stack: ExitStack, tmp_path_factory: pytest.TempPathFactory) -> None:
        super().__init__()
        self.stack, self.tmp_path_factory = stack, tmp_path_factory

    def __missing__(self, kind: str) -> Resolver:
        directory = self.tmp_path_factory.mktemp(f"resolver-{kind}")
        url = self.stack.enter_context(fresh_database(kind, directory))
        set_up = set_up_resolver(url)
        # The tests' own address, 127.0.0.1, is a trusted proxy: a test sets the client's
        # address with X-Forwarded-For (access by network, test_access_by_network.py).
        settings = {
            "URNKIT_TRUSTED_PROXIES": TRUSTED_PROXIES,
            "URNKIT_STATISTICS_CACHE": "0",
            "URNKIT_STATISTICS_INTERVAL": str(STATISTICS_INTERVAL),
        }
        server = self.stack.enter_context(Server(url, env=settings))
        self[kind] = Resolver(server.base_url, url, **set_up)
        return self[kind]


@pytest.fixture(scope="module", params=DATABASES)
def resolver(request: pytest.FixtureRequest, running_resolvers: dict[str, Resolver]) -> Resolver:
    """A running resolver per database, shared by the session's contract tests: organisations
    "Test Library" (prefix ``fi:test``) and "Other Library" (``fi:other``, random generator),
    an admin token and a registrant token for each. Tests use URNs of their own. The server
    flushes its resolution counts every ``STATISTICS_INTERVAL`` seconds (statistics tests) and
    believes the tests' ``X-Forwarded-For`` (``TRUSTED_PROXIES``). It counts the records by
    status afresh for each page, as the tests compare them with the database
    (``statistics_cache``: 0)."""
    return running_resolvers[request.param]


@pytest.fixture
def api(resolver: Resolver) -> Iterator[httpx.Client]:
    """The registrant of "Test Library" (prefix ``fi:test``, sequential)."""
    with resolver.client(resolver.registrant_token) as client:
        yield client


@pytest.fixture
def admin(resolver: Resolver) -> Iterator[httpx.Client]:
    """An admin of "Test Library"."""
    with resolver.client(resolver.admin_token) as client:
        yield client


@pytest.fixture
def other(resolver: Resolver) -> Iterator[httpx.Client]:
    """The registrant of "Other Library" (prefix ``fi:other``, random)."""
    with resolver.client(resolver.other_token) as client:
        yield client


@pytest.fixture
def anonymous(resolver: Resolver) -> Iterator[httpx.Client]:
    """A client without a token (redirects are not followed)."""
    with resolver.client() as client:
        yield client


@pytest.fixture
def unique() -> str:
    """A fresh NBN string part, so tests sharing a server never meet."""
    return secrets.token_hex(6)


@pytest.fixture(autouse=True, scope="session")
def _no_proxy() -> None:
    """Local servers are reached directly, whatever proxy the environment names."""
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"


@pytest.fixture(autouse=True, scope="session")
def _local_fetches() -> None:
    """The ``urnkit`` commands and servers the tests start may fetch from the tests' sites and
    repositories on 127.0.0.1: the operator's setting, explicitly (``fetch_allowed_networks``;
    test_outbound.py runs without it)."""
    os.environ["URNKIT_FETCH_ALLOWED_NETWORKS"] = LOCAL_NETWORK


@pytest.fixture(autouse=True, scope="session")
def _least_password_hashing() -> None:
    """The ``urnkit`` commands and servers the tests start hash staff passwords at the least
    cost the settings take (:data:`resolver_support.LEAST_HASHING`)."""
    os.environ["URNKIT_PASSWORD_MEMORY_KIB"] = str(LEAST_HASHING.memory_kib)
    os.environ["URNKIT_PASSWORD_PASSES"] = str(LEAST_HASHING.passes)
    os.environ["URNKIT_PASSWORD_LANES"] = str(LEAST_HASHING.lanes)


@pytest.fixture
def server_database(resolver: Resolver) -> Iterator[Store]:
    """The running resolver's database, to set up what no API writes (link states)."""
    store = Store(resolver.database_url)
    yield store
    store.close()


@pytest.fixture
def services(database_url: str) -> Iterator[Services]:
    """The services on a new, empty database (``who`` gives it the schema and its callers),
    counting the records by status afresh each time (``statistics_cache``: 0), fetching from
    the tests' sites on 127.0.0.1 (:data:`LOCAL`), hashing passwords at the least cost."""
    store = Store(database_url)
    yield Services(store, statistics_cache=0, fetch_guard=LOCAL, password_hashing=LEAST_HASHING)
    store.close()


@pytest.fixture
def who(services: Services) -> Principals:
    """The current schema, two organisations with sibling prefixes, and their tokens'
    principals (:func:`services_support.set_up`)."""
    return set_up(services)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    """A repository paging its lists by 2 records."""
    with Upstream(batch_size=2) as repository:
        yield repository


# The order in which a parallel run (-n auto --dist loadfile --no-loadscope-reorder) hands out
# the test files: the longest first, so that no long file starts last while the other process
# idles; the suite's outcome does not depend on it. The files that took longest, slowest first:
# a whole run with ``--durations=0``, the setup, call and teardown of each test added up by
# file (2026-12-07; 1,583 s in all, these 712).
LONGEST_FIRST = (
    "tests/resolver/web/test_browser_pages.py",
    "tests/resolver/web/test_openapi_fuzz.py",
    "tests/resolver/services/test_links.py",
    "tests/resolver/web/test_browser_staff_records.py",
    "tests/resolver/services/test_oai.py",
    "tests/resolver/web/test_staff.py",
    "tests/resolver/web/test_browser_staff.py",
    "tests/wheel/test_wheel.py",
    "tests/resolver/test_interrupted_run.py",
    "tests/resolver/web/test_redirect_cache.py",
    "tests/resolver/services/test_outbound.py",
    "tests/resolver/services/test_transfer_service.py",
    "tests/resolver/web/test_registration_api.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`LONGEST_FIRST` ahead, in its order; the rest keep theirs."""
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
