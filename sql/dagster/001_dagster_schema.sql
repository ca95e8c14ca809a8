-- Dagster's own run, event-log and schedule tables (dagster-postgres creates them inside this schema through
-- the search_path the instance storage sets), kept apart from the pipeline's tables.
CREATE SCHEMA IF NOT EXISTS dagster;
