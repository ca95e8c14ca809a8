-- OpenBible.info imports (issue 6). Verse ids are the WEB's bbcccvvv after versification mapping.
CREATE TABLE cross_references (
    from_id   integer NOT NULL,
    to_start  integer NOT NULL,
    to_end    integer NOT NULL,
    votes     integer NOT NULL,            -- may be negative: real down-votes, kept
    PRIMARY KEY (from_id, to_start, to_end),
    CHECK (to_end >= to_start)
);
CREATE INDEX cross_references_to ON cross_references (to_start);

CREATE TABLE topics (
    id              bigint PRIMARY KEY,    -- stable: derived from the normalized name
    name            text NOT NULL,
    normalized_name text NOT NULL UNIQUE,
    passages        integer NOT NULL,
    total_votes     integer NOT NULL
);

CREATE TABLE topic_verses (
    topic_id  bigint NOT NULL,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    votes     integer,                      -- topic-votes export (raw votes, >= 10); NULL if only scored
    score     integer,                      -- topic-scores export (quality 2-100); NULL if only voted
    PRIMARY KEY (topic_id, start_id, end_id),
    CHECK (end_id >= start_id),
    CHECK (votes IS NOT NULL OR score IS NOT NULL)
);
CREATE INDEX topic_verses_start ON topic_verses (start_id);
