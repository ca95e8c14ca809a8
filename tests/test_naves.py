"""Nave's Topical Bible: each notation rule on real lines, the real file's counts, the query rule, and the
gated load's failure paths (truncated file, checksum, reject gate) keeping the previous rows."""

import csv
import gzip
import io

import pytest
from dagster import materialize

from citebible_pipeline.bible.canon import verse_id
from citebible_pipeline.bible.references import format_range
from citebible_pipeline.db import connect
from citebible_pipeline.naves.assets import count_verse_tokens, nave_index
from citebible_pipeline.naves.parse import MAX_REJECT_SHARE, NaveFormatError, parse_naves, split_line
from citebible_pipeline.naves.queries import is_query, name_words, readable
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources.assets import naves_archive
from citebible_pipeline.sources.datasets import DATASETS

REAL = DATASETS["naves"].bundled_path


def real_text() -> str:
    with gzip.open(REAL, "rt", encoding="utf-8", newline="") as f:
        return f.read()


def csv_text(*records: tuple[str, str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "subject", "entry"])
    for subject, entry in records:
        w.writerow([subject[0], subject, entry])
    return "\ufeff" + buf.getvalue()


def passages_of(text: str) -> dict[str, list[str]]:
    index = parse_naves(io.StringIO(text, newline=""))
    names = {e.id: ": ".join((e.subject, *e.path)) for e in index.entries}
    out: dict[str, list[str]] = {}
    for tid, s, e in sorted(index.passages, key=lambda p: (p[1], p[2])):
        out.setdefault(names[tid], []).append(format_range(s, e))
    return out


def test_book_carries_over_and_consecutive_verses_are_one_passage():
    got = passages_of(csv_text(("AARON", "-Lineage of EXO 6:16-20; JOS 21:4,10; 1CH 6:2,3; 23:13")))
    assert got["AARON: Lineage of"] == ["Exodus 6:16-20", "Joshua 21:4", "Joshua 21:10", "1 Chronicles 6:2-3",
                                        "1 Chronicles 23:13"]


def test_bare_number_after_semicolon_is_a_whole_chapter():
    got = passages_of(csv_text(("AARON", "-Descendants of EXO 6:23,25; 1CH 6:3-15,50-53; 24")))
    assert "1 Chronicles 24" in got["AARON: Descendants of"]
    assert "1 Chronicles 6:50-53" in got["AARON: Descendants of"]


def test_song_of_songs_is_so_and_jude_is_jude():
    got = passages_of(csv_text(("ALOES", "-Used as perfume PSA 45:8; PRO 7:17; So 4:14"),
                               ("ANARCHY", "-General scriptures concerning ISA 3:5-8; GAL 5:13,14; 2PE 2:10-19; Jude 1:8-13")))
    assert got["ALOES: Used as perfume"][-1] == "Song of Songs 4:14"
    assert got["ANARCHY: General scriptures concerning"][-1] == "Jude 1:8-13"
    # "Hoshea to So": the king named So is a label word, not the book (no chapter number follows)
    assert split_line("-Hoshea to So 2KI 17:4") == ("Hoshea to So", "2KI 17:4")


def test_link_ids_stripped_and_see_lines_are_links():
    index = parse_naves(io.StringIO(csv_text(
        ("ANGER", "-General scriptures concerning PRO 14:17\n     -See also [260]ANGER OF GOD\n-See HATRED"),
        ("ANGER OF GOD", "-Slow PSA 103:8"), ("HATRED", "-Of evil PSA 97:10")), newline=""))
    assert [e.label for e in index.entries if e.subject == "ANGER"] == ["", "General scriptures concerning"]
    by_target = {link.target: link for link in index.links}
    assert set(by_target) == {"ANGER OF GOD", "HATRED"}
    subjects = {e.subject: e.id for e in index.entries if e.depth == 0}
    assert by_target["ANGER OF GOD"].to_id == subjects["ANGER OF GOD"]
    general = next(e for e in index.entries if e.label == "General scriptures concerning")
    assert by_target["ANGER OF GOD"].from_id == general.id  # indented under the sub-entry
    assert by_target["HATRED"].from_id == subjects["ANGER"]
    assert split_line("     -Identical with [442]BAAL-GAD, which see")[0] == "Identical with BAAL-GAD, which see"


