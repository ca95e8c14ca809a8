"""The ruler: gold queries with graded passages, the held-out split, metrics and the evaluation run."""
