"""The resolver's commands: ``serve``, ``db``, ``admin``, ``import``, ``export``, ``links`` and
``oai``, one module per group of commands.

A thin adapter over :class:`~urnkit.resolver.services.Services`: it reads flags and files, calls
the service, and prints. The server's libraries are imported only when a command runs, so the
core commands work without the ``server`` extra. Example::

    urnkit admin create-org "Demo Library" --database-url sqlite:///demo.db
"""

from __future__ import annotations

from urnkit.commandline import Commands
from urnkit.resolver.cli import admin, db, links, oai, serve, transfer


def add_commands(commands: Commands) -> None:
    """Add ``serve``, ``db``, ``admin``, ``import``, ``export``, ``links`` and ``oai`` to the
    ``urnkit`` parser."""
    for group in (serve, db, admin, transfer, links, oai):
        group.add_commands(commands)
