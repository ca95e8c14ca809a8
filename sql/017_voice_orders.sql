-- The function model's own reading of whether a verse is an order (command or instruction), which the harm stage's
-- order cap reads. It is kept apart from `voice`, whose harsh functions a second model names (voice.model.name): a
-- classifier that learns harsh functions from a harsh-rich sample moves the gentle boundary, and with it the cap
-- (docs/decisions.md, tenth and fifteenth increments). Rows loaded before this column: their voice was the function
-- model's, so its order reading is the voice itself (the update runs only where there are rows, so that an empty
-- table's serving version does not move).
ALTER TABLE passage_voice ADD COLUMN orders boolean;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM passage_voice) THEN
        UPDATE passage_voice SET orders = voice IN ('command', 'instruction');
    END IF;
END
$$;
ALTER TABLE passage_voice ALTER COLUMN orders SET NOT NULL;
