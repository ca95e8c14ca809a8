-- Do no harm (issue 63): what each verse does (passage_voice), the passages a pastoral need lists as wounding
-- (theme_avoid, from themes/pastoral.yaml), and harm judgments in the gold set (gold_wounds) with harm@5 per row.

-- One row per verse: the function the classifier gives it and that function's probability; `harsh` the classifier's
-- summed probability of the four harsh functions (judgement, violence, rebuke, law) and `grave` of judgement and
-- violence alone (what a doer is spared); `hand` and `hand_also` a reader's labels where the verse is in the
-- hand-labelled sample (the engine reads them before the model's).
CREATE TABLE passage_voice (
    id          integer PRIMARY KEY,          -- verse id bbcccvvv (the WEB's; every translation shares it)
    voice       text NOT NULL CHECK (voice IN ('comfort', 'lament', 'praise', 'instruction', 'command', 'rebuke',
                                               'judgement', 'violence', 'law', 'narrative', 'list')),
    probability real NOT NULL CHECK (probability BETWEEN 0 AND 1),
    harsh       real NOT NULL CHECK (harsh BETWEEN 0 AND 1),
    grave       real NOT NULL CHECK (grave BETWEEN 0 AND 1),
    hand        text,
    hand_also   text
);

-- The passages a pastoral need lists as wounding its reader (pastoral.yaml `avoid:`), each with why.
CREATE TABLE theme_avoid (
    theme_id  integer NOT NULL REFERENCES query_themes (id) ON DELETE CASCADE,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    reason    text NOT NULL,
    PRIMARY KEY (theme_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

CREATE TRIGGER passage_voice_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON passage_voice
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('voice');
CREATE TRIGGER theme_avoid_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON theme_avoid
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');

-- Who is speaking in a written query, and the passages that would wound that reader, each with a one-line reason.
ALTER TABLE gold_queries ADD COLUMN stance text CHECK (stance IN ('sufferer', 'doer', 'helper', 'seeker'));
ALTER TABLE gold_queries DROP CONSTRAINT gold_queries_source_check;
ALTER TABLE gold_queries ADD CONSTRAINT gold_queries_source_check
    CHECK (source IN ('openbible', 'curated', 'naves', 'dev', 'dev_harm'));
CREATE TABLE gold_wounds (
    query_id  text NOT NULL REFERENCES gold_queries (query_id) ON DELETE CASCADE,
    start_id  integer NOT NULL,
    end_id    integer NOT NULL,
    reason    text NOT NULL,
    PRIMARY KEY (query_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

ALTER TABLE eval_results ADD COLUMN harm_5 real;
