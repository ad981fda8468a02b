from django import template

from challenge_site.challenges import participation as services

register = template.Library()


@register.simple_tag(takes_context=True)
def participation_standing(context, challenge):
    """``{% participation_standing challenge as standing %}``: where the user stands in
    ``challenge`` (participation.Standing), for the status box on the challenge's page."""
    return services.standing(challenge=challenge, user=context["request"].user)
