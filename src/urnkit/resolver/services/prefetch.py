"""Work done ahead of its consumer: in a thread (:func:`read_ahead`), or in a child Python
process (:func:`made_elsewhere`), the import's way to prepare batches while the database stores
the one before.

>>> list(read_ahead(iter(range(5))))
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import gc
import itertools
import json
import multiprocessing.connection
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

T = TypeVar("T")
Given = TypeVar("Given")
Connection = multiprocessing.connection.Connection
_SENDER_FAILED = "the rows failed"  # the sender's word to the child and back


def read_ahead(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """``items``, produced by a thread up to ``depth`` ahead of the consumer; an exception
    the producer meets is raised in the consumer, at its place in the sequence."""
    ahead: queue.Queue[tuple[bool, Any]] = queue.Queue(depth)
    stop = threading.Event()

    def hand_over(entry: tuple[bool, Any]) -> bool:
        """Queue ``entry`` unless the consumer has stopped; whether it was queued."""
        while not stop.is_set():
            try:
                ahead.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not hand_over((True, item)):
                    return
            hand_over((False, None))
        except BaseException as error:  # handed to the consumer, raised there
            hand_over((False, error))
        finally:
            if isinstance(items, Generator):
                items.close()  # its cleanup runs now, not when collected

    producer = threading.Thread(target=produce, name="urnkit-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            more, item = ahead.get()
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        producer.join()


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """The cycle collector off while the block runs, then as it was: for work whose objects
    reference counting frees.

    >>> with cycles_uncollected():
    ...     gc.isenabled()
    False
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def made_elsewhere(
    make: Callable[[Given], T], first: Given, batches: Iterator[Given], children: int = 1
) -> Generator[T, None, None]:
    """``make`` of ``first``, made here while the child Python processes start, then of each of
    ``batches``, in order, made by ``children`` children in turn (the n-th by child n modulo
    ``children``) while a thread here sends them the batches. An exception either side meets
    is raised here, at its place in the sequence. The children end when this process does,
    even by ``kill -9``: their pipes close.

    A plain subprocess, not multiprocessing: its spawn imports the caller's main module again
    (a script without a ``__main__`` guard would import twice), and fork is unsafe in a process
    running threads."""
    pipes: list[tuple[subprocess.Popen[bytes], Connection, Connection]] = []
    while len(pipes) < children and (started := _start_child()) is not None:
        pipes.append(started)
    if not pipes:
        yield make(first)
        yield from map(make, batches)
        return
    failed: list[BaseException] = []

    def send() -> None:
        outboxes, sent = [to_child for _, to_child, _ in pipes], 0
        try:
            for outbox in outboxes:
                outbox.send(make)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                except BaseException as error:  # reading the rows failed, an OSError too
                    failed.append(error)
                    outboxes[sent % len(outboxes)].send(_SENDER_FAILED)
                    return
                outboxes[sent % len(outboxes)].send(batch)
                sent += 1
            for outbox in outboxes:
                outbox.send(None)
        except OSError:
            return  # a child has gone: the consumer stopped, or it failed and said why
        except BaseException as error:  # a batch that cannot be sent (pickled): nothing went
            failed.append(error)
            with suppress(OSError):
                outboxes[sent % len(outboxes)].send(_SENDER_FAILED)

    sender = threading.Thread(target=send, name="urnkit-import-sender", daemon=True)
    sender.start()
    try:
        yield make(first)
        for turn in itertools.count():
            child, _, from_child = pipes[turn % len(pipes)]
            try:
                item = from_child.recv()
            except EOFError:
                code = child.wait()
                raise RuntimeError(f"the import's child process ended (exit {code})") from None
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            if item == _SENDER_FAILED:
                raise failed[0]
            yield item
    finally:
        for child, _, _ in pipes:
            child.kill()  # nothing of it is needed any more; the sender's pipe breaks
            child.wait()
        sender.join()
        for _, to_child, from_child in pipes:
            to_child.close()
            from_child.close()


def _start_child() -> tuple[subprocess.Popen[bytes], Connection, Connection] | None:
    """The child process of :func:`made_elsewhere` and the pipes to and from it; None when
    none can be started (no ``pass_fds``, no Python to run, or the start failed)."""
    if os.name != "posix" or not sys.executable:
        return None
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CHILD,
                str(to_child_read),
                str(from_child_write),
                json.dumps([str(p) for p in sys.path]),  # what this process imports from
            ],
            pass_fds=(to_child_read, from_child_write),
            stdin=subprocess.DEVNULL,
        )
    except OSError:
        os.close(to_child_write)
        os.close(from_child_read)
        return None
    finally:
        os.close(to_child_read)
        os.close(from_child_write)
    return (
        child,
        Connection(to_child_write, readable=False),
        Connection(from_child_read, writable=False),
    )


_CHILD = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[3]); "
    "from multiprocessing.connection import Connection; "
    "from urnkit.resolver.services.prefetch import make_in_child; "
    "make_in_child(Connection(int(sys.argv[1]), writable=False), "
    "Connection(int(sys.argv[2]), readable=False))"
)


def make_in_child(inbox: Connection, outbox: Connection) -> None:
    """The child process of :func:`made_elsewhere`: ``make`` (the first message) of each
    message after it, sent back, until ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends this
    # Reference counting frees what a batch leaves (no cycles); the cycle collector's passes
    # over each batch's objects cost more than they freed (benchmarks/storage_bench.py).
    gc.disable()
    with suppress(EOFError, OSError):
        make = inbox.recv()
        while (item := inbox.recv()) is not None:
            if item == _SENDER_FAILED:
                outbox.send(item)
                return
            try:
                made: Any = make(item)
            except Exception as error:
                made = error
            try:
                outbox.send(made)
            except Exception:  # what cannot be pickled
                outbox.send(RuntimeError(repr(made)))
            if isinstance(made, BaseException):
                return
        outbox.send(None)
