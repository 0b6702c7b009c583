"""The URN:NBN resolution and registration service (the ``server`` extra).

Layers, top to bottom (data flows down, nothing imports upwards); docs/architecture.md maps
every module:

* :mod:`urnkit.resolver.web` and :mod:`urnkit.resolver.cli` — adapters: HTTP or the command
  line in, a service call, HTTP or text out.
* :mod:`urnkit.resolver.services` — the rules, one class per area (resolution, records, access,
  admin, transfer, overview, links, forwarding, harvest). No HTTP, no SQL.
* :mod:`urnkit.resolver.store` — the tables (SQLAlchemy Core), one query module per area, one
  code path for SQLite and PostgreSQL; the schema changes only through the Alembic migrations
  in ``urnkit/resolver/migrations``.
* :mod:`urnkit.resolver.domain` — records, names, errors and rules as plain values: no I/O.

>>> from urnkit.resolver.domain import Location
>>> Location("https://example.org/a").priority
1
"""
