"""Situation-level wounds: the reader sentences helpers wrote for the pastoral needs, each with the passages
judged to wound that reader (themes/judged_wounds.csv: every judged row, with its review). A need's `avoid:` list
holds only the rows a second reader kept as wounding a typical reader of the need; the rest wound one situation (a
"waters" verse to a parent whose child drowned, "pay what you vow" to a debtor who vowed a tithe), so they apply only
to a sentence near the one they were judged for (query.harm.near_situations). Read from the CSV at build time (pure);
query.startup reads back the tables the vocabulary writes."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from importlib import resources

from citebible_pipeline.bible.references import parse_reference


@dataclass
class Situation:
    need: str
    sentence: str
    avoid: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, why)


def load_situations(text: str | None = None, needs: set[str] | None = None) -> list[Situation]:
    """One Situation per distinct sentence, its judged spans in file order; a bad row raises naming its line."""
    if text is None:
        text = resources.files("citebible_pipeline.themes").joinpath("judged_wounds.csv").read_text(encoding="utf-8")
    out: dict[str, Situation] = {}
    for line, row in enumerate(csv.DictReader(text.splitlines()), start=2):
        sentence, need = " ".join(row["sentence"].split()), row["need"].strip()
        if not sentence or not row["reason"].strip():
            raise ValueError(f"judged_wounds.csv line {line}: a row needs its sentence and its reason")
        if needs is not None and need not in needs:
            raise ValueError(f"judged_wounds.csv line {line}: unknown need {need!r}")
        try:
            ref = parse_reference(row["ref"])
        except ValueError as e:
            raise ValueError(f"judged_wounds.csv line {line}: {row['ref']!r} does not resolve: {e}") from e
        s = out.setdefault(sentence, Situation(need, sentence))
        if all((a, b) != (ref.start_id, ref.end_id) for a, b, _ in s.avoid):
            s.avoid.append((ref.start_id, ref.end_id, " ".join(row["reason"].split())))
    return list(out.values())
