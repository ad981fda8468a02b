from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from challenge_site.mailing.unsubscribe import InvalidToken, masked

from . import emails


# The signed token is the credential, not a session: a mail program's one-click POST
# (RFC 8058, "List-Unsubscribe=One-Click") carries no CSRF token, and a forged request
# would need the token, which only the recipient's e-mail holds.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request, token):
    """The link of every notification e-mail, for its kind. GET shows a button (mail
    scanners follow links); POST turns the kind off, or on again with action=resubscribe."""
    try:
        user_id, kind = emails.read_token(token)
    except InvalidToken:
        return render(request, "notifications/unsubscribe_invalid.html", status=400)
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        return render(request, "notifications/unsubscribe_invalid.html", {"gone": True}, status=404)
    if request.method == "POST":
        if request.POST.get("List-Unsubscribe") == "One-Click":
            emails.set_subscribed(user=user, kind=kind, on=False)
            return HttpResponse("Unsubscribed.\n", content_type="text/plain; charset=utf-8")
        emails.set_subscribed(user=user, kind=kind, on=request.POST.get("action") == "resubscribe")
        return redirect(request.path)
    context = {
        "kind": kind,
        "address": masked(user.email),
        "subscribed": emails.is_subscribed(user, kind=kind),
    }
    return render(request, "notifications/unsubscribe.html", context)
