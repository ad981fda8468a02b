"""Rate limits, and their 429 answers with Retry-After.

- Log-in (the site's form and the admin's): django-axes, configured in settings.py
  ("Throttling"); :func:`login_locked_out` is its lock-out page.
- The API: DRF throttles per user (token or session) and per client address for
  anonymous requests, and one for uploads; DRF answers 429 with Retry-After.
- Sign-up and password reset: :func:`rate_limited`, per client address.

Rates come from ``settings.RATE_LIMITS`` ("N/second|minute|hour|day", or None for no
limit), read on every request. The counts of the last two live in Django's cache (per
process with the local-memory cache, for the whole site with a shared one); axes keeps
its failures in the database.
"""

import ipaddress
import math
import time
from functools import wraps

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off, get_failure_limit
from django.conf import settings
from django.core.cache import cache
from django.db.models import Max, Sum
from django.shortcuts import render
from django.utils import timezone
from rest_framework import throttling
from rest_framework.permissions import SAFE_METHODS

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def client_address(request) -> str:
    """The address a client is counted by.

    REMOTE_ADDR, or behind ``TRUSTED_PROXY_COUNT`` reverse proxies the address the
    outermost proxy saw: the n-th entry of X-Forwarded-For from the right (a client can
    only prepend forged entries on the left). A malformed entry falls back to REMOTE_ADDR.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if not proxies:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if not forwarded:
        return remote
    candidate = forwarded[-min(proxies, len(forwarded))]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """(requests, seconds) of a rate such as "10/hour"; None for no limit."""
    if rate is None:
        return None
    number, _, period = rate.partition("/")
    return int(number), PERIODS[period[0]]


def wait_text(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


def too_many_requests(request, *, title: str, message: str, retry_after: int, status=429):
    """The 429 page: what was limited, when to try again; Retry-After in seconds."""
    retry_after = max(1, math.ceil(retry_after))
    response = render(
        request,
        "accounts/too_many_requests.html",
        {"title": title, "message": message, "wait": wait_text(retry_after)},
        status=status,
    )
    response["Retry-After"] = str(retry_after)
    return response


# --- Forms: sign-up and password reset -----------------------------------------------


def hit(scope: str, ident: str) -> int | None:
    """Count one request of ``ident`` against the rate of ``scope``.

    None if allowed (and counted); otherwise the seconds until the oldest counted
    request leaves the window (refused requests are not counted).
    """
    limit = parse_rate(settings.RATE_LIMITS.get(scope))
    if limit is None:
        return None
    number, duration = limit
    key = f"ratelimit:{scope}:{ident}"
    now = time.time()
    history = [moment for moment in cache.get(key, []) if moment > now - duration]
    if len(history) >= number:
        return max(1, math.ceil(history[-number] + duration - now))
    history.append(now)
    cache.set(key, history, duration)
    return None


def rate_limited(scope: str, *, title: str, what: str, methods=("POST",)):
    """Limit a view's ``methods`` requests per client address to the rate of ``scope``.

    Over the limit: the 429 page, "Too many {what} from your address …", and Retry-After.
    """

    def decorator(view):
        @wraps(view)
        def limited(request, *args, **kwargs):
            if request.method in methods:
                wait = hit(scope, client_address(request))
                if wait is not None:
                    number, duration = parse_rate(settings.RATE_LIMITS[scope])
                    per = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}[duration]
                    message = (
                        f"Too many {what} from your address: at most {number} per {per}. "
                        f"Please try again in {wait_text(wait)}."
                    )
                    return too_many_requests(
                        request, title=title, message=message, retry_after=wait
                    )
            return view(request, *args, **kwargs)

        return limited

    return decorator


# --- Log-in: django-axes ----------------------------------------------------------------


def axes_client_address(request) -> str | None:
    return client_address(request) or None


def _seconds_locked(request, credentials) -> int:
    """Until the lock of this request ends: the latest failure of every parameter (user
    name, address) over the limit, plus the cool-off. The whole cool-off if unknown."""
    cool_off = get_cool_off(request)
    full = int(cool_off.total_seconds())
    try:
        handler = AxesProxyHandler.get_implementation()
        attempt_sets = handler.get_user_attempts(request, credentials)
        limit = get_failure_limit(request, credentials)
        ends = []
        for attempts in attempt_sets:
            found = attempts.aggregate(
                failures=Sum("failures_since_start"), last=Max("attempt_time")
            )
            if (found["failures"] or 0) >= limit and found["last"] is not None:
                ends.append(found["last"] + cool_off)
    except (AttributeError, TypeError):  # a handler without database attempts
        return full
    if not ends:
        return full
    return max(1, min(full, math.ceil((max(ends) - timezone.now()).total_seconds())))


def login_locked_out(request, original_response=None, credentials=None):
    """django-axes' answer to a log-in while the user name or the address is locked out."""
    wait = _seconds_locked(request, credentials)
    limit = settings.AXES_FAILURE_LIMIT
    cool_off = wait_text(int(get_cool_off(request).total_seconds()))
    message = (
        f"Too many failed log-ins: after {limit} wrong passwords for a user name from one "
        f"address, its log-ins from that address are refused for {cool_off}, even with the "
        f"right password. Please try again in {wait_text(wait)}, or reset your password."
    )
    return too_many_requests(
        request, title="Log-in locked for a while", message=message, retry_after=wait
    )


# --- The API: DRF throttles ----------------------------------------------------------------


class _RateFromSettings:
    """The rate of ``scope`` from settings.RATE_LIMITS (read when the throttle is made, that
    is on every request); clients counted by :func:`client_address`."""

    def get_rate(self):
        return settings.RATE_LIMITS.get(self.scope)

    def get_ident(self, request):
        return client_address(request)


class UserApiThrottle(_RateFromSettings, throttling.SimpleRateThrottle):
    """Requests with a token or a session, per user."""

    scope = "api_user"

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AnonApiThrottle(_RateFromSettings, throttling.AnonRateThrottle):
    """Requests without credentials, per client address."""

    scope = "api_anon"


class UploadApiThrottle(UserApiThrottle):
    """Requests that change something (today: uploads), per user."""

    scope = "api_upload"

    def get_cache_key(self, request, view):
        if request.method in SAFE_METHODS:
            return None
        return super().get_cache_key(request, view)
