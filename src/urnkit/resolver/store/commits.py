"""Whether anything was committed to a SQLite database since it was last asked, without a
query: a read transaction takes SQLite's locks with system calls, which cost more than the
rest of reading the change counter.

SQLite in WAL mode keeps a wal-index in the ``-shm`` file beside the database, and every
commit rewrites the index's header, whose two copies fill its first 96 bytes: the frames in
the log, their checksum, the salts drawn anew whenever the log starts over, and a change
counter (``https://www.sqlite.org/walformat.html``, "The WAL-Index Header"). Those bytes as
they were when a value was read stand for every commit before it: while they read the same,
nothing was committed since, and the value holds.

The header is read with ``pread`` (a file truncated under a memory map would kill the
process). SQLite deletes the ``-shm`` file when the last connection to the database closes,
and the next one makes a new file: :class:`CommitHeader` keeps a connection of its own open
while it reads, so the file it reads is the one every writer writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

HEADER_BYTES = 96  # the wal-index header's two copies, 48 bytes each
_IS_INIT = 12  # the byte of the first copy that says the header is written


class CommitHeader:
    """The wal-index header of the SQLite database a connection of ``connect`` opens, while it
    is in WAL mode (:meth:`read`).

    >>> import sqlite3, tempfile
    >>> path = tempfile.mkdtemp() + "/x.db"
    >>> setup = sqlite3.connect(path, isolation_level=None)
    >>> setup.execute("PRAGMA journal_mode = wal").fetchone()
    ('wal',)
    >>> header = CommitHeader(lambda: sqlite3.connect(path))
    >>> before = header.read()
    >>> _ = setup.execute("CREATE TABLE t (x)")
    >>> before is not None and header.read() not in (None, before)
    True
    >>> header.close()
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._connection: Any = None
        self._file: int | None = None
        self._opened = False

    def read(self) -> bytes | None:
        """The header as it reads now; None where it cannot be read (not in WAL mode, a
        database in memory, the file not there): then nothing can be known without a query."""
        if not self._opened:
            self._open()
        if self._file is None:
            return None
        header = os.pread(self._file, HEADER_BYTES, 0)
        if len(header) < HEADER_BYTES or not header[_IS_INIT]:
            return None
        return header

    def _open(self) -> None:
        """The connection kept open and the ``-shm`` file of its database, if in WAL mode;
        tried again on the next :meth:`read` if the database could not be opened."""
        connection = self._connect()
        try:
            (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
            # The main database's file as SQLite opened it ("" in memory).
            path = connection.execute("PRAGMA database_list").fetchall()[0][2]
            connection.execute("SELECT 1 FROM sqlite_master").fetchall()  # opens the index
            self._file = os.open(f"{path}-shm", os.O_RDONLY) if mode == "wal" and path else None
        except OSError:  # no such file: not in WAL mode after all
            self._file = None
        except BaseException:
            connection.close()
            raise
        self._opened = True
        if self._file is None:
            connection.close()
        else:
            self._connection = connection

    def close(self) -> None:
        """Stop reading; close the file, then the connection."""
        if self._file is not None:
            os.close(self._file)
            self._file = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._opened = False
