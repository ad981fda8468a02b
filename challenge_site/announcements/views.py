from django.contrib.auth import get_user_model
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.clock import current_phase, next_milestone
from challenge_site.challenges.policy import visible_challenges
from challenge_site.challenges.tabs import tabs_for
from challenge_site.mailing.unsubscribe import InvalidToken, masked

from . import services


@require_safe
def challenge_news(request, slug):
    """The challenge's published announcements, newest first; seen by whoever may see
    the challenge (a draft's news: its organisers only)."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    context = {
        "challenge": challenge,
        "phase": current_phase(challenge, now=now),
        "next": next_milestone(challenge, now=now),
        "active_tab": "news",
        "tabs": tabs_for(challenge, active="news", user=request.user, now=now),
        "announcements": services.published(challenge=challenge, now=now),
    }
    return render(request, "announcements/news.html", context)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request, token):
    """The link of every announcement e-mail: no login, the signed token names the user.
    GET shows a button; POST (with CSRF token) unsubscribes, or subscribes again."""
    try:
        user_id = services.user_id_for_token(token)
    except InvalidToken:
        return render(request, "announcements/unsubscribe_invalid.html", status=400)
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        return render(request, "announcements/unsubscribe_invalid.html", {"gone": True}, status=404)
    if request.method == "POST":
        if request.POST.get("action") == "resubscribe":
            services.resubscribe(user=user)
        else:
            services.unsubscribe(user=user, now=timezone.now())
        return redirect(request.path)
    context = {
        "address": masked(user.email),
        "unsubscribed": services.is_unsubscribed(user),
    }
    return render(request, "announcements/unsubscribe.html", context)
