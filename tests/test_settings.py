"""Settings come from the environment; bad values stop start-up with a clear message."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from challenge_site.settings import (
    env_bool,
    env_database,
    env_int,
    env_json_object,
    env_list,
    env_storage,
)

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, django
from django.conf import settings
django.setup()
from challenge_site.celery import app
print(json.dumps({
    "debug": settings.DEBUG,
    "engine": settings.DATABASES["default"]["ENGINE"],
    "name": str(settings.DATABASES["default"]["NAME"]),
    "eager": app.conf.task_always_eager,
    "broker": app.conf.broker_url,
    "acks_late": app.conf.task_acks_late,
    "reject_on_worker_lost": app.conf.task_reject_on_worker_lost,
    "prefetch": app.conf.worker_prefetch_multiplier,
    "storages": {k: v["BACKEND"] for k, v in settings.STORAGES.items()},
    "private_location": settings.STORAGES["private"]["OPTIONS"].get("location"),
    "email": settings.EMAIL_BACKEND,
}))
"""


def _run(args, env, tmp_path):
    ours = (
        "DJANGO_",
        "DATABASE_URL",
        "CELERY_",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "EMAIL_",
        "STORAGE_",
        "PRIVATE_",
        "SECURE_",
        "MEDIA_",
        "STATIC_ROOT",
        "VAR_DIR",
        "DEFAULT_FROM_EMAIL",
        "ANNOUNCEMENT_",
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "challenge_site.settings", "VAR_DIR": str(tmp_path / "var")}
    )
    clean.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def _probe(tmp_path, **env):
    result = _run(["-c", PROBE], env, tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_defaults_need_nothing_set(tmp_path):
    config = _probe(tmp_path)
    assert config["debug"] is True
    assert config["engine"] == "django.db.backends.sqlite3"
    assert config["name"] == str(tmp_path / "var" / "db.sqlite3")
    assert (tmp_path / "var").is_dir()
    assert config["eager"] is True and config["broker"] == "memory://"
    assert (config["acks_late"], config["reject_on_worker_lost"], config["prefetch"]) == (
        True,
        True,
        1,
    )
    assert (
        config["storages"]["default"]
        == config["storages"]["private"]
        == "django.core.files.storage.FileSystemStorage"
    )
    assert config["private_location"] == str(tmp_path / "var" / "private")
    assert config["email"] == "django.core.mail.backends.console.EmailBackend"


def test_environment_selects_postgres_redis_smtp_and_s3(tmp_path):
    config = _probe(
        tmp_path,
        DATABASE_URL="postgres://u:p@db:5432/challenges",
        CELERY_BROKER_URL="redis://redis:6379/0",
        EMAIL_HOST="smtp.example.org",
        PRIVATE_STORAGE_BACKEND="storages.backends.s3.S3Storage",
        PRIVATE_STORAGE_OPTIONS='{"bucket_name": "targets", "default_acl": "private"}',
    )
    assert config["engine"] == "django.db.backends.postgresql" and config["name"] == "challenges"
    assert config["eager"] is False and config["broker"] == "redis://redis:6379/0"
    assert config["storages"]["private"] == "storages.backends.s3.S3Storage"
    assert config["storages"]["default"] == "django.core.files.storage.FileSystemStorage"
    assert config["email"] == "django.core.mail.backends.smtp.EmailBackend"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DJANGO_DEBUG": "0"}, "SECRET_KEY must be set"),
        (
            {"DJANGO_DEBUG": "0", "SECRET_KEY": "x" * 60},
            "ALLOWED_HOSTS must be set when DJANGO_DEBUG=0",
        ),
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG must be one of 1/0"),
        ({"DATABASE_URL": "mysqlx://nope"}, "DATABASE_URL"),
        ({"CELERY_BROKER_URL": "amqp://rabbit"}, "CELERY_BROKER_URL must be a redis:// URL"),
        (
            {"EMAIL_HOST": "smtp", "EMAIL_PORT": "twenty-five"},
            "EMAIL_PORT must be an integer; got 'twenty-five'",
        ),
        ({"STORAGE_OPTIONS": '{"a": 1}'}, "STORAGE_OPTIONS is set but STORAGE_BACKEND is not"),
    ],
)
def test_bad_environment_fails_loudly(tmp_path, env, message):
    result = _run(["manage.py", "check"], env, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


def test_production_settings_pass_the_deploy_check(tmp_path):
    env = {
        "DJANGO_DEBUG": "0",
        "SECRET_KEY": "k3Y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ" * 2,
        "ALLOWED_HOSTS": "challenges.example.org",
    }
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_env_helpers_parse_and_refuse(monkeypatch):
    monkeypatch.setenv("X_BOOL", "Yes")
    monkeypatch.setenv("X_INT", "-3")
    monkeypatch.setenv("X_LIST", "a.example, b.example")
    monkeypatch.setenv("X_BAD_LIST", "a,,b")
    monkeypatch.setenv("X_JSON", "[1]")
    assert env_bool("X_BOOL", False) is True
    assert env_bool("X_UNSET", True) is True
    assert env_int("X_INT", 0) == -3
    with pytest.raises(ImproperlyConfigured, match="X_INT must be at least 0; got -3"):
        env_int("X_INT", 0, minimum=0)
    assert env_list("X_LIST") == ["a.example", "b.example"]
    with pytest.raises(
        ImproperlyConfigured, match="X_BAD_LIST must be a comma-separated list without empty items"
    ):
        env_list("X_BAD_LIST")
    with pytest.raises(ImproperlyConfigured, match="X_JSON must be a JSON object; got list"):
        env_json_object("X_JSON")
    monkeypatch.setenv("X_DB", "sqlite:////tmp/x.sqlite3")
    assert env_database("X_DB", "")["NAME"] == "/tmp/x.sqlite3"
    assert env_storage("X_STORE", location="/srv/files", base_url=None) == {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": "/srv/files", "base_url": None},
    }


SITE_URL_PROBE = "import django; from django.conf import settings; print(settings.SITE_URL)"


@pytest.mark.parametrize(
    ("env", "site_url"),
    [
        ({}, "http://127.0.0.1:8000"),
        (
            {"DJANGO_DEBUG": "0", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "*,.example.org"},
            "https://example.org",  # the first host that is not a wildcard
        ),
        ({"SITE_URL": "https://challenges.example.org/"}, "https://challenges.example.org"),
    ],
)
def test_site_url_for_links_in_emails_sent_by_workers(tmp_path, env, site_url):
    result = _run(["-c", SITE_URL_PROBE], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == site_url


@pytest.mark.parametrize("value", ["challenges.example.org", "https://example.org/challenges"])
def test_a_site_url_that_is_not_a_scheme_and_host_stops_start_up(tmp_path, value):
    result = _run(["manage.py", "check"], {"SITE_URL": value}, tmp_path)
    assert result.returncode != 0
    assert "SITE_URL must be a scheme and a host" in result.stderr


# The e-mail settings the outbox (challenge_site.mailing) sends announcements and results with.
EMAIL_PROBE = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    "backend": settings.EMAIL_BACKEND,
    "from": settings.DEFAULT_FROM_EMAIL,
    "batch": settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE,
}))
"""


def test_embedded_default_prints_emails_in_batches_of_100(tmp_path):
    result = _run(["-c", EMAIL_PROBE], {}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "backend": "django.core.mail.backends.console.EmailBackend",
        "from": "challenges@localhost",
        "batch": 100,
    }


def test_sender_and_batch_size_from_the_environment(tmp_path):
    env = {
        "EMAIL_HOST": "smtp.example.org",
        "DEFAULT_FROM_EMAIL": "News <news@example.org>",
        "ANNOUNCEMENT_EMAIL_BATCH_SIZE": "25",
    }
    result = _run(["-c", EMAIL_PROBE], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "backend": "django.core.mail.backends.smtp.EmailBackend",
        "from": "News <news@example.org>",
        "batch": 25,
    }


def test_a_batch_size_below_one_stops_start_up(tmp_path):
    result = _run(["-c", EMAIL_PROBE], {"ANNOUNCEMENT_EMAIL_BATCH_SIZE": "0"}, tmp_path)
    assert result.returncode != 0
    assert "ANNOUNCEMENT_EMAIL_BATCH_SIZE must be at least 1; got 0" in result.stderr
