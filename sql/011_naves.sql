-- Nave's Topical Bible (issue 19): a second, popularity-free human index. Every reference is listed once,
-- as a start..end range of WEB verse ids. "See X" pointer lines are links between entries, not entries.
CREATE TABLE nave_topics (
    id        bigint PRIMARY KEY,        -- stable: derived from subject, label path and repeat
    subject   text NOT NULL,             -- 'AFFLICTIONS AND ADVERSITIES'
    label     text NOT NULL,             -- '' for the subject's own row
    path      text[] NOT NULL,           -- labels from the first sub-entry level down to this one
    depth     smallint NOT NULL CHECK (depth >= 0),  -- 0: the subject
    parent_id bigint,                    -- NULL for a subject
    line      integer NOT NULL,          -- physical line in the source file
    CHECK ((depth = 0) = (parent_id IS NULL))
);
CREATE INDEX nave_topics_subject ON nave_topics (subject);

CREATE TABLE nave_passages (
    topic_id  bigint NOT NULL,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    PRIMARY KEY (topic_id, start_id, end_id),
    CHECK (end_id >= start_id)
);
CREATE INDEX nave_passages_start ON nave_passages (start_id);

CREATE TABLE nave_links (
    from_id   bigint NOT NULL,           -- the entry the pointer line sits under
    target    text NOT NULL,             -- as written: 'AFFLICTION, CONSOLATION IN'
    to_id     bigint,                    -- the entry it names, NULL when no such subject exists
    line      integer NOT NULL,
    PRIMARY KEY (from_id, target)
);

-- Every Nave's sub-entry gets a side by the same near-duplicate key as the OpenBible topics (a hash of the
-- key, so an equal key falls on the same side in both sources).
CREATE TABLE nave_splits (
    topic_id  bigint PRIMARY KEY,
    split_key text NOT NULL,
    split     text NOT NULL CHECK (split IN ('training', 'heldout'))
);
CREATE INDEX nave_splits_key ON nave_splits (split_key);

ALTER TABLE gold_queries DROP CONSTRAINT gold_queries_source_check;
ALTER TABLE gold_queries ADD CONSTRAINT gold_queries_source_check
    CHECK (source IN ('openbible', 'curated', 'naves', 'dev'));

-- Concentration over a set's top-5 answers: the share of answers holding the most frequent passage, and
-- distinct passages per 100 answer slots.
ALTER TABLE eval_results ADD COLUMN top_passage_share real, ADD COLUMN distinct_per_100 real;
