"""Parse all 66 WEB books with our parser and with usfm-grammar, same files, same run; print the ratio.

Target (issue 3): ours at least 20x faster. usfm-grammar is run once (it takes tens of seconds);
ours is run 3 times and the best time is used.
"""

from __future__ import annotations

import time

from citebible_pipeline.bible.corpus import iter_usfm_files, parse_book
from citebible_pipeline.sources.datasets import DATASETS

ARCHIVE = DATASETS["web_usfm"].bundled_path


def main() -> None:
    from usfm_grammar import Filter, USFMParser

    files = list(iter_usfm_files(ARCHIVE))
    ours = []
    for _ in range(3):
        t = time.perf_counter()
        n_ours = sum(len(parse_book(name, book, data)) for name, book, data in files)
        ours.append(time.perf_counter() - t)
    t = time.perf_counter()
    n_theirs = 0
    for _name, _book, data in files:
        rows = USFMParser(data.decode()).to_list(include_markers=Filter.BCV + Filter.TEXT, ignore_errors=True)
        n_theirs += sum(1 for r in rows[1:] if r[4] == "verse")
    theirs = time.perf_counter() - t
    best = min(ours)
    print(f"books: {len(files)}")
    print(f"ours:         {n_ours:,} verses in {best:.3f}s  ({n_ours / best:,.0f} verses/s; runs {', '.join(f'{x:.3f}' for x in ours)})")
    print(f"usfm-grammar: {n_theirs:,} verses in {theirs:.3f}s  ({n_theirs / theirs:,.0f} verses/s)")
    print(f"speed ratio (usfm-grammar time / ours): {theirs / best:.1f}x  (target >= 20x)")


if __name__ == "__main__":
    main()
