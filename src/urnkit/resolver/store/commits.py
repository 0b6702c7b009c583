"""Whether anything was committed to a SQLite database since it was last asked, without a
query: a read transaction takes SQLite's locks with system calls, which cost more than the
rest of reading the change counter.

SQLite in WAL mode keeps a wal-index in the ``-shm`` file beside the database, and every
commit rewrites the index's header, whose two copies fill its first 96 bytes: the frames in
the log, their checksum, the salts drawn anew whenever the log starts over, and a change
counter (``https://www.sqlite.org/walformat.html``, "The WAL-Index Header"). Those bytes as
they were when a value was read stand for every commit before it: while they read the same,
nothing was committed since, and the value holds.

SQLite deletes the ``-shm`` file when the last connection to the database closes, and the
next one makes a new file: :class:`CommitHeader` keeps a connection of its own open while it
reads, so the file it reads is the one every writer writes. The header is read from a memory
map of the file, without a system call: reading a map past the end of a file that was cut
short would kill the process, and SQLite cuts the file short only when it is the first to
open it, when no process holds the lock that every open connection holds on it
(``unixLockSharedMemory`` in SQLite's ``os_unix.c``): the connection kept open holds it here.
"""

from __future__ import annotations

import mmap
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
        self._map: mmap.mmap | None = None  # of the header, while the connection is open
        self._opened = False

    def read(self) -> bytes | None:
        """The header as it reads now; None where it cannot be read (not in WAL mode, a
        database in memory, the file not there or not mappable): then nothing can be known
        without a query."""
        if not self._opened:
            self._open()
        if self._map is None:
            return None
        header = self._map[:HEADER_BYTES]
        return header if header[_IS_INIT] else None

    def _open(self) -> None:
        """The connection kept open and the ``-shm`` file of its database, if in WAL mode;
        tried again on the next :meth:`read` if the database could not be opened."""
        connection = self._connect()
        try:
            (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
            # The main database's file as SQLite opened it ("" in memory).
            path = connection.execute("PRAGMA database_list").fetchall()[0][2]
            connection.execute("SELECT 1 FROM sqlite_master").fetchall()  # opens the index
            self._map = _mapped(f"{path}-shm") if mode == "wal" and path else None
        except BaseException:
            connection.close()
            raise
        self._opened = True
        if self._map is None:
            connection.close()
        else:
            self._connection = connection

    def close(self) -> None:
        """Stop reading; close the map, then the connection."""
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._opened = False


def _mapped(path: str) -> mmap.mmap | None:
    """A read-only memory map of the header of the ``-shm`` file at ``path``; None if the file
    is not there, is shorter than the header (not a wal-index SQLite has written) or cannot be
    mapped.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as short:
    ...     _ = short.write(b"abc"); short.flush()
    ...     _mapped(short.name) is None, _mapped(short.name + "-not-there") is None
    (True, True)
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # no such file: not in WAL mode after all
        return None
    try:
        if os.fstat(descriptor).st_size < HEADER_BYTES:
            return None
        return mmap.mmap(descriptor, HEADER_BYTES, access=mmap.ACCESS_READ)
    except OSError:  # a file system that maps no file: every read is then a query
        return None
    finally:
        os.close(descriptor)  # the map holds the file open
