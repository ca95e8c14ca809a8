-- Pericopes (issue 13): passages an editor titled, from the BSB's \s1 headings, on the shared verse ids
-- so they apply to every translation. Together they cover each verse of the 66 books exactly once.
CREATE TABLE pericopes (
    start_id  integer PRIMARY KEY,
    end_id    integer NOT NULL,
    title     text NOT NULL,
    parallels text,                         -- the heading's parallel passages, e.g. "(John 1:1–5; Hebrews 11:1–3)"
    source    text NOT NULL,                -- the translation whose headings drew it
    CHECK (end_id >= start_id),
    CHECK (start_id / 1000000 = end_id / 1000000)
);
CREATE INDEX pericopes_end ON pericopes (end_id);
