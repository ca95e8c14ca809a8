"""The runtime query module an API imports: `from citebible_pipeline.query import Engine`.

Importing it never imports Dagster (tests/test_query.py proves it); models load when an Engine is made.
"""

from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.models import EngineNotReady
from citebible_pipeline.query.models import (
    Analysis,
    QueryValidationError,
    Result,
    Rewrite,
    SearchOptions,
    SearchResponse,
)

__all__ = ["Engine", "EngineNotReady", "Analysis", "QueryValidationError", "Result", "Rewrite", "SearchOptions",
           "SearchResponse"]
