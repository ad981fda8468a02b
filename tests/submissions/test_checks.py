"""The system check that the scoring package's C parser is built."""

from challenge_site.submissions.checks import scoring_parser_is_compiled
from scoring import textfile


def test_no_warning_when_the_parser_is_built():
    assert textfile.compiled()
    assert scoring_parser_is_compiled(None) == []


def test_a_warning_names_the_fix_when_it_is_not(no_native):
    with no_native():
        (warning,) = scoring_parser_is_compiled(None)
    assert warning.id == "submissions.W001"
    assert "python -m scoring._build" in warning.hint
