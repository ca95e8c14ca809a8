"""Small helpers that turn rows into Dagster metadata values (markdown tables, previews)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def md_table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    def cell(v) -> str:
        s = f"{v:.3f}" if isinstance(v, float) else str(v)
        return s.replace("|", "\\|").replace("\n", " ")[:120]

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)
