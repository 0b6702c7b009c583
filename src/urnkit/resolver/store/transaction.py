"""A unit of work: one database transaction and the queries of each area over it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import Connection

from urnkit.resolver.store.bulk_import import BulkImport
from urnkit.resolver.store.queries.accounts import Accounts
from urnkit.resolver.store.queries.base import Queries
from urnkit.resolver.store.queries.forwarding import ForwardingTable
from urnkit.resolver.store.queries.grants import Grants
from urnkit.resolver.store.queries.identifiers import Identifiers
from urnkit.resolver.store.queries.links import Links
from urnkit.resolver.store.queries.neighbours import Neighbours
from urnkit.resolver.store.queries.networks import Networks
from urnkit.resolver.store.queries.oai import OAI
from urnkit.resolver.store.queries.organisations import Organisations
from urnkit.resolver.store.queries.records import Records
from urnkit.resolver.store.queries.statistics import Statistics
from urnkit.resolver.store.queries.successions import Successions
from urnkit.resolver.store.queries.titles import TitleIndex

Q = TypeVar("Q", bound=Queries)


class _Area(Generic[Q]):
    """A transaction's queries of one area, made when first used (most transactions use one or
    two areas) and then kept as the transaction's attribute."""

    def __init__(self, kind: Callable[[Connection, str], Q]) -> None:
        self._kind = kind
        self._name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    def __get__(self, tx: Transaction, owner: type[Any] | None = None) -> Q:
        queries = self._kind(tx.connection, tx.dialect)
        tx.__dict__[self._name] = queries  # found before this descriptor from now on
        return queries


class Transaction:
    """One database transaction (get one from :meth:`Store.transaction` or
    :meth:`Store.snapshot`): its connection and, by area, the queries over it."""

    records = _Area(Records)  # records, their locations and history, Idempotency-Keys
    grants = _Area(Grants)  # organisations granted their own locations on a record
    organisations = _Area(Organisations)  # organisations, prefixes and numbers, tokens
    links = _Area(Links)  # link checking, and the resolution targets it changes
    successions = _Area(Successions)  # who succeeds whom
    identifiers = _Area(Identifiers)  # the other identifiers records carry
    neighbours = _Area(Neighbours)  # the URNs nearest a text, for the 404 page
    oai = _Area(OAI)  # harvest sources and their items, records by datestamp
    forwarding = _Area(ForwardingTable)  # the forwarding table to national resolvers
    statistics = _Area(Statistics)  # resolution counts, record counts
    bulk = _Area(BulkImport)  # imports and batches of records
    networks = _Area(Networks)  # organisations' networks, the locations restricted to them
    accounts = _Area(Accounts)  # staff accounts, failed sign-ins, the servers' shared secrets
    titles = _Area(TitleIndex)  # the title search's index: checked, built again

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.dialect = connection.dialect.name
