"""Embedding model, prefixes, embedding spaces and the passage_embeddings table (no Dagster here:
the query module imports this package)."""
