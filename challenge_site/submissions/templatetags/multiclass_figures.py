"""The pictures of a split whose plot data has multiclass keys, with their numbers as
tables: ``{% multiclass_figures entry submission %}`` on a submission's page."""

from django import template

from challenge_site.submissions import multiclass_plots

register = template.Library()


@register.inclusion_tag("submissions/_multiclass_figures.html")
def multiclass_figures(entry, submission) -> dict:
    """``entry``: a visibility.SplitScores whose result the user may see."""
    return {
        **multiclass_plots.figures(entry.result.plot_data),
        "entry": entry,
        "submission": submission,
    }
