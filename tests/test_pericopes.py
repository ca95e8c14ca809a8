"""Pericopes from the BSB's section headings: the parser keeps \\s1 titles and \\r parallels, the passages
cover every WEB verse exactly once, versification differences are listed, and a bad archive never
replaces the passages already loaded."""

import zipfile

import pytest

from citebible_pipeline.bible.canon import by_usfm, verse_id
from citebible_pipeline.bible.pericopes import Pericope, build, coverage_errors, from_archive
from citebible_pipeline.bible.references import format_id, format_range
from citebible_pipeline.bible.usfm import UsfmError, parse_usfm
from citebible_pipeline.db import connect
from citebible_pipeline.sources.datasets import DATASETS


@pytest.fixture(scope="module")
def bsb():
    return from_archive(DATASETS["bsb_usfm"].bundled_path)


def test_parser_keeps_section_titles_and_parallels_not_subheadings():
    text = ("\\id JHN\n\\c 1\n\\s1 The Word\n\\r (Genesis 1:1–2)\n\\p\n\\v 1 In the beginning.\n\\s2 An aside\n"
            "\\v 2 He was with God.\n\\s1 The Witness\n\\p\n\\v 3 A man came.\n")
    vs = list(parse_usfm(text, "t.usfm"))
    assert [(v.verse, v.section, v.parallels) for v in vs] == [
        (1, "The Word", "(Genesis 1:1–2)"), (2, None, None), (3, "The Witness", None)]
    assert [v.text for v in vs] == ["In the beginning.", "He was with God.", "A man came."]


def test_bsb_pericopes_cover_every_web_verse_exactly_once(bsb):
    pericopes, report, numbered = bsb
    assert len(pericopes) == 3015 and numbered == 31084
    assert coverage_errors(pericopes) == []
    assert sum(p.end_id - p.start_id + 1 for p in pericopes if p.start_id // 1000 == p.end_id // 1000) <= 31103
    titles = {format_range(p.start_id, p.end_id): p for p in pericopes}
    assert titles["John 11:17-37"].title == "Jesus Comforts Martha and Mary"
    assert titles["Psalm 23"].title == "The LORD Is My Shepherd"
    assert titles["Psalm 23"].parallels == "(Ezekiel 34:11–24; John 10:1–21)"


def test_versification_differences_are_listed_not_misnumbered(bsb):
    pericopes, report, _ = bsb
    web_only = {format_id(v) for v in report.canon_only}
    assert {"Matthew 17:21", "John 5:4", "Acts 8:37", "Romans 14:24", "Romans 16:24"} <= web_only
    assert [format_id(v) for v in report.source_only] == ["Romans 16:26", "Romans 16:27"]
    # a verse the BSB lacks still belongs to the passage around it, under the WEB's id
    around = next(p for p in pericopes if p.start_id <= verse_id(40, 17, 21) <= p.end_id)
    assert around.start_id // 1_000_000 == 40 and not report.moved_starts


def test_build_moves_a_heading_off_a_missing_verse_and_titles_an_unheaded_book():
    rom, jude = by_usfm("ROM"), by_usfm("JUD")
    heads = [(verse_id(rom.order, 16, 26), "Doxology", None), (verse_id(jude.order, 1, 3), "Contend for the Faith", None)]
    got, report = build(heads, [])
    assert coverage_errors(got) == []
    rom_last = [p for p in got if p.start_id // 1_000_000 == rom.order]
    assert rom_last[0] == Pericope(verse_id(rom.order, 1, 1), verse_id(rom.order, 16, 25), "Romans", None)
    assert report.moved_starts == []  # Rom 16:26 is past the WEB's last verse of Romans: it opens nothing
    jude_ps = [p for p in got if p.start_id // 1_000_000 == jude.order]
    assert [(p.title, p.start_id % 1000, p.end_id % 1000) for p in jude_ps] == [("Jude", 1, 2), ("Contend for the Faith", 3, 25)]


def test_coverage_errors_name_overlaps_and_gaps():
    a = Pericope(verse_id(1, 1, 1), verse_id(1, 1, 10), "A", None)
    b = Pericope(verse_id(1, 1, 5), verse_id(1, 50, 26), "B", None)
    errors = coverage_errors([a, b])
    assert any("Genesis 1:5" in e for e in errors) and any("end at verse" in e for e in errors)


@pytest.mark.slow
def test_pericopes_asset_loaded_and_a_bad_archive_keeps_them(corpus_db, tmp_path):
    from dagster import materialize

    from citebible_pipeline.bible.assets import pericopes
    from citebible_pipeline.resources import SourcesResource

    checks = [e for e in corpus_db["result"].get_asset_check_evaluations() if e.check_name == "pericopes_cover_every_verse"]
    assert checks and checks[0].passed
    with connect(corpus_db["url"]) as conn:
        before = conn.execute("SELECT count(*), md5(string_agg(title, '|' ORDER BY start_id)) FROM pericopes").fetchone()
    assert before[0] == 3015
    bad = tmp_path / "bsb_usfm"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("bsb_usfm/43JHNBSB.usfm", "\\id JHN\n\\c 1\n\\s1 Title\n\\zz broken\n\\v 1 text\n")
    resources = {**corpus_db["resources"], "sources": SourcesResource(cache_dir=str(tmp_path))}
    with pytest.raises(UsfmError, match=r"43JHNBSB\.usfm:4"):
        materialize([pericopes], resources=resources)
    with connect(corpus_db["url"]) as conn:
        assert conn.execute("SELECT count(*), md5(string_agg(title, '|' ORDER BY start_id)) FROM pericopes").fetchone() == before


@pytest.mark.slow
def test_pericope_level_is_embedded_and_searchable_with_titles(full_db):
    from citebible_pipeline.embeddings.store import dense_search
    from citebible_pipeline.query import Engine

    checks = {e.check_name: e for e in full_db["embed_result"].get_asset_check_evaluations()}
    meta = checks["passage_embeddings_complete"].metadata
    assert checks["passage_embeddings_complete"].passed and meta["pericopes_without_a_row"].value == 0
    assert meta["pericope_rows"].value == 3015  # 3,015 headings, one all footnote (Rom 16:25), Lamentations 1-2 split
    engine = Engine(full_db["url"], llm=None, reranker=None)  # the fused order: the pericope level shows in the top 10
    with engine.pool.connection() as conn:
        top = dense_search(conn, engine.space_id, engine.dims, "pericope",
                           engine.encode(["Jesus comforts Martha and Mary after Lazarus died"])[0], k=3)
    assert "John 11:17-37" in [ref for _, ref, _ in top]
    r = engine.search("Jesus comforts Martha and Mary after Lazarus died", k=10, pericopes=True)
    spans = sorted((x.start_id, x.end_id) for x in r.results)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # verse -> pericope -> chapter never overlap
    titled = [x for x in r.results if x.level == "pericope"]
    assert titled and all(x.title for x in titled)
    psalm = engine.search("Ps 23").results[0]
    assert psalm.level == "chapter" and psalm.title == "The LORD Is My Shepherd"  # a chapter that is one pericope
