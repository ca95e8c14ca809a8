-- What the query engine serves, versioned by the database itself: any statement that writes one of the
-- artefacts below bumps its counter in the writer's own transaction, so a running API sees the new version
-- exactly when the new rows commit (one cheap SELECT per check) and swaps to them (query/serving.py).
CREATE TABLE serving_versions (
    artefact   text PRIMARY KEY,
    version    bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION bump_serving_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO serving_versions (artefact, version) VALUES (TG_ARGV[0], 1)
    ON CONFLICT (artefact) DO UPDATE SET version = serving_versions.version + 1, changed_at = now();
    RETURN NULL;
END
$$;

CREATE TRIGGER embedding_spaces_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON embedding_spaces
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('space');
CREATE TRIGGER query_themes_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON query_themes
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
CREATE TRIGGER theme_cues_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON theme_cues
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
CREATE TRIGGER theme_passages_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON theme_passages
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('themes');
CREATE TRIGGER abstention_floors_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON abstention_floors
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('floor');
CREATE TRIGGER reranker_models_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON reranker_models
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('reranker');
CREATE TRIGGER genre_boosts_serving AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON genre_boosts
    FOR EACH STATEMENT EXECUTE FUNCTION bump_serving_version('genre_boosts');
