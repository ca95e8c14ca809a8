"""Task prefixes are per-model configuration. sentence-transformers' encode_query/encode_document add
nothing for models that register no prompts, so the prefixes are always passed explicitly."""

from __future__ import annotations

import re

# (pattern on the model id, document prefix, query prefix); first match wins.
REGISTRY: tuple[tuple[str, str, str], ...] = (
    (r"nomic-embed-text", "search_document: ", "search_query: "),
    (r"(^|[/_-])e5([/_-]|$)|multilingual-e5|e5-", "passage: ", "query: "),
    (r"bge-.*-en-v1\.5", "", "Represent this sentence for searching relevant passages: "),
    (r"minilm|mpnet", "", ""),
)


def prefixes_for(model_id: str) -> tuple[str, str]:
    """(document prefix, query prefix) for a model id or path; unknown models get none."""
    name = model_id.lower()
    for pattern, doc, query in REGISTRY:
        if re.search(pattern, name):
            return doc, query
    return "", ""
