"""Log-in throttling: django-axes locks each (user name, address) pair, site and admin alike;
log-in forms are limited per address apart (RATE_LIMITS["login"])."""

from datetime import timedelta

import pytest
import time_machine
from axes.models import AccessAttempt
from django.contrib.auth import SESSION_KEY
from django.urls import reverse
from django.utils import timezone

from tests.factories import make_user

PASSWORD = "a-long-Passphrase-42"
COOL_OFF = 15 * 60


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def clock():
    """Time stands still unless a test moves it (the cool-off is measured in it)."""
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def log_in(client, username, password, *, address="127.0.0.1", url=None):
    return client.post(
        url or reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=address,
    )


def logged_in(client) -> bool:
    return SESSION_KEY in client.session


def assert_locked(response, *, retry_after=COOL_OFF):
    assert response.status_code == 429
    assert int(response["Retry-After"]) == retry_after
    page = response.content.decode()
    assert "Too many failed log-ins" in page
    assert "Please try again in 15 minutes" in page or retry_after != COOL_OFF


def test_forty_wrong_passwords_then_the_right_one_is_refused(client, ada, clock):
    for _ in range(40):
        response = log_in(client, "ada", "wrong")
        assert response.status_code in (200, 429)
    response = log_in(client, "ada", PASSWORD)
    assert_locked(response)
    assert not logged_in(client)
    assert client.get(reverse("profile")).status_code == 302  # to the log-in page


def test_the_fifth_failure_locks_and_four_do_not(client, ada, clock):
    for _ in range(4):
        assert log_in(client, "ada", "wrong").status_code == 200  # the form with its error
    assert log_in(client, "ada", PASSWORD).status_code == 302
    assert logged_in(client)

    client.logout()
    response = log_in(client, "ada", "wrong")  # the fifth failure within the cool-off
    assert_locked(response)
    assert_locked(log_in(client, "ada", PASSWORD))
    assert not logged_in(client)


def test_an_attacker_cannot_lock_a_named_user_out(client, ada, clock):
    """Five wrong passwords for ada from the attacker's address lock that pair only: ada
    signs in from her own address at once, with her right password."""
    for _ in range(5):
        log_in(client, "ada", "wrong", address="10.0.0.1")
    assert_locked(log_in(client, "ada", PASSWORD, address="10.0.0.1"))
    assert not logged_in(client)
    assert log_in(client, "ada", PASSWORD, address="10.0.0.2").status_code == 302
    assert logged_in(client)


def test_failures_of_others_behind_a_shared_address_do_not_lock_it(client, ada, clock):
    for name in ("bob", "carol", "dan", "erin", "frank"):
        log_in(client, name, "guess", address="10.0.0.1")
    assert log_in(client, "ada", PASSWORD, address="10.0.0.1").status_code == 302
    assert logged_in(client)


def test_an_address_is_throttled_apart_across_user_names(client, ada, clock, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": "10/hour"}
    for index in range(10):
        assert log_in(client, f"user{index}", "guess", address="10.0.0.1").status_code == 200
    refused = log_in(client, "ada", PASSWORD, address="10.0.0.1")
    assert refused.status_code == 429
    assert "Too many log-in forms sent from your address: at most 10 per hour" in (
        refused.content.decode()
    )
    assert not logged_in(client)
    assert log_in(client, "ada", PASSWORD, address="10.0.0.2").status_code == 302


def test_the_lock_ends_after_the_cool_off(client, ada, clock):
    for _ in range(5):
        log_in(client, "ada", "wrong")
    clock.shift(timedelta(minutes=5))
    # Retry-After counts down from the last failure; refused attempts do not extend it.
    assert_locked(log_in(client, "ada", PASSWORD), retry_after=10 * 60)
    clock.shift(timedelta(minutes=9, seconds=59))
    assert_locked(log_in(client, "ada", "wrong"), retry_after=1)
    clock.shift(timedelta(seconds=2))
    assert log_in(client, "ada", PASSWORD).status_code == 302
    assert logged_in(client)


def test_attempts_during_a_lock_out_are_not_stored(client, ada, clock):
    for _ in range(5):
        log_in(client, "ada", "wrong", address="10.0.0.1")
    stored = list(AccessAttempt.objects.values_list("failures_since_start", "post_data"))
    for _ in range(20):
        log_in(client, "ada", "x" * 1000, address="10.0.0.1")
    assert list(AccessAttempt.objects.values_list("failures_since_start", "post_data")) == stored
    assert "wrong" not in stored[0][1]  # passwords are never stored


def test_the_admin_log_in_is_covered_too(client, db, clock):
    make_user("org", is_staff=True)
    url = reverse("admin:login")
    for _ in range(5):
        response = log_in(client, "org", "wrong", url=url)
        assert response.status_code in (200, 429)
    assert_locked(log_in(client, "org", PASSWORD, url=url))
    assert not logged_in(client)
    # ... and the site's form shares the count.
    assert_locked(log_in(client, "org", PASSWORD))


def test_failures_on_the_site_count_for_the_admin(client, db, clock):
    make_user("org", is_staff=True)
    for _ in range(5):
        log_in(client, "org", "wrong")
    assert_locked(log_in(client, "org", PASSWORD, url=reverse("admin:login")))


def test_limits_are_settings(client, ada, clock, settings):
    settings.AXES_FAILURE_LIMIT = 2
    log_in(client, "ada", "wrong")
    response = log_in(client, "ada", "wrong")
    assert response.status_code == 429
    assert "after 2 wrong passwords" in response.content.decode()


def test_behind_a_proxy_the_forwarded_address_counts(client, ada, clock, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for _ in range(5):
        client.post(
            reverse("login"),
            {"username": f"someone{_}", "password": "guess"},
            REMOTE_ADDR="10.9.9.9",
            HTTP_X_FORWARDED_FOR="192.0.2.1",
        )
    # Another client behind the same proxy is not locked out ...
    response = client.post(
        reverse("login"),
        {"username": "ada", "password": PASSWORD},
        REMOTE_ADDR="10.9.9.9",
        # ... whatever it forges on the left of the proxy's entry.
        HTTP_X_FORWARDED_FOR="192.0.2.1, 198.51.100.7",
    )
    assert response.status_code == 302
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"192.0.2.1"}


def test_force_login_in_tests_is_not_counted(client, ada):
    client.force_login(ada)
    assert client.get(reverse("profile")).status_code == 200
    assert not AccessAttempt.objects.exists()
