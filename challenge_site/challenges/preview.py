"""An organiser's switch between their own view of a challenge and a participant's."""

import time

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from challenge_site.middleware import PREVIEW_SESSION_KEY, PREVIEW_STARTED_KEY

from . import policy
from .models import Challenge


@require_POST
@login_required
def toggle_preview(request, slug):
    """POST ``on=1`` to look at the challenge as a participant, ``on=0`` to stop; back to
    ``next`` (a page of this site) or the challenge page. 404 for anyone who does not
    organise the challenge."""
    challenge = get_object_or_404(Challenge, slug=slug)
    if not policy.may_preview(request.user, challenge):
        raise Http404
    ids = set(request.session.get(PREVIEW_SESSION_KEY, []))
    if request.POST.get("on") == "1":
        ids.add(challenge.pk)
        request.session[PREVIEW_STARTED_KEY] = time.time()
    else:
        ids.discard(challenge.pk)
    request.session[PREVIEW_SESSION_KEY] = sorted(ids)
    return _back(request, fallback=reverse("challenge_detail", args=[challenge.slug]))


@require_POST
@login_required
def end_previews(request):
    """POST: stop every participant's view at once (the bar on every page has this button)."""
    request.session.pop(PREVIEW_SESSION_KEY, None)
    request.session.pop(PREVIEW_STARTED_KEY, None)
    return _back(request, fallback=reverse("home"))


def _back(request, *, fallback: str) -> HttpResponseRedirect:
    """To ``next`` if it is a page of this site, else to ``fallback``."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = fallback
    return HttpResponseRedirect(target)