def test_typos_are_counted_rejects_with_line_and_text():
    index = parse_naves(io.StringIO(csv_text(
        ("LIBERALITY", "-Exhortations to 1JHN 3:17,18; JAS 2:15,16"),
        ("MOSES", "-Commissioned EXO 3:19,29; MRK 18:42,43")), newline=""))
    reasons = [(r.line, r.reason) for r in index.report.rejects]
    assert (2, "unknown book code '1JHN'") in reasons
    assert any(line == 3 and "Exodus 3 has 22 verses; 29 is out of range" in why for line, why in reasons)
    assert sum("Mark has 16 chapters" in why for _, why in reasons) == 2
    assert index.report.references == 3  # JAS 2:15 and 2:16 (each listed verse counts), EXO 3:19


def test_with_and_period_separators_and_english_versification():
    got = passages_of(csv_text(
        ("QUOTATIONS", "-In the New Testament MAT 1:23; with ISA 7:14. MAT 2:6; with MIC 5:2"),
        ("MYSTERIES", "-Of redemption ROM 16:25,26; 1CO 2:7-10")))
    assert got["QUOTATIONS: In the New Testament"] == ["Isaiah 7:14", "Micah 5:2", "Matthew 1:23", "Matthew 2:6"]
    assert got["MYSTERIES: Of redemption"][0] == "Romans 14:24-25"  # the WEB's place of the doxology


def test_changed_header_fails_the_whole_file():
    with pytest.raises(NaveFormatError, match="unexpected header"):
        parse_naves(io.StringIO("topic,entry\nA,-x GEN 1:1\n"))


def test_real_file_counts_and_psalm_88():
    text = real_text()
    index = parse_naves(io.StringIO(text, newline=""))
    rep = index.report
    subjects = [e for e in index.entries if e.depth == 0]
    assert len(subjects) == 5319
    assert rep.lines == 29006 and rep.pointers + len(index.entries) - len(subjects) == rep.lines
    assert rep.reject_share <= MAX_REJECT_SHARE and 0 < len(rep.rejects) < 20
    tokens = count_verse_tokens(text)
    assert abs(rep.verse_groups - tokens) / tokens <= 0.01
    names = {e.id: (e.subject, e.path) for e in index.entries}
    prayer_in = {format_range(s, e) for t, s, e in index.passages
                 if names[t] == ("AFFLICTIONS AND ADVERSITIES", ("PRAYER IN",))}
    assert "Psalm 88:9-14" in prayer_in
    assert readable("AFFLICTIONS AND ADVERSITIES", ("PRAYER IN",)) == "afflictions and adversities: prayer in"


def test_query_rule():
    names = name_words(["And David wept for Absalom his son.", "David went up. David said,", "the affliction of the poor"])
    assert {"david", "absalom"} <= names and "affliction" not in names
    assert not is_query("AFFLICTIONS AND ADVERSITIES", ("Of David for Absalom",), 5, names)  # an instance list
    assert not is_query("AFFLICTIONS AND ADVERSITIES", ("Exemplified", "Job"), 5, frozenset())
    assert not is_query("DAVID", ("Lineage of",), 5, names)  # a person's subject
    assert not is_query("AFFLICTIONS AND ADVERSITIES", ("CONSOLATION IN",), 2, names)  # fewer than 3 passages
    assert is_query("AFFLICTIONS AND ADVERSITIES", ("CONSOLATION IN",), 3, names)
    assert readable("OBEDIENCE", ("General scriptures concerning",)) == "obedience"
    assert readable("TREASURE", ("1. A thing of value", "Hoarding of")) == "treasure: a thing of value: hoarding of"


def _load(url, cache, use_live=False):
    return materialize([naves_archive, nave_index], raise_on_error=False, resources={
        "postgres": PostgresResource(url=url), "sources": SourcesResource(cache_dir=str(cache), use_live=use_live)})


