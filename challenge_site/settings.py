"""Settings for the challenge site, read from the environment.

Nothing set gives a working development site: SQLite in ./var/, Celery tasks run
in-process, files on local disk under ./var/. Every variable is documented in
README.md; a malformed value stops start-up with ImproperlyConfigured naming the
variable, rather than being silently replaced by a default.
"""

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name, default=None, *, required=False):
    value = os.environ.get(name, "")
    if value == "":
        if required:
            raise ImproperlyConfigured(f"{name} must be set")
        return default
    return value


def env_bool(name, default):
    value = env_str(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}"
    )


def env_int(name, default, *, minimum=None):
    value = env_str(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer; got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {number}")
    return number


def env_list(name, default=()):
    value = env_str(name)
    if value is None:
        return list(default)
    items = [item.strip() for item in value.split(",")]
    if not all(items):
        raise ImproperlyConfigured(
            f"{name} must be a comma-separated list without empty items; got {value!r}"
        )
    return items


def env_json_object(name):
    value = env_str(name)
    if value is None:
        return {}
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as error:
        raise ImproperlyConfigured(f"{name} must be a JSON object: {error}") from None
    if not isinstance(parsed, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object; got {type(parsed).__name__}")
    return parsed


def env_database(name, default):
    value = env_str(name, default)
    try:
        config = dj_database_url.parse(value, conn_max_age=600, conn_health_checks=True)
    except ValueError as error:
        raise ImproperlyConfigured(
            f"{name} is not a database URL ({error}); got {value!r}"
        ) from None
    if not config.get("ENGINE"):
        raise ImproperlyConfigured(f"{name} has an unsupported scheme; got {value!r}")
    return config


def env_storage(prefix, *, location, base_url):
    """One STORAGES entry: FileSystemStorage unless {prefix}_BACKEND names another class.

    With a backend set, {prefix}_OPTIONS (a JSON object) is passed as its options,
    e.g. STORAGE_BACKEND=storages.backends.s3.S3Storage with django-storages installed.
    """
    backend = env_str(f"{prefix}_BACKEND")
    options = env_json_object(f"{prefix}_OPTIONS")
    if backend is None:
        if options:
            raise ImproperlyConfigured(f"{prefix}_OPTIONS is set but {prefix}_BACKEND is not")
        backend = "django.core.files.storage.FileSystemStorage"
        options = {"location": str(location), "base_url": base_url}
    return {"BACKEND": backend, "OPTIONS": options}


_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_OBJECT_ACLS = {"private": "private", "none": None}


def env_s3_storages(*, spool_bytes):
    """STORAGES["default"] and ["private"] in the buckets S3_BUCKET and S3_PRIVATE_BUCKET
    (django-storages' S3Storage), or None when neither is set: a half configuration stops
    start-up rather than leaving some files on a disk that other hosts cannot read.

    Every object is private and no URL of the site leads to a bucket: files leave only
    through the site's views, which check who asks and stream them (a read spools at
    most ``spool_bytes`` in memory, the rest in a temporary file). ``url()`` gives only
    signed URLs that expire after a minute (the admin shows one to staff).
    """
    public, private = env_str("S3_BUCKET"), env_str("S3_PRIVATE_BUCKET")
    endpoint, region = env_str("S3_ENDPOINT_URL"), env_str("S3_REGION")
    acl = env_str("S3_OBJECT_ACL", "private")
    key_id, secret = env_str("AWS_ACCESS_KEY_ID"), env_str("AWS_SECRET_ACCESS_KEY")
    if (key_id is None) != (secret is None):
        raise ImproperlyConfigured("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together")
    if public is None and private is None:
        for name in ("S3_ENDPOINT_URL", "S3_REGION", "S3_OBJECT_ACL"):
            if env_str(name) is not None:
                raise ImproperlyConfigured(
                    f"{name} is set but S3_BUCKET and S3_PRIVATE_BUCKET are not"
                )
        return None
    if public is None or private is None:
        raise ImproperlyConfigured("S3_BUCKET and S3_PRIVATE_BUCKET must be set together")
    for name, bucket in (("S3_BUCKET", public), ("S3_PRIVATE_BUCKET", private)):
        if not _BUCKET.fullmatch(bucket):
            raise ImproperlyConfigured(
                f"{name} must be a bucket name (3-63 of a-z 0-9 . -); got {bucket!r}"
            )
    if public == private:
        raise ImproperlyConfigured("S3_BUCKET and S3_PRIVATE_BUCKET must be two buckets")
    for name in ("STORAGE_BACKEND", "STORAGE_OPTIONS", "PRIVATE_STORAGE_BACKEND"):
        if env_str(name) is not None:
            raise ImproperlyConfigured(f"{name} and S3_BUCKET exclude each other")
    if env_str("PRIVATE_STORAGE_OPTIONS") is not None:
        raise ImproperlyConfigured("PRIVATE_STORAGE_OPTIONS and S3_BUCKET exclude each other")
    if acl not in _OBJECT_ACLS:
        raise ImproperlyConfigured(f"S3_OBJECT_ACL must be private or none; got {acl!r}")
    if endpoint is not None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/"):
            raise ImproperlyConfigured(
                f"S3_ENDPOINT_URL must be http(s)://host[:port]; got {endpoint!r}"
            )
        if key_id is None:  # another S3 server has no instance role to fall back on
            raise ImproperlyConfigured(
                "S3_ENDPOINT_URL needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
    options = {
        "endpoint_url": endpoint,
        "region_name": region,
        # Another server (SeaweedFS, MinIO) is addressed as endpoint/bucket/key.
        "addressing_style": "path" if endpoint else None,
        "signature_version": "s3v4",
        "default_acl": _OBJECT_ACLS[acl],
        "querystring_auth": True,
        "querystring_expire": 60,
        # A name in use gets a suffix, as on disk: replacing a dataset's file deletes the
        # old name after the commit, which must not be the new file's.
        "file_overwrite": False,
        "max_memory_size": spool_bytes,
    }
    backend = "storages.backends.s3.S3Storage"
    return {
        "default": {"BACKEND": backend, "OPTIONS": {**options, "bucket_name": public}},
        "private": {"BACKEND": backend, "OPTIONS": {**options, "bucket_name": private}},
    }


# --- Core -------------------------------------------------------------------

DEBUG = env_bool("DJANGO_DEBUG", True)
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

if DEBUG:
    SECRET_KEY = env_str("SECRET_KEY", "django-insecure-development-key-never-use-in-production")
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
else:
    SECRET_KEY = env_str("SECRET_KEY", required=True)
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DJANGO_DEBUG=0")

CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_NAME = env_str("SITE_NAME", "Predictive Uncertainty Challenges")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files for /api/docs/, from static (no CDN)
    "axes",
    "csp",
    "challenge_site.accounts",
    "challenge_site.mailing",
    "challenge_site.challenges",
    "challenge_site.teams",
    "datasets",
    "challenge_site.submissions",
    "challenge_site.leaderboard",
    "challenge_site.announcements",
    "challenge_site.notifications",
    "challenge_site.console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "challenge_site.middleware.RejectNulBytesMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # 413 before reading a body declared larger than a participant may send.
    "challenge_site.middleware.DeclaredLengthLimitMiddleware",
    "challenge_site.middleware.ParticipantPreviewMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Content-Security-Policy, then (answers pass outwards, so the other way round) the
    # headers of answers that depend on who asks, then django-axes' lock-out page (last,
    # as axes requires). See "Content-Security-Policy and caching" and "Throttling" below.
    "csp.middleware.CSPMiddleware",
    "challenge_site.headers.PrivateAnswersMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "challenge_site.urls"
WSGI_APPLICATION = "challenge_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "challenge_site.context_processors.site",
            ],
        },
    },
]

