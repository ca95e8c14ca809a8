import pytest

from citebible_pipeline.openbible.parse import (
    FormatError,
    parse_cross_refs,
    parse_topic_scores,
    parse_topic_votes,
)

XH = "From Verse\tTo Verse\tVotes\t#www.openbible.info CC-BY 2026-03-02\n"


def test_cross_refs_rules_and_rejects():
    lines = [
        XH,
        "Gen.1.1\tJohn.1.1\t120\n",
        "Gen.1.1\tPs.33.6-Ps.33.9\t-3\n",            # negative votes kept
        "Rom.16.26\tRom.1.5\t10\n",                  # KJV numbering -> Rom 14:25
        "3John.1.15\tJohn.15.15\t4\n",               # -> 3 John 1:14
        "2Chr.36.22\t2Chr.36.22-Ezra.1.3\t12\n",     # cross-book range: kept as an id range
        "Gen.x.1\tJohn.1.1\t5\n",                    # bad OSIS
        "Gen.1.2\tJohn.1.1\n",                       # missing column
        "Gen.1.3\tJohn.1.1\tmany\n",                 # non-integer votes
        "Hez.1.1\tJohn.1.1\t5\n",                    # unknown book
        "Ps.23.7\tJohn.1.1\t5\n",                    # verse out of range
    ]
    rows, rep = parse_cross_refs(lines, "t")
    assert rows == {
        (1001001, 43001001, 43001001): 120,
        (1001001, 19033006, 19033009): -3,
        (45014025, 45001005, 45001005): 10,
        (64001014, 43015015, 43015015): 4,
        (14036022, 14036022, 15001003): 12,
    }
    assert rep.lines == 10 and rep.remapped == 2 and rep.cross_book_ranges == 1
    assert [(r.line, r.reason) for r in rep.rejects] == [
        (7, "bad OSIS reference 'Gen.x.1'"),
        (8, "expected 3 columns, found 2"),
        (9, "votes is not an integer: 'many'"),
        (10, "bad OSIS reference 'Hez.1.1'"),
        (11, "no such verse in the WEB: 'Ps.23.7'"),
    ]
    with pytest.raises(ValueError, match=r"t: 5 of 10 lines rejected \(50.000% > 0.1%\); first: line 7"):
        rep.check()


def test_changed_header_fails_the_whole_file():
    with pytest.raises(FormatError, match=r"^t: unexpected header .From.+To.+Score.; expected columns"):
        parse_cross_refs(["From\tTo\tScore\n", "Gen.1.1\tJohn.1.1\t1\n"], "t")
    with pytest.raises(FormatError, match="expected columns"):
        parse_topic_votes([], "t")


def test_topic_votes_and_scores():
    votes, names, rep = parse_topic_votes([
        "Topic\tStart Verse ID\tEnd Verse ID\tVotes\t#Generated 2016-04-04.\n",
        "Grief \t40005004\t\t200\n",
        "grief\t19034018\t19034019\t150\n",
        "women\t45016001\t45016027\t14\n",                 # end in the moved doxology: clipped to Rom 16:25
        "church\t45016027\t\t12\n",                        # -> Rom 14:26
        "bad\t99001001\t\t3\n",
    ], "votes")
    assert votes == {("grief", 40005004, 40005004): 200, ("grief", 19034018, 19034019): 150,
                     ("women", 45016001, 45016025): 14, ("church", 45014026, 45014026): 12}
    assert names["grief"] == "Grief" and len(rep.rejects) == 1
    scores, _, rep2 = parse_topic_scores([
        "Topic\tOSIS\tQuality Score (based on percentage of votes for the passage)\t# Generated 2026-02-09.\n",
        "comfort\t2Cor.1.3-2Cor.1.4\t57\n",
        "comfort\tPs.23.4\tx\n",
    ], "scores")
    assert scores == {("comfort", 47001003, 47001004): 57}
    assert rep2.rejects[0].reason == "score is not an integer: 'x'"
