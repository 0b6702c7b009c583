"""A test run to be interrupted, not collected by the suite (its name is not ``test_*``):
``test_interrupted_run.py`` runs it through the test command's pytest runner. The test creates
a PostgreSQL database and starts a server on it, as the resolver's fixtures do, writes what it
started to the file ``URNKIT_INTERRUPTED_RUN`` names, and waits to be interrupted."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import sqlalchemy as sa
from resolver_support import Server, fresh_database, urnkit_here


def test_waits_to_be_interrupted(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        urnkit_here("db", "upgrade", "--database-url", url)
        with Server(url) as server:
            assert server.process is not None
            started = {
                "server": server.process.pid,
                "base_url": server.base_url,
                "database": sa.make_url(url).database,
                "group": os.getpgid(0),
            }
            ready = Path(os.environ["URNKIT_INTERRUPTED_RUN"])
            partial = ready.with_suffix(".partial")
            partial.write_text(json.dumps(started), encoding="utf-8")
            partial.rename(ready)  # whole, or not at all, for the test that waits for it
            threading.Event().wait()  # until the run is interrupted
