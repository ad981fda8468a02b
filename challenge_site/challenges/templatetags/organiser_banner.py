from django import template

from challenge_site.challenges import policy

register = template.Library()


@register.inclusion_tag("challenges/_organiser_banner.html", takes_context=True)
def organiser_banner(context, challenge):
    """On a challenge's pages, for its organisers: whether it is a draft, whose view this
    is (theirs or a participant's), and the switch between the two."""
    request = context.get("request")
    user = getattr(request, "user", None)
    shown = user is not None and challenge is not None and policy.may_preview(user, challenge)
    return {
        "shown": shown,
        "challenge": challenge,
        "previewing": shown and policy.previewing(user, challenge),
        "next": request.get_full_path() if request is not None else "",
        "csrf_token": context.get("csrf_token"),
    }