def _state(url):
    with connect(url) as conn:
        return conn.execute("SELECT (SELECT count(*) FROM nave_topics), (SELECT count(*) FROM nave_passages),"
                            " (SELECT count(*) FROM nave_links)").fetchone()


def _failure(result) -> str:
    return "\n".join(str(e.event_specific_data.error) for e in result.all_events if e.is_step_failure)


def test_gated_load_keeps_previous_rows(db_url, tmp_path, monkeypatch):
    result = _load(db_url, tmp_path / "cache")
    assert result.success
    meta = {m.asset_key.path[-1]: m.metadata for m in result.asset_materializations_for_node("nave_index")}
    assert meta["nave_topics"]["subjects"].value == 5319
    assert meta["nave_passages"]["rejects"].value == len(parse_naves(io.StringIO(real_text(), newline="")).report.rejects)
    good = _state(db_url)
    with connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM nave_passages p JOIN nave_topics t ON t.id = p.topic_id WHERE"
                            " t.subject = 'AFFLICTIONS AND ADVERSITIES' AND t.label = 'PRAYER IN' AND p.start_id = %s"
                            " AND p.end_id = %s", (verse_id(19, 88, 9), verse_id(19, 88, 14))).fetchone()[0] == 1

    lines = real_text().splitlines(keepends=True)
    bad_refs = csv_text(*((f"SUBJECT {i}", "-Label MRK 17:1,3,5; 1:1") for i in range(300)))  # 900 rejects, 1.2 %
    cases = {
        "truncated gzip": (gzip.compress("".join(lines).encode())[:40_000], "Compressed file ended"),
        "reject gate": (gzip.compress((("".join(lines)) + bad_refs.split("\n", 1)[1]).encode()), "references rejected"),
        "shrinks > 20%": (gzip.compress("".join(lines[:3000]).encode()), "shrink the table"),
    }
    for name, (payload, message) in cases.items():
        src = tmp_path / f"{name.replace(' ', '_')}.csv.gz"
        src.write_bytes(payload)
        monkeypatch.setenv("CITEBIBLE_NAVES_URL", src.as_uri())
        result = _load(db_url, tmp_path / "cache", use_live=True)
        assert not result.success, name
        assert message in _failure(result), (name, _failure(result)[-400:])
        assert _state(db_url) == good, name

    # a checksum mismatch never replaces the cached copy, and the tables stay
    monkeypatch.setenv("CITEBIBLE_NAVES_URL", REAL.as_uri())
    monkeypatch.setenv("CITEBIBLE_NAVES_SHA256", "0" * 64)
    result = _load(db_url, tmp_path / "cache", use_live=True)
    assert not result.success and "sha256" in _failure(result).lower()
    assert _state(db_url) == good


