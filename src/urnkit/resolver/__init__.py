"""The URN:NBN resolution and registration service (``pip install urnkit[server]``).

Layers, top to bottom (data flows down, nothing imports upwards):

* :mod:`urnkit.resolver.web` — the ASGI application: HTTP in, domain calls, HTTP out.
* :mod:`urnkit.resolver.services` — the rules: resolve, register, patch, deactivate, generate,
  authorize, one class per area. No HTTP, no SQL.
* :mod:`urnkit.resolver.store` — the tables (SQLAlchemy Core) and the few queries the service
  needs, one code path for SQLite and PostgreSQL; the schema changes only through the Alembic
  migrations in ``urnkit/resolver/migrations``.

>>> from urnkit.resolver.domain import Location
>>> Location("https://example.org/a").priority
1
"""
