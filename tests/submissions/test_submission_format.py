"""submissions' ``submission_format`` filters: scores as people read them (∞, n/a), in
full precision where asked, shares in per cent and a test's p-value in words."""

import math

from django.template import Context, Template

from challenge_site.submissions.templatetags.submission_format import (
    p_equals,
    percent,
    score,
    score_exact,
)


def test_scores_with_four_significant_digits_infinity_and_na():
    assert [score(v) for v in (0.123456, 1234567.0, math.inf, -math.inf, None, 0.0)] == [
        "0.1235",
        "1.235e+06",
        "∞",
        "−∞",
        "n/a",
        "0",
    ]


def test_exact_scores_as_the_scoring_cli_prints_them():
    assert [score_exact(v) for v in (0.1 + 0.2, 3, math.inf, -math.inf, None)] == [
        "0.30000000000000004",
        "3.0",
        "inf",
        "-inf",
        "n/a",
    ]


def test_shares_in_per_cent_and_the_filters_in_templates():
    assert [percent(v) for v in (0.6667, 0.0, 1.0, None)] == ["66.7 %", "0.0 %", "100.0 %", "–"]
    template = Template(
        "{% load submission_format %}{{ v|score }} {{ v|score_exact }} {{ p|p_equals }}"
    )
    assert template.render(Context({"v": 0.5, "p": 0.2})) == "0.5 0.5 p = 0.20"


def test_the_test_verdict_in_words():
    assert [p_equals(p) for p in (0.41, 0.05, 0.003, 0.0004, None)] == [
        "p = 0.41",
        "p = 0.05",
        "p = 0.003",
        "p < 0.001",
        "p n/a",
    ]
