"""The coverage figure of a split with quantile levels: the reported ``covP`` values read
as nominal against observed, drawn as an SVG of numbers and shown with a table."""

from types import SimpleNamespace

from django.template import Context, Template

from challenge_site.submissions.templatetags.coverage_figure import (
    SIZE,
    _x,
    _y,
    coverage_rows,
    coverage_svg,
)

PLOT = {"reported": [["tu", 0.5], ["cov90", 0.8], ["cov50", 0.55], ["covx", 0.1]], "pit": {}}


def test_rows_are_the_coverages_only_narrowest_first():
    rows = coverage_rows(PLOT)
    assert [(r["name"], r["nominal"], r["observed"]) for r in rows] == [
        ("cov50", 0.5, 0.55),
        ("cov90", 0.9, 0.8),
    ]
    assert rows[1]["gap"] == 0.8 - 0.9  # negative: the intervals are too narrow
    assert coverage_rows({"pit": {}}) == [] and coverage_rows(None) == []
    assert coverage_rows({"reported": [["tu", 0.5]]}) == []


def test_the_svg_puts_each_point_at_nominal_and_observed():
    svg = str(coverage_svg(coverage_rows(PLOT), label='Val <split> "coverage"'))
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert f'cx="{_x(0.5):.2f}" cy="{_y(0.55):.2f}"' in svg
    assert f'cx="{_x(0.9):.2f}" cy="{_y(0.8):.2f}"' in svg
    assert "cov90: nominal 90%, observed 80.0%" in svg
    assert 'aria-label="Val &lt;split&gt; &quot;coverage&quot;"' in svg  # escaped
    assert "<script" not in svg and "style=" not in svg
    # The corners: 0 % at the bottom left, 100 % at the top right, inside the square.
    assert 0 < _x(0) < _x(1) < SIZE and SIZE > _y(0) > _y(1) > 0


def test_the_tag_draws_nothing_without_coverages():
    template = Template("{% load coverage_figure %}{% coverage_figure entry %}")
    entry = SimpleNamespace(label="Validation", result=SimpleNamespace(plot_data={"pit": {}}))
    assert template.render(Context({"entry": entry})).strip() == ""
    entry.result.plot_data = PLOT
    html = template.render(Context({"entry": entry}))
    assert "<svg" in html and "<code>cov50</code>" in html and "<code>tu</code>" not in html
    assert "55.0 %" in html and "−10.0 %" not in html and "-10.0 %" in html
