-- A third retrieval level (issue 13): pericopes, each one row per embedding space like a chapter, its
-- vector derived from its verses' vectors; a partial HNSW index per level as before.
ALTER TABLE passage_embeddings DROP CONSTRAINT passage_embeddings_level_check;
ALTER TABLE passage_embeddings ADD CONSTRAINT passage_embeddings_level_check
    CHECK (level IN ('verse', 'chapter', 'pericope'));
