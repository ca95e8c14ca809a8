-- Embedding spaces and the one passage table (verse and chapter levels), issue 5.
CREATE TABLE embedding_spaces (
    id              serial PRIMARY KEY,
    space_key       text NOT NULL UNIQUE,        -- hash of the fields below
    model_id        text NOT NULL,
    weights_sha256  text NOT NULL,
    dims            integer NOT NULL CHECK (dims > 0),
    document_prefix text NOT NULL,
    query_prefix    text NOT NULL,
    normalized      boolean NOT NULL,
    max_seq_length  integer NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    is_active       boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX embedding_spaces_one_active ON embedding_spaces (is_active) WHERE is_active;

-- The vector column has no fixed dimension so a new model (new space) can live beside the old one
-- during a swap; each space gets partial HNSW indexes on (embedding::vector(dims)), one per level,
-- created by the passage_embeddings asset once the space's rows are loaded.
CREATE TABLE passage_embeddings (
    space_id     integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    level        text NOT NULL CHECK (level IN ('verse', 'chapter')),
    id           integer NOT NULL,               -- verse id bbcccvvv or chapter id bbccc000
    translation  text NOT NULL DEFAULT 'web',
    book_order   smallint NOT NULL,
    book         text NOT NULL,                  -- USFM code
    book_name    text NOT NULL,
    chapter      smallint NOT NULL,
    verse_start  smallint NOT NULL,
    verse_end    smallint NOT NULL,
    ref          text NOT NULL,
    testament    text NOT NULL,
    genre        text NOT NULL,
    text         text NOT NULL,
    windows      smallint NOT NULL DEFAULT 1,    -- chapter: number of verse windows mean-pooled
    content_hash text NOT NULL,                  -- text + prefix + space: unchanged -> not re-embedded
    embedding    vector NOT NULL,
    tsv          tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    PRIMARY KEY (space_id, level, id)
);
CREATE INDEX passage_embeddings_tsv ON passage_embeddings USING gin (tsv);
CREATE INDEX passage_embeddings_location ON passage_embeddings (space_id, level, book_order, chapter, verse_start);
