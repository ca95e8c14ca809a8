"""Retrieval variants measured by the evaluation (baselines here; the query module adds its own)."""
