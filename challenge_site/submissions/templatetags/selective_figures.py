"""The retention and risk–coverage pictures of a split whose plot data has a ``retention``
(spec §8), with their numbers as tables: ``{% selective_figures entry submission %}`` on a
submission's page."""

from django import template

from challenge_site.submissions import selective_plots

register = template.Library()


@register.inclusion_tag("submissions/_selective_figures.html")
def selective_figures(entry, submission) -> dict:
    """``entry``: a visibility.SplitScores whose result the user may see."""
    return {
        **selective_plots.figures(entry.result.plot_data),
        "entry": entry,
        "submission": submission,
    }