if env_str("DATABASE_URL") is None:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # SQLite creates the file, not its folder.
DATABASES = {"default": env_database("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # BEGIN IMMEDIATE: a transaction takes SQLite's write lock when it starts, so
    # transactions that count and then insert (submission limits) run one at a time
    # instead of failing with "database is locked" or both passing the count.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Files ------------------------------------------------------------------
# "default": files that may be public (training data, inputs). "private": files
# no URL reaches (validation and test targets, unreleased test inputs); they
# leave the server only through views that check the challenge clock.

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_URL = env_str("MEDIA_URL", "/media/")
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
PRIVATE_ROOT = Path(env_str("PRIVATE_ROOT", str(VAR_DIR / "private")))
# Uploaded files above 2.5 MB are spooled to a temporary file, not held in memory;
# form fields other than files may total 2.5 MB; at most 20 files per request
# (a dataset's six files in the admin, one zip per submission).
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_NUMBER_FILES = 20

# WhiteNoise serves static files; in development straight from the source folders.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# S3_BUCKET and S3_PRIVATE_BUCKET put both in S3 (README.md, "Object storage"); else
# STORAGE_BACKEND / PRIVATE_STORAGE_BACKEND name any other backend; else local folders.
STORAGES = env_s3_storages(spool_bytes=FILE_UPLOAD_MAX_MEMORY_SIZE) or {
    "default": env_storage("STORAGE", location=MEDIA_ROOT, base_url=MEDIA_URL),
    "private": env_storage("PRIVATE_STORAGE", location=PRIVATE_ROOT, base_url=None),
}
STORAGES |= {
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# --- Submissions ----------------------------------------------------------------
# Limits on an uploaded zip: its own size (larger uploads are refused while they
# arrive), the sum of its members' uncompressed sizes, the ratio of the two (applied
# once the members exceed 8 MB together, so a file of repeated lines still passes)
# and the number of entries. A submission left queued or running longer than the
# timeout is queued again by the sweep; a run that was interrupted this many times
# ends as failed.

SUBMISSION_MAX_UPLOAD_BYTES = env_int("SUBMISSION_MAX_UPLOAD_BYTES", 50 * 1024 * 1024, minimum=1)
SUBMISSION_MAX_UNCOMPRESSED_BYTES = env_int(
    "SUBMISSION_MAX_UNCOMPRESSED_BYTES", 256 * 1024 * 1024, minimum=1
)
SUBMISSION_MAX_COMPRESSION_RATIO = env_int("SUBMISSION_MAX_COMPRESSION_RATIO", 100, minimum=1)
SUBMISSION_MAX_ZIP_ENTRIES = env_int("SUBMISSION_MAX_ZIP_ENTRIES", 100, minimum=1)
SUBMISSION_SCORING_TIMEOUT = env_int("SUBMISSION_SCORING_TIMEOUT", 600, minimum=10)
SUBMISSION_MAX_ATTEMPTS = env_int("SUBMISSION_MAX_ATTEMPTS", 3, minimum=1)
SUBMISSION_SWEEP_INTERVAL = env_int("SUBMISSION_SWEEP_INTERVAL", 15, minimum=1)
# A worker sent one upload also scores up to BATCH_SIZE - 1 more of its dataset queued
# behind it, their zips adding up to at most BATCH_BYTES (submissions/batches.py): under
# a backlog, what a run costs beside its evaluation is paid once per batch. 1: no batches.
SUBMISSION_BATCH_SIZE = env_int("SUBMISSION_BATCH_SIZE", 8, minimum=1)
SUBMISSION_BATCH_BYTES = env_int("SUBMISSION_BATCH_BYTES", 8 * 1024 * 1024, minimum=0)
# A running scoring attempt refreshes Submission.heartbeat_at every HEARTBEAT_INTERVAL
# seconds (submissions/heartbeat.py); once its beat is older than HEARTBEAT_STALE the
# sweep (every SWEEP_INTERVAL) and the next delivery take the run over: a worker host that
# died costs about STALE + SWEEP_INTERVAL seconds, not the whole SCORING_TIMEOUT.
SUBMISSION_HEARTBEAT_INTERVAL = env_int("SUBMISSION_HEARTBEAT_INTERVAL", 10, minimum=1)
SUBMISSION_HEARTBEAT_STALE = env_int(
    "SUBMISSION_HEARTBEAT_STALE", 3 * SUBMISSION_HEARTBEAT_INTERVAL, minimum=1
)
if SUBMISSION_HEARTBEAT_STALE < 2 * SUBMISSION_HEARTBEAT_INTERVAL:
    # One late beat (a busy machine, a slow database) must not hand a live run to another.
    raise ImproperlyConfigured(
        "SUBMISSION_HEARTBEAT_STALE must be at least twice SUBMISSION_HEARTBEAT_INTERVAL"
    )
# Memory: a scoring run in a worker's pool process may grow its address space by at most
# SUBMISSION_MAX_MEMORY_BYTES (RLIMIT_AS, set for the run only; more ends it as failed),
# and a pool process whose resident memory exceeds CELERY_WORKER_MAX_MEMORY_PER_CHILD
# (in KB, Celery's unit) after a task is replaced by a fresh one.
SUBMISSION_MAX_MEMORY_BYTES = env_int("SUBMISSION_MAX_MEMORY_BYTES", 1024**3, minimum=1)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int(
    "CELERY_WORKER_MAX_MEMORY_PER_CHILD", 1024 * 1024, minimum=1
)
# Uploads of one user found invalid or failed (any challenge, any dataset) per UTC day;
# further uploads that day are refused. Zips of invalid submissions are deleted this
# many days after they were found invalid (their error reports stay); 0: as soon as they
# are found invalid, so that invalid uploads store nothing but their reports.
SUBMISSION_MAX_REJECTED_PER_DAY = env_int("SUBMISSION_MAX_REJECTED_PER_DAY", 50, minimum=1)
SUBMISSION_INVALID_ZIP_RETENTION_DAYS = env_int(
    "SUBMISSION_INVALID_ZIP_RETENTION_DAYS", 0, minimum=0
)
# An upload over a submission limit is still checked for format problems, in the web
# request (a broken file gets its line errors, a valid one the 429): for this many
# seconds at most, well within gunicorn's 30-second request timeout.
SUBMISSION_LIMIT_CHECK_SECONDS = env_int("SUBMISSION_LIMIT_CHECK_SECONDS", 10, minimum=1)

# --- E-mail -----------------------------------------------------------------

EMAIL_HOST = env_str("EMAIL_HOST")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
    if EMAIL_USE_TLS and EMAIL_USE_SSL:
        raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on")
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "challenges@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Announcements (and published results, challenge_site.notifications) are e-mailed by a
# Celery task, this many recipients per run (one batch).
ANNOUNCEMENT_EMAIL_BATCH_SIZE = env_int("ANNOUNCEMENT_EMAIL_BATCH_SIZE", 100, minimum=1)
# Scheme and host the links of e-mails sent by Celery workers start with (notifications:
# they have no request to take it from). In production: https:// and the first host name
# of ALLOWED_HOSTS that is not a wildcard.
_SITE_HOST = next((h.lstrip(".") for h in ALLOWED_HOSTS if "*" not in h and h.strip(".")), None)
SITE_URL = env_str(
    "SITE_URL",
    "http://127.0.0.1:8000" if DEBUG or _SITE_HOST is None else f"https://{_SITE_HOST}",
).rstrip("/")
if not SITE_URL.startswith(("http://", "https://")) or "/" in SITE_URL.split("://", 1)[1]:
    raise ImproperlyConfigured(
        f"SITE_URL must be a scheme and a host, like https://challenges.example.org; got {SITE_URL!r}"
    )

# --- Security (all on when DJANGO_DEBUG=0; each can be turned off) ------------

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    # Only behind a proxy that sets X-Forwarded-Proto itself.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- Throttling -------------------------------------------------------------------
# Log-in (the site's form and the admin's): django-axes counts failed log-ins in the
# database, per user name and per client address separately. LOGIN_FAILURE_LIMIT
# failures lock that user name (from anywhere) and that address (for any user name)
# out for LOGIN_COOLOFF_MINUTES after the last failure: the right password is refused
# too, with a 429 page and Retry-After. Staff can lift a lock in the admin (Axes,
# "Access attempts") or with `manage.py axes_reset_username NAME`.
# The API (DRF throttles), sign-up and password reset are limited by rates
# "N/second|minute|hour|day" ("off": no limit), counted in Django's cache: per process
# with the default local-memory cache, for the whole site with a shared cache.
# Client addresses: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT reverse proxies that
# append to X-Forwarded-For, the address the outermost one saw (see throttling.py).

_RATE_PERIODS = ("second", "minute", "hour", "day")


def env_rate(name, default):
    """A rate such as "60/minute" (as DRF reads it), or None for "off"."""
    value = env_str(name, default)
    if value.lower() == "off":
        return None
    number, _, period = value.partition("/")
    if not (number.isdigit() and int(number) > 0 and period in _RATE_PERIODS):
        raise ImproperlyConfigured(
            f"{name} must be N/second, N/minute, N/hour or N/day (N at least 1), or off; "
            f"got {value!r}"
        )
    return value


# Django's cache: plots and leaderboard counts (keyed by each dataset's generation, so a
# score change makes them stale at once), the rate limits' counters. CACHE_URL
# (redis://host:6379/1) shares one Redis cache between every web process and host;
# unset, each process keeps its own in memory.
CACHE_URL = env_str("CACHE_URL")
if CACHE_URL and not CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    # Only the scheme: the rest may hold a password, and this message goes to the logs.
    raise ImproperlyConfigured(
        f"CACHE_URL must be a redis:// URL; got one starting {CACHE_URL.split(':', 1)[0]!r}"
    )
# Redis down: reads miss and writes are dropped (challenge_site/cache.py), after at most
# a second's wait, so an outage slows pages instead of breaking them.
CACHES = {
    "default": {
        "BACKEND": "challenge_site.cache.ResilientRedisCache",
        "LOCATION": CACHE_URL,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)

LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_COOLOFF_MINUTES = env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1)
AUTHENTICATION_BACKENDS = [
    # Refuses every log-in of a locked-out user name or address; logs no one in itself.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = True
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_COOLOFF_MINUTES)
# The (user name, address) pair is locked, never a user name alone: an attacker cannot
# lock a named user out (who still signs in from any other address), and one person's
# typos do not lock everyone behind a shared address. Addresses are throttled apart
# (RATE_LIMITS["login"]: log-in forms sent per address).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Attempts made during a lock-out are refused without being stored: the lock ends
# LOGIN_COOLOFF_MINUTES after the failure that caused it, and a client hammering a
# locked form writes nothing.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# A successful log-in does not wipe the failures (which would also wipe those of other
# user names tried from the same address).
AXES_RESET_ON_SUCCESS = False
# Failures are kept while they count (expired ones are deleted as log-ins come);
# successful log-ins are not logged (axes' AccessLog would grow with every one).
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False  # no banner at every start; failures and lock-outs are still logged
AXES_CLIENT_IP_CALLABLE = "challenge_site.throttling.axes_client_address"
AXES_LOCKOUT_CALLABLE = "challenge_site.throttling.login_locked_out"

# Read on every request (tests lower them with the settings fixture).
RATE_LIMITS = {
    # The API, per user for requests with a token or session, per address otherwise.
    "api_user": env_rate("API_THROTTLE_USER", "300/minute"),
    "api_anon": env_rate("API_THROTTLE_ANON", "120/minute"),
    # API requests that change something (today: uploads), per user, on top of the above.
    "api_upload": env_rate("API_THROTTLE_UPLOAD", "60/minute"),
    # Sign-up and password-reset forms sent (POST), per address.
    "signup": env_rate("SIGNUP_RATE", "10/hour"),
    "password_reset": env_rate("PASSWORD_RESET_RATE", "5/hour"),
    # Log-in forms sent (POST), per address, right or wrong: bounds the guesses one
    # address makes across many user names (each pair is locked after LOGIN_FAILURE_LIMIT).
    "login": env_rate("LOGIN_RATE", "60/hour"),
}

# --- Content-Security-Policy and caching ----------------------------------------------
# django-csp sends this policy with every answer: no inline script or style anywhere
# (pages load static/js and static/css only). SVG drawings (plots) are the exception:
# challenge_site/headers.py allows inline styles in them, which matplotlib writes.
# The same middleware marks every answer to a request with a session cookie, an
# Authorization header or a logged-in user "Cache-Control: private, no-store", and
# every answer "Vary: Cookie, Authorization".

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

# --- REST framework -----------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        # "Authorization: Bearer TOKEN", the same tokens (challenge_site.accounts.tokens).
        "challenge_site.accounts.tokens.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Rates: RATE_LIMITS above (api_*); a throttled request gets 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": [
        "challenge_site.throttling.UserApiThrottle",
        "challenge_site.throttling.AnonApiThrottle",
        "challenge_site.throttling.UploadApiThrottle",
    ],
    # The OpenAPI description (challenge_site/api_schema.py; docs/openapi.yaml).
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# `make schema` writes docs/openapi.yaml from this; /api/v1/schema/ serves the same.
SPECTACULAR_SETTINGS = {
    "TITLE": "Predictive uncertainty challenges API",
    "DESCRIPTION": (
        "Challenges, datasets, submissions, leaderboards and teams, as the `puc` client "
        "uses them. Authenticate with the API token of your profile page: "
        "`Authorization: Token KEY` or `Authorization: Bearer KEY`. Guide: docs/api.md."
    ),
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SCHEMA_PATH_PREFIX_TRIM": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "SplitEnum": "challenge_site.challenges.splits.Split",
        "PhaseEnum": "challenge_site.challenges.models.Phase",
        "StatusEnum": "challenge_site.submissions.models.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "challenge_site.api_schema.finish",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

# --- Celery -------------------------------------------------------------------
# Without a broker tasks run in-process (eagerly); with one, real workers do.

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(
        f"CELERY_BROKER_URL must be a redis:// URL; got {CELERY_BROKER_URL!r}"
    )
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
if CELERY_BROKER_URL is None:
    CELERY_BROKER_URL = "memory://"
CELERY_TASK_ACKS_LATE = True
# Celery closes a worker's database connection around every task unless this count is
# set; set past any worker's life, the connection is kept under Django's rules instead
# (CONN_MAX_AGE, errors, health checks: challenge_site/celery.py).
CELERY_DB_REUSE_MAX = 2**31
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# A message not acknowledged within the visibility timeout is delivered again;
# scoring runs are killed well before (SUBMISSION_SCORING_TIMEOUT + 30 s).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
if SUBMISSION_SCORING_TIMEOUT + 30 >= 3600:
    raise ImproperlyConfigured("SUBMISSION_SCORING_TIMEOUT must be below 3570 seconds")
# Queues by urgency: scoring has workers of its own (`celery … worker -Q scoring`), so
# interval runs, plots, exports and e-mail never wait in front of an upload; one
# `background` worker consumes the rest (`-Q intervals,boards,mail,celery`). Routed by
# task name, as every task is sent by name; anything unlisted goes to "celery".
CELERY_TASK_DEFAULT_QUEUE = "celery"
TASK_QUEUES = {
    "scoring": ["submissions.score", "submissions.sweep", "submissions.purge_invalid_zips"],
    "intervals": ["leaderboard.intervals", "leaderboard.sweep_intervals"],
    "boards": [
        "leaderboard.draw_plot",
        "leaderboard.build_export",
        "leaderboard.sweep_boards",
        "leaderboard.compute_statistics",
        "leaderboard.sweep_statistics",
    ],
    "mail": [
        "notifications.scoring_finished",
        "notifications.resume_results",
        "mailing.send_batch",
    ],
    # Short: it publishes the results whose time has come (and their results e-mail).
    "celery": ["challenges.publish_scheduled"],
}
CELERY_TASK_ROUTES = {
    task: {"queue": queue} for queue, tasks in TASK_QUEUES.items() for task in tasks
}
# Every queue declared: a worker started without -Q (one machine, development) consumes
# them all, instead of "celery" alone; production hosts name theirs (README).
CELERY_TASK_QUEUES = {
    queue: {"exchange": queue, "routing_key": queue}
    for queue in [*TASK_QUEUES, CELERY_TASK_DEFAULT_QUEUE]
}
# `celery -A challenge_site beat` sends these; the sweep re-queues stuck submissions. Not
# given an expiry: behind a backlog of scoring runs every sweep would expire unrun; the
# few that pile up meanwhile cost a query each.
CELERY_BEAT_SCHEDULE = {
    "sweep-submissions": {
        "task": "submissions.sweep",
        "schedule": float(SUBMISSION_SWEEP_INTERVAL),
    },
    # Deletes zips of invalid submissions older than SUBMISSION_INVALID_ZIP_RETENTION_DAYS.
    "purge-invalid-zips": {"task": "submissions.purge_invalid_zips", "schedule": 3600.0},
    # Sends the runs of bootstrap intervals that were asked for and never made it, and
    # those that waited for scoring once it is idle (leaderboard.interval_runs: a rush's
    # intervals follow it within seconds).
    "sweep-intervals": {"task": "leaderboard.sweep_intervals", "schedule": 10.0},
    # Queues again the results e-mails whose task was lost (challenge_site.notifications).
    "resume-results-emails": {"task": "notifications.resume_results", "schedule": 300.0},
    # Sends the plots (and whole-board exports) asked for and left behind (a lost task,
    # a broker that was down, a worker that died mid-drawing).
    "sweep-boards": {"task": "leaderboard.sweep_boards", "schedule": 60.0},
    # Sends the statistics computations whose task was lost (statistics_snapshots).
    "sweep-statistics": {"task": "leaderboard.sweep_statistics", "schedule": 60.0},
    # Publishes the results of challenges whose publish_results_at has come: at most a
    # minute late, as the field's help says "at the first sweep after the time".
    "publish-scheduled-results": {"task": "challenges.publish_scheduled", "schedule": 60.0},
}

# --- Logging ------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Replaces Django's default "django" logger, which would print everything twice.
    "loggers": {"django": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
