"""query.duty (pure): Nave's duty labels, a passage's duty share, the lift read from the themes, and the weighing."""

import numpy as np

from citebible_pipeline.query import duty
from citebible_pipeline.query.fuse import Candidate

A, B, C = 58013017, 47001003, 19034018  # Hebrews 13:17, 2 Corinthians 1:3, Psalm 34:18


def span(*ids):
    return np.array(ids, np.int64), np.array(ids, np.int64), np.ones(len(ids))


def test_a_duty_label_is_a_naves_subentry_whose_last_segment_names_a_duty():
    assert duty.is_duty("church: duty of, to ministers") and duty.is_duty("commandments: precepts of paul")
    assert duty.is_duty("citizens: duties of") and duty.is_duty("creditor: laws concerning")
    assert not duty.is_duty("law: temporary")  # the subject names the law; the entry is not a duty
    assert not duty.is_duty("afflictions and adversities: consolation in")
    assert not duty.is_duty("obeying the law")  # an OpenBible topic name (no colon) is never a Nave's sub-entry


def test_the_duty_share_counts_the_naves_labels_touching_a_span():
    texts = ["church: duty of, to ministers", "minister, christian: duties of", "reverence: for servants of god",
             "afflictions and adversities: consolation in", "obedience"]
    index = duty.build(texts, [span(A), span(A), span(A), span(B, C), span(A, B, C)])
    shares = index.shares([A, C, C], [A, B, A])
    # a label's separate stretches count apart (Psalm 34:18 and 2 Corinthians 1:3 both lie in the third span); the
    # OpenBible name ("obedience") counts on neither side
    assert np.allclose(shares, [2 / 3, 0.0, 2 / 5])
    assert np.allclose(duty.build([], []).shares([A], [A]), [0.0])


def test_the_lift_is_how_much_less_the_pastoral_needs_lean_on_duties_and_a_duty_passage_loses_to_help():
    index = duty.build(["church: duty of, to ministers", "afflictions and adversities: consolation in"],
                       [span(A), span(B, C)])
    lift = duty.lift(index, ["pastoral", "topic"], [span(A, B, C, C), span(A, B)], power=1.0)
    assert np.isclose(lift, (1 / 4) / (1 / 2))
    assert duty.lift(index, ["pastoral"], [span(A)]) == 1.0  # one side only: no evidence, no weight
    cands = [Candidate(A, A, "verse", score=1.0), Candidate(C, C, "verse", score=0.9), Candidate(B, B, "verse", score=0.4)]
    out = duty.weigh(cands, index, lift)
    assert [c.start for c in out] == [C, A, B] and np.isclose(out[1].score, 0.5)
    assert duty.weigh([Candidate(A, A, "verse", score=1.0)], index, 1.0)[0].score == 1.0
