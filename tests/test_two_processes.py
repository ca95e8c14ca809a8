"""The test process and a `dagster asset materialize` subprocess share one embedded server."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.db.embedded import server_pid

pytestmark = pytest.mark.slow


def test_dagster_subprocess_attaches_to_the_running_server(pg_server, tmp_path):
    if pg_server["pgdata"] is None:
        pytest.skip("external test database: no embedded server to share")
    pgdata: Path = pg_server["pgdata"]
    pid_before = server_pid(pgdata)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CITEBIBLE_DATABASE_URL")}
    env.update(CITEBIBLE_PGDATA=str(pgdata), DAGSTER_HOME=str(tmp_path))
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.Popen(
        [str(dagster), "asset", "materialize", "-m", "citebible_pipeline.definitions",
         "--select", "web_usfm_archive,bible_verses", "--partition", "web"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    queries = 0
    with connect(pg_server["url"]) as conn:  # our own session, open the whole time
        while proc.poll() is None:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            queries += 1
            time.sleep(0.2)
    out = proc.stdout.read()
    assert proc.returncode == 0, out[-3000:]
    assert queries > 5
    with connect(pg_server["url"]) as conn:
        assert conn.execute("SELECT count(*) FROM verses WHERE translation = 'web'").fetchone()[0] == 31103
    assert server_pid(pgdata) == pid_before  # same server, still running after the subprocess left
