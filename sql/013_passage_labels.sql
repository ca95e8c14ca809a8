-- Document expansion (issue 22): each passage with the human labels it is listed under on the training side
-- (OpenBible topic names, Nave's sub-entry texts), so a reader's words can meet a passage through any of its
-- labels (doc2query-style). Written with the theme vocabulary by query_themes (training side only, through
-- gold.access); the query module keeps an in-memory BM25 index over the label words (query/labels.py).
CREATE TABLE passage_labels (
    label_id  integer NOT NULL,              -- dense 1..n, rebuilt with the vocabulary
    source    text NOT NULL CHECK (source IN ('openbible', 'naves')),
    label     text NOT NULL,                 -- the topic name or the sub-entry's readable path
    split_key text NOT NULL,                 -- near-duplicate key (gold.split): training leaves a query's own out
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    weight    real NOT NULL CHECK (weight > 0 AND weight <= 1),   -- share of the topic's best votes, or NAVE_WEIGHT
    PRIMARY KEY (label_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

CREATE TRIGGER passage_labels_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON passage_labels
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
