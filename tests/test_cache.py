"""CACHE_URL: one Redis cache for every web process, which a Redis outage cannot break."""

import json
import secrets
import socket

import pytest
import redis

from challenge_site import cache as resilient
from challenge_site.cache import ResilientRedisCache
from tests.test_settings import _run

REDIS_URL = "redis://127.0.0.1:6379/4"  # the machine's Redis; keys under a random prefix


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the socket is closed


def _cache(location: str) -> ResilientRedisCache:
    return ResilientRedisCache(
        location,
        {
            "KEY_PREFIX": f"test-cache-{secrets.token_hex(6)}",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        },
    )


def test_cache_url_selects_the_shared_redis_cache(tmp_path):
    probe = (
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.CACHES['default']))"
    )
    shared = json.loads(_run(["-c", probe], {"CACHE_URL": REDIS_URL}, tmp_path).stdout)
    assert shared["BACKEND"] == "challenge_site.cache.ResilientRedisCache"
    assert shared["LOCATION"] == REDIS_URL
    assert shared["OPTIONS"] == {"socket_connect_timeout": 1, "socket_timeout": 1}
    alone = json.loads(_run(["-c", probe], {}, tmp_path).stdout)
    assert alone["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_a_cache_url_that_is_not_redis_stops_start_up(tmp_path):
    url = "memcached://admin:s3cret@cache:11211"
    result = _run(["manage.py", "check"], {"CACHE_URL": url}, tmp_path)
    assert result.returncode != 0
    assert "CACHE_URL must be a redis:// URL; got one starting 'memcached'" in result.stderr
    assert "s3cret" not in result.stderr  # the start-up log never shows the password


def test_values_are_shared_between_two_clients_of_one_redis():
    """Two web processes are two cache objects on one Redis: what one stores, the other
    reads, and a counter counts for both."""
    first = _cache(REDIS_URL)
    second = ResilientRedisCache(REDIS_URL, {"KEY_PREFIX": first.key_prefix})
    try:
        first.set("plot", b"<svg/>", 30)
        assert second.get("plot") == b"<svg/>"
        assert second.get_or_set("count", lambda: 41, 30) == 41
        assert first.get_or_set("count", lambda: 0, 30) == 41
        first.add("hits", 0, 30)
        assert (first.incr("hits"), second.incr("hits")) == (1, 2)
        assert first.delete("plot") is True and second.get("plot") is None
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"{first.key_prefix}:*"):
            client.delete(key)


def test_redis_down_reads_miss_and_writes_are_dropped(caplog, monkeypatch):
    monkeypatch.setattr(resilient, "_last_warning", -1e9)
    down = _cache(f"redis://127.0.0.1:{_closed_port()}/0")
    assert down.get("plot") is None
    assert down.get("plot", "fallback") == "fallback"
    assert down.set("plot", b"<svg/>", 30) is None
    assert down.add("plot", b"<svg/>", 30) is False
    assert down.get_or_set("count", lambda: 41, 30) == 41  # computed, not cached
    assert down.get_many(["a", "b"]) == {}
    assert down.has_key("plot") is False
    assert down.incr("hits") == 1 and down.incr("hits", 5) == 5
    assert down.delete("plot") is False
    assert down.touch("plot", 30) is False
    assert down.set_many({"a": 1}, 30) == ["a"]
    assert down.delete_many(["a"]) is None
    # One warning, not one per call: a busy page would fill the log.
    warnings = [r for r in caplog.records if r.name == "challenge_site.cache"]
    assert len(warnings) == 1 and "cache unreachable (get" in warnings[0].getMessage()


def test_other_redis_errors_still_raise():
    """Only an unreachable server is absorbed: a command Redis refuses is a bug to see."""
    cache = _cache(REDIS_URL)
    client = redis.Redis.from_url(REDIS_URL)
    key = cache.make_and_validate_key("list")
    client.rpush(key, "x")  # a list where the cache expects a string
    try:
        with pytest.raises(redis.exceptions.ResponseError):
            cache.get("list")
    finally:
        client.delete(key)


def test_pages_stay_up_while_the_shared_cache_is_down(client, settings, db):
    """The throttles and plots read the cache on every request: with Redis gone they
    answer as without a cache (here: the home page and a log-in attempt)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "challenge_site.cache.ResilientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    # (Django's setting_changed handler gives the cache handler the new setting.)
    assert client.get("/").status_code == 200
    response = client.post("/accounts/login/", {"username": "nobody", "password": "wrong"})
    assert response.status_code == 200


def test_a_wrong_password_is_not_taken_for_an_outage():
    """A mistake in CACHE_URL's credentials must show, not switch the cache and the rate
    limits off behind a warning a minute."""
    wrong = _cache("redis://nobody:not-the-password@127.0.0.1:6379/4")
    with pytest.raises(redis.exceptions.AuthenticationError):
        wrong.get("plot")
