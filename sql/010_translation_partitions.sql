-- Translations as partitions (issue 13): each translation's passages live beside the others' in the same
-- embedding space, so the key gains the translation, and each HNSW index covers one (space, level,
-- translation) so that a search of one translation never post-filters another's rows. The old per-level
-- indexes are dropped here; the next passage_embeddings materialization builds the new ones (no vector is
-- re-embedded: the content hashes are unchanged).
ALTER TABLE passage_embeddings DROP CONSTRAINT passage_embeddings_pkey;
ALTER TABLE passage_embeddings ADD PRIMARY KEY (space_id, translation, level, id);
DO $$
DECLARE ix text;
BEGIN
    FOR ix IN SELECT indexname FROM pg_indexes WHERE tablename = 'passage_embeddings'
                 AND indexname ~ '^passage_embeddings_hnsw_s[0-9]+_(verse|chapter|pericope)$' LOOP
        EXECUTE format('DROP INDEX %I', ix);
    END LOOP;
END $$;
DROP INDEX IF EXISTS passage_embeddings_location;
CREATE INDEX passage_embeddings_location ON passage_embeddings (space_id, translation, level, book_order, chapter, verse_start);
