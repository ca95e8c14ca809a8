"""The step-back layer: need-level pastoral themes and training-side topic names, their cues and the
human-vote prior of each (build side; the query module reads the tables)."""
