-- Situation-level wounds (issue 63): reader sentences written for the pastoral needs (themes/judged_wounds.csv), each
-- with the passages judged to wound that reader in that situation. A need's `avoid:` list holds what wounds a typical
-- reader of the need; these hold what wounds one situation (a "waters" verse to a parent whose child drowned), and
-- apply only to a sentence near it. Written by query_themes with the vocabulary (one transaction).
CREATE TABLE situations (
    id        integer PRIMARY KEY,
    need      text NOT NULL,                 -- the pastoral need the sentence was written for
    sentence  text NOT NULL UNIQUE
);

CREATE TABLE situation_vectors (
    situation_id integer NOT NULL REFERENCES situations (id) ON DELETE CASCADE,
    space_id     integer NOT NULL REFERENCES embedding_spaces (id) ON DELETE CASCADE,
    embedding    vector NOT NULL,
    PRIMARY KEY (space_id, situation_id)
);

CREATE TABLE situation_avoid (
    situation_id integer NOT NULL REFERENCES situations (id) ON DELETE CASCADE,
    start_id     integer NOT NULL,
    end_id       integer NOT NULL,
    reason       text NOT NULL,
    PRIMARY KEY (situation_id, start_id, end_id),
    CHECK (end_id >= start_id)
);

CREATE TRIGGER situations_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON situations
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
CREATE TRIGGER situation_vectors_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON situation_vectors
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
CREATE TRIGGER situation_avoid_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON situation_avoid
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
