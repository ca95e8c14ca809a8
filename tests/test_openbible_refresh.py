"""The refresh path from a local HTTP server: success, 500, truncated zip, changed header, shrink gate,
and readers during a refresh."""

import io
import threading
import zipfile
from itertools import islice

from dagster import materialize

from citebible_pipeline.db import connect
from citebible_pipeline.openbible.assets import cross_references
from citebible_pipeline.openbible.load import gated_replace
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources.assets import openbible_cross_refs_archive
from citebible_pipeline.sources.datasets import DATASETS
from tests.httpfixture import ScriptedServer

REAL = DATASETS["openbible_cross_refs"].bundled_path


def real_lines(n: int, skip: int = 0) -> list[str]:
    with zipfile.ZipFile(REAL) as zf, zf.open("cross_references.txt") as f:
        lines = [ln.decode() for ln in islice(f, 1 + skip + n)]
    return [lines[0], *lines[1 + skip:]]


def zipped(lines: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cross_references.txt", "".join(lines))
    return buf.getvalue()


def table_state(url):
    with connect(url) as conn:
        return conn.execute("SELECT count(*), coalesce(sum(votes), 0) FROM cross_references").fetchone()


def refresh(url, cache):
    return materialize([openbible_cross_refs_archive, cross_references], raise_on_error=False, resources={
        "postgres": PostgresResource(url=url), "sources": SourcesResource(cache_dir=str(cache), use_live=True)})


def failure_message(result) -> str:
    return "\n".join(str(e.event_specific_data.error) for e in result.all_events if e.is_step_failure)


def test_refresh_from_http(db_url, tmp_path, monkeypatch):
    with ScriptedServer() as server:
        monkeypatch.setenv("CITEBIBLE_OPENBIBLE_CROSS_REFS_URL", server.base + "/cross-references.zip")
        first = real_lines(2000)
        server.routes["/cross-references.zip"] = [(200, zipped(first))]
        assert refresh(db_url, tmp_path).success
        assert table_state(db_url)[0] == 2000

        # success after a 500, with a diff: 100 rows dropped, 150 new, one vote changed
        second = [first[0], *first[101:], *real_lines(150, skip=5000)[1:]]
        src, dst, votes = second[1].rstrip("\n").split("\t")
        second[1] = f"{src}\t{dst}\t{int(votes) + 7}\n"
        server.routes["/cross-references.zip"] = [(500, b"busy"), (200, zipped(second))]
        result = refresh(db_url, tmp_path)
        assert result.success
        meta = result.asset_materializations_for_node("cross_references")[0].metadata
        assert (meta["added"].value, meta["removed"].value, meta["votes_changed"].value) == (150, 100, 1)
        good = table_state(db_url)
        assert good[0] == 2050

        cases = {
            "always 500": ([(500, b"down")], "HTTP 500"),
            "truncated zip": ([(200, zipped(second)[:3000])], "zip"),
            "changed header": ([(200, zipped(["From\tTo\tVotes\tScore\n", *second[1:]]))], "unexpected header"),
            "shrinks > 20%": ([(200, zipped(second[:1500]))], "shrink the table from 2,050 to 1,499 rows"),
        }
        for name, (script, message) in cases.items():
            server.routes["/cross-references.zip"] = script
            result = refresh(db_url, tmp_path)
            assert not result.success, name
            assert message.lower() in failure_message(result).lower(), (name, failure_message(result)[-500:])
            assert table_state(db_url) == good, name  # the previous data is still there


def test_readers_never_see_a_partial_table(db_url):
    from citebible_pipeline.openbible.parse import parse_cross_refs

    old, _ = parse_cross_refs(real_lines(20000), "old")
    new, _ = parse_cross_refs(real_lines(30000, skip=20000), "new")
    cols, types = ("from_id", "to_start", "to_end", "votes"), ("integer",) * 4

    def load(rows):
        with connect(db_url) as conn:
            gated_replace(conn, "cross_references", cols[:3], ("votes",), cols, types,
                          ((a, b, c, v) for (a, b, c), v in rows.items()), max_shrink=1.0)

    load(old)
    seen, errors, stop = [], [], threading.Event()

    def reader():
        try:
            with connect(db_url, autocommit=True) as conn:
                while not stop.is_set():
                    seen.append(conn.execute("SELECT count(*) FROM cross_references").fetchone()[0])
        except Exception as exc:  # any failed reader query fails the test
            errors.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    for rows in (new, old, new):
        load(rows)
    stop.set()
    t.join()
    assert not errors
    assert len(seen) > 20
    assert set(seen) <= {len(old), len(new)} and len(new) in seen


def test_weekly_job_selects_exactly_openbible_and_downstream():
    from citebible_pipeline.definitions import defs

    job = defs.resolve_job_def("openbible_refresh")
    selected = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    graph = defs.resolve_asset_graph()
    openbible = {k for k in graph.get_all_asset_keys() if graph.get(k).group_name == "openbible"}
    expected = {k.to_user_string() for k in graph.get_all_asset_keys()
                if k in openbible or graph.get_ancestor_asset_keys(k) & openbible} - {"reranker_cross_encoder"}
    assert selected == expected and "reranker_model" in selected
    assert {"openbible_cross_refs_archive", "cross_references", "topic_verses"} <= selected
    assert "bible_verses" not in selected and "passage_embeddings" not in selected
    schedule = defs.resolve_schedule_def("weekly_openbible_refresh")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 3 * * 0", "UTC")
    assert job.run_config == {"resources": {"sources": {"config": {"use_live": True}}}}


def test_build_all_is_every_asset_but_the_optional_cross_encoder():
    from citebible_pipeline.definitions import defs

    selected = {k.to_user_string() for k in defs.resolve_job_def("build_all").asset_layer.selected_asset_keys}
    every = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert selected == every - {"reranker_cross_encoder"} and "reranker_model" in selected
