"""The retention and risk–coverage pictures of a split whose plot data has a ``retention``
(spec §8), with their numbers as tables: ``{% selective_figures entry submission %}`` on a
submission's page."""

from django import template
from django.utils import timezone

from challenge_site.challenges import policy
from challenge_site.submissions import selective_plots

register = template.Library()


@register.inclusion_tag("submissions/_selective_figures.html", takes_context=True)
def selective_figures(context, entry, submission) -> dict:
    """``entry``: a visibility.SplitScores whose result the user may see; the curves only
    once the split's targets are out (policy.selective_visible: before, they would give the
    hidden targets away one example at a time)."""
    challenge = submission.dataset.challenge
    user = context["request"].user
    if not policy.selective_visible(challenge, entry.split, user=user, now=timezone.now()):
        return {"shown": False}
    return {
        **selective_plots.figures(entry.result.plot_data),
        "entry": entry,
        "submission": submission,
        "shown": True,
    }
