"""The join page (accept the rules, ask for approval) and the refusal that downloads and
submissions give to users who may not take part yet (participation_block, in participation.py)."""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from challenge_site.access import get_visible_or_404

from . import participation
from .models import Challenge
from .policy import visible_challenges


class JoinForm(forms.Form):
    accept_rules = forms.BooleanField(
        label="I accept the rules",
        error_messages={"required": "Tick “I accept the rules”: this challenge asks for it."},
    )

    def __init__(self, *args, ask_rules: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not ask_rules:
            del self.fields["accept_rules"]


def join_url(challenge: Challenge, *, back: str = "") -> str:
    """The join page, bringing the user ``back`` (a path of the site) once they may."""
    url = reverse("challenge_join", args=[challenge.slug])
    return f"{url}?{urlencode({'next': back})}" if back else url


def _next(request) -> str:
    """The ``next`` parameter if it is a path of this site, else ""."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and allowed else ""


@require_http_methods(["GET", "POST"])
def join(request, slug):
    """GET: the rules and the user's standing; POST (logged in, CSRF-checked by the
    middleware): join, accepting the rules when the challenge asks for it."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    if request.method == "POST" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    standing = participation.standing(challenge=challenge, user=request.user)
    back = _next(request)
    form = JoinForm(
        request.POST if request.method == "POST" else None,
        ask_rules=standing.needs_rules_acceptance,
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            participation.join(
                challenge=challenge,
                user=request.user,
                accept_rules=form.cleaned_data.get("accept_rules", False),
                now=now,
            )
            standing = participation.standing(challenge=challenge, user=request.user)
            if standing.waiting_for_approval:
                messages.info(
                    request, "You joined. The organisers will approve your participation."
                )
            else:
                messages.success(request, f"You joined {challenge.title}.")
            if back and standing.block is None:
                return redirect(back)
            return redirect("challenge_join", slug=challenge.slug)
        status = 400
    context = {
        "challenge": challenge,
        "standing": standing,
        "form": form,
        "next": back,
        "login_url": f"{reverse('login')}?{urlencode({'next': request.get_full_path()})}",
    }
    return render(request, "challenges/participation/join.html", context, status=status)


def refusal(request, challenge: Challenge, *, back: str) -> HttpResponse | None:
    """None if the user may download the challenge's data and submit to it; otherwise
    the answer to give: the log-in page for anonymous visitors, else a page (403) that
    says what is missing and links to the join page, which brings them ``back``."""
    reason = participation.participation_block(challenge, user=request.user)
    if reason is None:
        return None
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    context = {"challenge": challenge, "reason": reason, "join_url": join_url(challenge, back=back)}
    return render(request, "challenges/participation/required.html", context, status=403)
