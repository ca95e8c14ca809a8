-- Per-verse genre tags (issue 4) and the boost table the query side reads.
ALTER TABLE verses ADD COLUMN words_of_jesus real NOT NULL DEFAULT 0
    CHECK (words_of_jesus BETWEEN 0 AND 1);

CREATE TABLE genre_boosts (
    genre  text PRIMARY KEY,
    weight real NOT NULL CHECK (weight > 0)   -- multiplicative; never x0
);

-- No foreign keys to verses or genre_boosts on purpose: each table is replaced atomically by its
-- own asset, and a re-run upstream must not cascade-delete these rows. The asset check guards coverage.
CREATE TABLE verse_genres (
    translation  text NOT NULL DEFAULT 'web',
    id           integer NOT NULL,
    genre        text NOT NULL,
    genre_source text NOT NULL,   -- which rule decided: book_default, curated_range:<note>, signal:<name>
    PRIMARY KEY (translation, id)
);
CREATE INDEX verse_genres_genre ON verse_genres (genre);
