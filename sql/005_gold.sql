-- Gold set and evaluation results (issue 7).
-- Every OpenBible topic gets a deterministic side; near-duplicate names share a split_key and so a side.
CREATE TABLE topic_splits (
    topic_id  bigint PRIMARY KEY,
    split_key text NOT NULL,
    split     text NOT NULL CHECK (split IN ('training', 'heldout'))
);
CREATE INDEX topic_splits_key ON topic_splits (split_key);

CREATE TABLE gold_queries (
    query_id       text PRIMARY KEY,            -- 'topic:<id>' or 'curated:<slug>'
    source         text NOT NULL CHECK (source IN ('openbible', 'curated')),
    kind           text NOT NULL,               -- topic, pastoral, study, offtopic
    split          text NOT NULL CHECK (split IN ('training', 'heldout')),
    query          text NOT NULL,
    expect_abstain boolean NOT NULL DEFAULT false,
    rationale      text
);

CREATE TABLE gold_passages (
    query_id  text NOT NULL REFERENCES gold_queries (query_id) ON DELETE CASCADE,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    grade     smallint NOT NULL CHECK (grade BETWEEN 1 AND 3),
    PRIMARY KEY (query_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

CREATE TABLE eval_results (
    run_at      timestamptz NOT NULL DEFAULT now(),
    run_id      text NOT NULL,
    variant     text NOT NULL,
    query_set   text NOT NULL,                  -- heldout_topics, curated_pastoral, curated_study, curated_all
    queries     integer NOT NULL,
    recall_50   real,
    ndcg_10     real,
    mrr_10      real,
    hit_5       real,
    abstention_accuracy real,
    PRIMARY KEY (run_id, variant, query_set)
);
