"""One writer per (asset, partition): a session-level advisory lock on the writer's own connection.

Two partitions write disjoint rows and never wait on each other; a second run of the same partition
waits up to `wait_seconds`, then fails naming who holds the lock, before it has written anything. The
lock goes with the connection, so a crashed run never leaves it behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg


class PartitionBusy(RuntimeError):
    pass


def _holder(conn: psycopg.Connection, name: str) -> str:
    row = conn.execute(
        "SELECT a.pid, a.backend_start FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        "   AND (l.classid::bigint << 32 | l.objid::bigint) = hashtextextended(%s, 0) LIMIT 1", (name,)).fetchone()
    return f"backend pid {row[0]} (connected {row[1]:%H:%M:%S})" if row else "another run"


@contextmanager
def exclusive(conn: psycopg.Connection, name: str, wait_seconds: float = 60.0, poll: float = 0.5) -> Iterator[None]:
    deadline = time.monotonic() + wait_seconds
    while not conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (name,)).fetchone()[0]:
        if time.monotonic() >= deadline:
            who = _holder(conn, name)
            if not conn.autocommit:
                conn.rollback()
            raise PartitionBusy(f"{name} is being written by {who}; waited {wait_seconds:.0f}s. Nothing was written: "
                                "materialize it again when that run ends")
        time.sleep(poll)
    if not conn.autocommit:
        conn.commit()  # the lock is session-level: it outlives this transaction, not the connection
    try:
        yield
    except BaseException:
        if not conn.closed and not conn.autocommit:
            conn.rollback()
        raise
    else:
        if not conn.autocommit:
            conn.commit()  # what the body left in its transaction lands before another writer may start
    finally:
        if not conn.closed:
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (name,))
            if not conn.autocommit:
                conn.commit()
