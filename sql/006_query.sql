-- The query module's build-side tables (issue 10): the theme vocabulary the step-back rewrite routes to,
-- the human-vote prior of each theme (training-side votes only, read through gold.access), and the
-- calibrated relevance floor. Vectors belong to an embedding space and vanish with it.
CREATE TABLE query_themes (
    id       integer PRIMARY KEY,            -- dense 1..n, rebuilt with the vocabulary
    kind     text NOT NULL CHECK (kind IN ('pastoral', 'topic')),
    key      text NOT NULL UNIQUE,           -- pastoral:<id> or topic:<normalized name>
    name     text NOT NULL,                  -- what a reader sees as the rewrite
    rewrite  text NOT NULL,                  -- what is embedded as an extra query
    split_key text NOT NULL                  -- near-duplicate key (gold.split): lets calibration leave a topic out
);

CREATE TABLE theme_cues (
    theme_id  integer NOT NULL REFERENCES query_themes (id) ON DELETE CASCADE,
    space_id  integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    cue       text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (space_id, theme_id, cue)
);

CREATE TABLE theme_passages (
    theme_id  integer NOT NULL REFERENCES query_themes (id) ON DELETE CASCADE,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    weight    real NOT NULL CHECK (weight > 0 AND weight <= 1),   -- share of the theme's best votes/score
    PRIMARY KEY (theme_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

CREATE TABLE abstention_floors (
    id         serial PRIMARY KEY,
    space_id   integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    features   text[] NOT NULL,
    coef       real[] NOT NULL,
    intercept  real NOT NULL,
    threshold  real NOT NULL,                -- abstain when the probability of "answerable" is below it
    metrics    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    is_active  boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX abstention_floors_one_active ON abstention_floors (is_active) WHERE is_active;