def test_naves_joins_the_themes_by_name_and_adds_need_subjects_of_its_own():
    from citebible_pipeline.gold.access import TrainingNavePassage, TrainingPassage
    from citebible_pipeline.themes.vocabulary import (NAVE_WEIGHT, PASTORAL_NAVE_WEIGHT, PastoralTheme,
                                                      build_vocabulary, nave_entries, nave_subjects)

    def nave(eid, subject, path, s):
        return TrainingNavePassage(eid, readable(subject, path), subject, path, s, s)

    rows = [nave(1, "ANGER", ("Forbidden",), 10), nave(2, "ANGER", ("Slow to",), 11),
            nave(3, "WATCHMAN", ("On towers",), 20), nave(4, "WATCHMAN", ("Figurative",), 21), nave(5, "WATCHMAN", (), 22),
            nave(6, "SHAMGAR", ("A judge",), 30), nave(7, "SHAMGAR", (), 31), nave(8, "SHAMGAR", ("Kills",), 32),
            nave(9, "FASTING", ("Instances of", "Moses"), 40),
            nave(10, "HOSPITALITY", ("Commanded",), 50), nave(11, "HOSPITALITY", (), 51), nave(12, "HOSPITALITY", ("x",), 52)]
    subjects = nave_subjects(rows, names=frozenset({"shamgar"}))
    assert set(subjects) == {"anger", "watchman", "hospitality"}  # a name and an instance list are not needs
    votes = [TrainingPassage("anger", 10, 10, 50, None), TrainingPassage("anger", 12, 12, 100, None),
             TrainingPassage("anger", 13, 13, 10, None)]
    lament = PastoralTheme(id="lament", name="lament", rewrite="r", cues=("why God",), topics=("anger", "tears"),
                           naves=("Watchman: On towers", "hospitality", "despondency"))
    entries = nave_entries(rows, names=frozenset({"shamgar"}))
    assert set(entries["watchman: on towers"]) == {(20, 20)} and set(entries["watchman"]) == {(20, 20), (21, 21), (22, 22)}
    themes, report = build_vocabulary(votes, [lament], subjects, heldout_keys=frozenset({"hospitality"}), entries=entries)
    by_key = {t.key: t for t in themes}
    assert set(by_key) == {"pastoral:lament", "topic:anger", "nave:watchman"}  # hospitality's key is held out
    anger = by_key["topic:anger"].passages
    assert anger[(12, 12)] == 1.0 and anger[(11, 11)] == NAVE_WEIGHT  # Nave's alone: half a top-voted passage
    assert anger[(10, 10)] == pytest.approx(1 - (1 - 0.5) * (1 - NAVE_WEIGHT))  # both sources: noisy-or
    # a pastoral theme takes OpenBible votes by its topic names and Nave's entries only by its own `naves` list:
    # ANGER's Nave's entries stay out of it, the first-level entry and the whole subject it names come in
    lament_passages = by_key["pastoral:lament"].passages
    assert (11, 11) not in lament_passages and lament_passages[(10, 10)] == 0.5 and lament_passages[(12, 12)] == 1.0
    assert set(lament_passages) - {(10, 10), (12, 12), (13, 13)} == {(20, 20), (50, 50), (51, 51), (52, 52)}
    # an entry the theme names is the need itself: a top-voted passage's weight, not a name-joined subject's half
    assert PASTORAL_NAVE_WEIGHT > NAVE_WEIGHT and lament_passages[(20, 20)] == PASTORAL_NAVE_WEIGHT
    assert report["missing_naves"] == {"lament": ["despondency"]}
    assert report["nave_subjects_joined"] == 1 and report["nave_subject_themes"] == 1


def test_a_voted_span_longer_than_any_chapter_is_not_a_passage():
    from citebible_pipeline.gold.access import TrainingPassage
    from citebible_pipeline.themes.labels import build_labels
    from citebible_pipeline.themes.vocabulary import MAX_PASSAGE_VERSES, topic_weights, within_span

    votes = [TrainingPassage("gods faithfulness", 40006001, 40019030, 18, None),  # Matthew 6:1-19:30, 510 verses
             TrainingPassage("gods faithfulness", 25003022, 25003023, 9, None),  # Lamentations 3:22-23
             TrainingPassage("gods faithfulness", 19119001, 19119176, 3, None),  # Psalm 119, the longest chapter
             TrainingPassage("gods faithfulness", 40006025, 40007029, 2, None)]  # a range across two chapters
    kept, skipped = within_span(votes, MAX_PASSAGE_VERSES)
    assert MAX_PASSAGE_VERSES == 176 and skipped == 1 and kept == votes[1:]
    # the slip no longer sets the topic's best vote: the verse voted 9 times leads the prior and the labels
    weights = topic_weights(kept)["gods faithfulness"]
    assert weights[(25003022, 25003023)] == 1.0 and (40006001, 40019030) not in weights
    assert (40006001, 40019030) not in build_labels(kept, [])[0].passages
    assert within_span(votes, 0) == (votes, 0)  # 0 reads every span, as before the seventeenth step
    from citebible_pipeline.themes.assets import ThemesConfig
    assert ThemesConfig().max_passage_verses == MAX_PASSAGE_VERSES  # the asset skips slips by default
