from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.decorators import api_view
from rest_framework.response import Response

from challenge_site.throttling import rate_limited

from .forms import ProfileForm, SignUpForm
from .services import existing_token, profile_for, regenerate_token


@rate_limited("signup", title="Too many sign-ups", what="sign-up forms sent")
@require_http_methods(["GET", "POST"])
def signup(request):
    if request.user.is_authenticated:
        return redirect("profile")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}: your account is ready.")
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


# Every request sends an e-mail: limited per address (PASSWORD_RESET_RATE).
password_reset = rate_limited(
    "password_reset", title="Too many password resets", what="password-reset requests"
)(auth_views.PasswordResetView.as_view())


# Log-in forms sent per address (LOGIN_RATE), on top of django-axes' lock of each
# (user name, address) pair after LOGIN_FAILURE_LIMIT wrong passwords.
login_view = rate_limited("login", title="Too many log-ins", what="log-in forms sent")(
    auth_views.LoginView.as_view()
)


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    form = ProfileForm(request.POST or None, instance=profile_for(request.user))
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Profile saved.")
        return redirect("profile")
    context = {"form": form, "token": existing_token(request.user)}
    return render(request, "accounts/profile.html", context)


@login_required
@require_POST
def token_regenerate(request):
    had_one = existing_token(request.user) is not None
    regenerate_token(request.user)
    if had_one:
        messages.success(request, "New API token created; the previous one no longer works.")
    else:
        messages.success(request, "API token created: use it with `puc login` or the API.")
    return redirect("profile")


@api_view(["GET"])
def api_me(request):
    """Who the request authenticates as: lets participants test their API token."""
    profile = profile_for(request.user)
    return Response(
        {
            "username": request.user.get_username(),
            "display_name": profile.display_name,
            "affiliation": profile.affiliation,
        }
    )
