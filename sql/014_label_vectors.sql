-- Document expansion as label vectors (issue 22, item 5): every training-side label of passage_labels embedded in
-- an embedding space, so a reader's sentence can meet a passage through the meaning of the labels it is listed
-- under, not only their words. Written with passage_labels by query_themes (one transaction); the query module reads
-- them into the label index and the reranker's features (query.labels.nearest, query.features).
CREATE TABLE label_vectors (
    label_id  integer NOT NULL,              -- passage_labels.label_id
    space_id  integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    embedding vector NOT NULL,
    PRIMARY KEY (space_id, label_id)
);

CREATE TRIGGER label_vectors_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON label_vectors
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
