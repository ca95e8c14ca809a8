"""Source archive assets: fetch each dataset into the cache and record where it came from."""


from dagster import (
    AssetExecutionContext,
    AssetsDefinition,
    MaterializeResult,
    MetadataValue,
    asset,
)

from citebible_pipeline.bible.translations import TRANSLATIONS
from citebible_pipeline.partitions import FIRST
from citebible_pipeline.resources import SourcesResource
from citebible_pipeline.sources.datasets import DATASETS

GROUPS = {"web_usfm": "bible", "bsb_usfm": "bible", "naves": "naves"}
TRANSLATION_ARCHIVES = frozenset(t.dataset for t in TRANSLATIONS.values())  # on the chain to the embeddings


def _archive_asset(name: str) -> AssetsDefinition:
    ds = DATASETS[name]

    @asset(
        name=f"{name}_archive",
        group_name=GROUPS.get(name, "openbible"),
        kinds={"file"},
        op_tags=FIRST if name in TRANSLATION_ARCHIVES else None,
        description=f"{name} source archive ({ds.licence}), fetched from the bundled snapshot or {ds.live_url}.",
    )
    def _archive(context: AssetExecutionContext, sources: SourcesResource) -> MaterializeResult:
        result = sources.fetch(name)
        context.log.info(f"{name}: {result.size:,} bytes from {result.url} in {result.seconds:.2f}s")
        return MaterializeResult(
            metadata={
                "source_url": MetadataValue.url(result.url) if result.url.startswith("http") else result.url,
                "sha256": result.sha256,
                "size_bytes": result.size,
                "cache_path": MetadataValue.path(str(result.path)),
                "attempts": result.attempts,
                "licence": ds.licence,
            }
        )

    return _archive


web_usfm_archive = _archive_asset("web_usfm")
bsb_usfm_archive = _archive_asset("bsb_usfm")
openbible_cross_refs_archive = _archive_asset("openbible_cross_refs")
openbible_topic_votes_archive = _archive_asset("openbible_topic_votes")
openbible_topic_scores_archive = _archive_asset("openbible_topic_scores")
naves_archive = _archive_asset("naves")

archive_assets = [web_usfm_archive, bsb_usfm_archive, openbible_cross_refs_archive, openbible_topic_votes_archive, openbible_topic_scores_archive,
                  naves_archive]
