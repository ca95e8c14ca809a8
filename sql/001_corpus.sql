-- Corpus tables (Tier 1 + Tier 2 of ARCHITECTURE.md) and the pgvector extension.
-- Verse ids are bbcccvvv (book order 1-66, then 67+ for the deuterocanon), as in OpenBible's files.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE books (
    book_order   smallint PRIMARY KEY,
    usfm         text NOT NULL UNIQUE,
    osis         text NOT NULL UNIQUE,
    name         text NOT NULL,
    testament    text NOT NULL CHECK (testament IN ('OT', 'NT', 'DC')),
    default_genre text NOT NULL,
    chapter_count smallint NOT NULL,
    verse_count  integer NOT NULL
);

CREATE TABLE verses (
    translation     text NOT NULL DEFAULT 'web',
    id              integer NOT NULL,
    book_order      smallint NOT NULL,
    usfm_book       text NOT NULL,
    osis_book       text NOT NULL,
    book_name       text NOT NULL,
    chapter         smallint NOT NULL,
    verse           smallint NOT NULL,
    verse_end       smallint NOT NULL,
    ref             text NOT NULL,
    testament       text NOT NULL CHECK (testament IN ('OT', 'NT', 'DC')),
    text            text NOT NULL,
    is_empty        boolean NOT NULL,
    is_poetry       boolean NOT NULL,
    paragraph_start boolean NOT NULL,
    psalm_title     text,
    footnotes       text[] NOT NULL DEFAULT '{}',
    strongs         text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (translation, id),
    CHECK (id = book_order * 1000000 + chapter * 1000 + verse),
    CHECK (is_empty = (text = ''))
);
CREATE INDEX verses_book_chapter ON verses (translation, book_order, chapter, verse);

CREATE TABLE chapters (
    translation  text NOT NULL DEFAULT 'web',
    id           integer NOT NULL,            -- bbccc000
    book_order   smallint NOT NULL,
    usfm_book    text NOT NULL,
    osis_book    text NOT NULL,
    book_name    text NOT NULL,
    chapter      smallint NOT NULL,
    verse_start  smallint NOT NULL,
    verse_end    smallint NOT NULL,
    ref          text NOT NULL,
    testament    text NOT NULL CHECK (testament IN ('OT', 'NT', 'DC')),
    text         text NOT NULL,
    verse_count  smallint NOT NULL,
    PRIMARY KEY (translation, id),
    UNIQUE (translation, book_order, chapter)
);
