from django import template

from challenge_site.challenges import participation as services

register = template.Library()


@register.simple_tag(takes_context=True)
def participation_standing(context, challenge):
    """``{% participation_standing challenge as standing %}``: where the user stands in
    ``challenge`` (participation.Standing), for the status box on the challenge's page."""
    return services.standing(challenge=challenge, user=context["request"].user)


@register.simple_tag(takes_context=True)
def participation_block(context, challenge):
    """``{% participation_block challenge as block %}``: why the user may not download
    or submit yet, in words, or None (no query when the challenge asks for nothing)."""
    return services.participation_block(challenge, user=context["request"].user)
