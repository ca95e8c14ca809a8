"""Source archives: the one HTTP/file fetcher and the configured datasets."""

from citebible_pipeline.sources.datasets import DATASETS, Dataset, resolve_url
from citebible_pipeline.sources.fetch import (
    FetchError,
    FetchResult,
    fetch,
    open_text_member,
)

__all__ = ["DATASETS", "Dataset", "resolve_url", "FetchError", "FetchResult", "fetch", "open_text_member"]
