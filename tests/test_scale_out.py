"""The scale-out recipe in dagster_home/cluster/: what of it can run here does (the K8s launcher itself cannot)."""

from __future__ import annotations

from pathlib import Path

import yaml
from dagster import DagsterRun, validate_run_config
from dagster._core.instance.config import dagster_instance_config
from dagster._utils.tags import TagConcurrencyLimitsCounter

from citebible_pipeline.definitions import defs

HOME = Path(__file__).resolve().parents[1] / "dagster_home"
CLUSTER = HOME / "cluster"


def _run(run_id: str, **tags: str) -> DagsterRun:
    return DagsterRun(job_name="build_translation", run_id=run_id, tags=tags)


def test_cluster_instance_file_validates():
    config, custom_class = dagster_instance_config(str(CLUSTER))
    assert custom_class is None
    assert config["run_launcher"]["class"] == "K8sRunLauncher"
    assert config["storage"]["custom"]["class"] == "CitebibleStorage"


def test_one_run_per_translation_and_one_gpu_run():
    """Dagster's own limit counter, fed the limits of both instance files, with the tags real runs carry."""
    for folder in (HOME, CLUSTER):
        config, _ = dagster_instance_config(str(folder))
        limits = config["run_coordinator"]["config"]["tag_concurrency_limits"]
        counter = TagConcurrencyLimitsCounter(limits, [_run("a", **{"dagster/partition": "web"})])
        assert counter.is_blocked(_run("b", **{"dagster/partition": "web"}))
        assert not counter.is_blocked(_run("c", **{"dagster/partition": "bsb"}))
        assert not counter.is_blocked(DagsterRun(job_name="openbible_refresh", run_id="d"))
    config, _ = dagster_instance_config(str(CLUSTER))
    limits = config["run_coordinator"]["config"]["tag_concurrency_limits"]
    counter = TagConcurrencyLimitsCounter(limits, [_run("a", **{"dagster/partition": "web", "citebible/device": "cuda"})])
    assert counter.is_blocked(_run("b", **{"dagster/partition": "bsb", "citebible/device": "cuda"}))
    assert not counter.is_blocked(_run("c", **{"dagster/partition": "bsb"}))


def test_gpu_run_config_fits_the_translation_job():
    run_config = yaml.safe_load((CLUSTER / "embed_on_gpu.yaml").read_text())
    resolved = validate_run_config(defs.resolve_job_def("build_translation"), run_config)
    assert resolved["resources"]["embedder"]["config"]["device"] == "cuda"
    assert resolved["execution"]["multi_or_in_process_executor"]["multiprocess"]["max_concurrent"] == 2


def test_the_chain_to_the_embeddings_goes_first_and_nothing_else_does():
    """On 2 slots the executor starts steps in priority order: exactly the embedding step, its ancestors and their
    blocking checks carry the priority (partitions.FIRST), so the other sources wait in the embedding's shadow."""
    from dagster import AssetKey

    from citebible_pipeline.partitions import FIRST

    graph = defs.resolve_asset_graph()
    chain, todo = set(), [AssetKey("passage_embeddings")]
    while todo:
        key = todo.pop()
        if key not in chain:
            chain.add(key)
            todo.extend(graph.get(key).parent_keys)
    gated = chain - {AssetKey("passage_embeddings")}  # its own check runs after it
    checks = {f"{c.asset_key.path[-1]}_{c.name}" for c in graph.get_check_keys_for_assets(gated)}
    expected = {k.path[-1] for k in chain} | checks
    tag, value = next(iter(FIRST.items()))
    first = {n.name for n in defs.resolve_implicit_global_asset_job_def().graph.node_defs if n.tags.get(tag) == value}
    assert first == expected and "web_usfm_archive" in first and "naves_archive" not in first, (first ^ expected)
