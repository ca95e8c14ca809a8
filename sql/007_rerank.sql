-- The learned precision stage (issue 11): reranker models trained on training-side votes, versioned,
-- one active per kind. `features` is the input list the model was trained on; the query module refuses
-- a model whose list differs from the one its code computes.
CREATE TABLE reranker_models (
    id            serial PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('features', 'cross_encoder')),
    space_id      integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    model         bytea NOT NULL,               -- LightGBM text model, or a saved CrossEncoder folder as tar.gz
    features      text[] NOT NULL,
    training_hash text NOT NULL,                -- sha256 of the training queries, their labels and the settings
    seed          integer NOT NULL,
    metrics       jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    is_active     boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX reranker_models_one_active ON reranker_models (kind) WHERE is_active;
