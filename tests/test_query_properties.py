"""Property tests: any string gives a result or the documented error, nothing else."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citebible_pipeline.bible.canon import books
from citebible_pipeline.bible.references import ReferenceError, find_references, parse_reference
from citebible_pipeline.query.analyze import analyze, validate
from citebible_pipeline.query.models import QueryValidationError

NAMES = [b.name for b in books()] + [a for b in books() for a in b.abbreviations]
refish = st.builds(
    lambda book, c, v, sep, end: f"{book} {c}{sep}{v}{end}",
    st.sampled_from(NAMES), st.integers(-5, 200), st.integers(-5, 200), st.sampled_from([":", ".", " ", ""]),
    st.sampled_from(["", "-3", "-2:4", "\u20135", "-", ":"]),
)
anything = st.one_of(st.text(max_size=300), refish, st.from_regex(r"[0-9\-\.: ]{0,20}", fullmatch=True))
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(anything)
def test_reference_parser_returns_a_valid_reference_or_reference_error(text):
    try:
        ref = parse_reference(text)
    except ReferenceError:
        return
    assert ref.start_id <= ref.end_id
    assert ref.book.order == ref.start_id // 1_000_000 == ref.end_id // 1_000_000
    assert parse_reference(ref.format()).start_id == ref.start_id  # the formatted form parses back


@SETTINGS
@given(anything)
def test_find_references_never_raises(text):
    for ref in find_references(text):
        assert ref.start_id <= ref.end_id


@SETTINGS
@given(st.one_of(anything, st.text(alphabet=st.characters(), max_size=700)))
def test_analyze_returns_an_analysis_or_a_validation_error(text):
    try:
        clean = validate(text)
    except QueryValidationError as exc:
        assert str(exc)
        return
    a = analyze(clean)
    assert a.query_type in ("reference", "search", "statement")
    assert 0.0 <= a.pastoral_score <= 1.0
    if a.query_type == "reference":
        assert bool(a.references) != bool(a.reference_error)
    assert (a.query_type == "statement") == bool(a.refused)
