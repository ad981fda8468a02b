"""The team page of a challenge (/challenges/<slug>/team/) and the invitation link.

Every change is a POST (CSRF-checked by the middleware) handled by one of the small
actions below; the page then redirects back to itself with a message (post/redirect/get).
A refusal re-renders the page with the reason and status 400.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.policy import visible_challenges

from . import api, services
from .models import Invitation, Team


class CreateForm(forms.Form):
    name = forms.CharField(max_length=80, label="Team name", strip=True)


class InviteForm(forms.Form):
    username = forms.CharField(
        max_length=150, label="Invite by user name", help_text="They accept on this page."
    )


def _page(request, challenge: Challenge, *, now, status=200, error=None, forms_=None):
    team = services.team_of(user=request.user, challenge=challenge)
    members = list(team.memberships.select_related("user__profile")) if team else []
    context = {
        "challenge": challenge,
        "team": team,
        "members": members,
        "is_full": team is not None and len(members) >= challenge.max_team_size,
        "invitations": list(
            Invitation.objects.filter(user=request.user, team__challenge=challenge)
            .select_related("team", "invited_by")
            .order_by("-created")
        ),
        "pending": list(team.invitations.select_related("user")) if team else [],
        "refusal": services.forming_refusal(challenge, now=now),
        "invite_url": request.build_absolute_uri(
            reverse("team_join", args=[challenge.slug, team.invite_code])
        )
        if team
        else "",
        "error": error,
        "create_form": CreateForm(),
        "invite_form": InviteForm(),
        **(forms_ or {}),
    }
    return render(request, "teams/team.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def team_page(request, slug):
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    if request.method == "GET":
        return _page(request, challenge, now=now)
    action = request.POST.get("action", "")
    handler = ACTIONS.get(action)
    if handler is None:
        return _page(request, challenge, now=now, status=400, error="Unknown action.")
    try:
        done, bound = handler(request, challenge, now=now)
    except services.TeamError as error:
        return _page(request, challenge, now=now, status=400, error=str(error))
    if bound is not None:  # a form with field errors, shown again
        return _page(request, challenge, now=now, status=400, forms_=bound)
    messages.success(request, done)
    return redirect("team_page", slug=challenge.slug)


def _own_team(request, challenge) -> Team:
    team = services.team_of(user=request.user, challenge=challenge)
    if team is None:
        raise services.TeamError("You are in no team of this challenge.")
    return team


def _create(request, challenge, *, now):
    form = CreateForm(request.POST)
    if not form.is_valid():
        return None, {"create_form": form}
    team = services.create(
        challenge=challenge, user=request.user, name=form.cleaned_data["name"], now=now
    )
    return f"You created the team “{team.name}”.", None


def _invite(request, challenge, *, now):
    form = InviteForm(request.POST)
    if not form.is_valid():
        return None, {"invite_form": form}
    team = _own_team(request, challenge)
    invitation = services.invite(
        team=team, by=request.user, username=form.cleaned_data["username"], now=now
    )
    return f"You invited {invitation.user.get_username()}.", None


def _respond(request, challenge, *, now):
    invitation = Invitation.objects.filter(
        pk=api.invitation_id(request.POST.get("invitation", "")),
        user=request.user,
        team__challenge=challenge,
    ).first()
    if invitation is None:
        raise services.TeamError("That invitation is no longer open.")
    accept = request.POST.get("accept") == "1"
    services.respond(invitation=invitation, user=request.user, accept=accept, now=now)
    if accept:
        return f"You joined the team “{invitation.team.name}”.", None
    return f"You declined the invitation to “{invitation.team.name}”.", None


def _new_link(request, challenge, *, now):
    services.new_link(team=_own_team(request, challenge), by=request.user, now=now)
    return "The team has a new invitation link; the old one no longer works.", None


def _leave(request, challenge, *, now):
    team = _own_team(request, challenge)
    services.leave(team=team, user=request.user, now=now)
    return f"You left the team “{team.name}”.", None


ACTIONS = {
    "create": _create,
    "invite": _invite,
    "respond": _respond,
    "new_link": _new_link,
    "leave": _leave,
}


@login_required
@require_http_methods(["GET", "POST"])
def join_by_link(request, slug, code):
    """GET: which team the link is for, and a button; POST: join it."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    team = Team.objects.filter(challenge=challenge, invite_code=code).first()
    if team is None:
        raise Http404("This invitation link is not valid (any more).")
    error, status = None, 200
    if request.method == "POST":
        try:
            services.join(team=team, user=request.user, now=now)
        except services.TeamError as refusal:
            error, status = str(refusal), 400
        else:
            messages.success(request, f"You joined the team “{team.name}”.")
            return redirect("team_page", slug=challenge.slug)
    context = {
        "challenge": challenge,
        "team": team,
        "current": services.team_of(user=request.user, challenge=challenge),
        "refusal": services.forming_refusal(challenge, now=now),
        "error": error,
    }
    return render(request, "teams/join.html", context, status=status)
