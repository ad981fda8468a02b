"""Django's Redis cache, for CACHE_URL, that a Redis outage does not turn into errors.

What the site caches (plots, counts of listed entries, rate-limit counters) can always be
computed again, so while Redis is unreachable a read is a miss and a write is dropped:
pages stay up, just slower, and the rate limits count nothing until Redis is back (the
log-in lock-out counts failures in the database and keeps working). Only connection
errors and timeouts are absorbed; anything else (a wrong command) still raises.
"""

from __future__ import annotations

import logging
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import AuthenticationError, AuthorizationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
# Subclasses of ConnectionError in redis-py, but a wrong password or ACL is a mistake in
# the settings, not an outage: absorbed, it would switch the rate limits off unseen.
MISCONFIGURED = (AuthenticationError, AuthorizationError)
# One warning per process and this many seconds, not one per request.
WARNING_INTERVAL = 60.0
_last_warning = 0.0


def _unreachable(operation: str, error: Exception) -> None:
    global _last_warning
    if isinstance(error, MISCONFIGURED):
        raise error
    now = time.monotonic()
    if now - _last_warning >= WARNING_INTERVAL:
        _last_warning = now
        logger.warning("cache unreachable (%s: %s); serving without it", operation, error)


class ResilientRedisCache(RedisCache):
    """``RedisCache`` whose reads miss and whose writes are dropped while Redis is down."""

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except UNREACHABLE as error:
            _unreachable("get", error)
            return default

    def get_many(self, keys, version=None):
        try:
            return super().get_many(keys, version)
        except UNREACHABLE as error:
            _unreachable("get_many", error)
            return {}

    def has_key(self, key, version=None):
        try:
            return super().has_key(key, version)
        except UNREACHABLE as error:
            _unreachable("has_key", error)
            return False

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().add(key, value, timeout, version)
        except UNREACHABLE as error:
            _unreachable("add", error)
            return False

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().set(key, value, timeout, version)
        except UNREACHABLE as error:
            _unreachable("set", error)
            return None

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().set_many(data, timeout, version)
        except UNREACHABLE as error:
            _unreachable("set_many", error)
            return list(data)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().touch(key, timeout, version)
        except UNREACHABLE as error:
            _unreachable("touch", error)
            return False

    def delete(self, key, version=None):
        try:
            return super().delete(key, version)
        except UNREACHABLE as error:
            _unreachable("delete", error)
            return False

    def delete_many(self, keys, version=None):
        try:
            return super().delete_many(keys, version)
        except UNREACHABLE as error:
            _unreachable("delete_many", error)
            return None

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except UNREACHABLE as error:
            # As if the key were new: a counter restarts rather than failing the request.
            _unreachable("incr", error)
            return delta

    def clear(self):
        try:
            return super().clear()
        except UNREACHABLE as error:
            _unreachable("clear", error)
            return False
