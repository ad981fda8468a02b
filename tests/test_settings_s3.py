"""S3_BUCKET and S3_PRIVATE_BUCKET put both storages in S3; half a configuration stops
start-up. (tests/stack/test_s3.py runs the site on a real S3 server.)"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from challenge_site.settings import env_s3_storages

ROOT = Path(__file__).resolve().parent.parent
S3 = "storages.backends.s3.S3Storage"
KEYS = {"AWS_ACCESS_KEY_ID": "site", "AWS_SECRET_ACCESS_KEY": "s3cr3t-s3cr3t"}
SEAWEED = {
    "S3_ENDPOINT_URL": "http://s3:8333",
    "S3_BUCKET": "challenge-files",
    "S3_PRIVATE_BUCKET": "challenge-private",
    **KEYS,
}
NAMES = (
    "S3_",
    "AWS_",
    "STORAGE_BACKEND",
    "STORAGE_OPTIONS",
    "PRIVATE_STORAGE_BACKEND",
    "PRIVATE_STORAGE_OPTIONS",
)


@pytest.fixture
def env(monkeypatch):
    """Sets the given variables, with every other storage variable unset."""
    for key in list(os.environ):
        if key.startswith(NAMES):
            monkeypatch.delenv(key)

    def set_env(values):
        for key, value in values.items():
            monkeypatch.setenv(key, value)

    return set_env


def test_no_bucket_leaves_the_storages_to_the_other_settings(env):
    env(KEYS)  # keys alone may serve STORAGE_BACKEND=…S3Storage
    assert env_s3_storages(spool_bytes=1024) is None


def test_buckets_put_default_and_private_files_in_s3_privately(env):
    env(SEAWEED)
    storages = env_s3_storages(spool_bytes=1024)
    assert set(storages) == {"default", "private"}
    default, private = storages["default"], storages["private"]
    assert default["BACKEND"] == private["BACKEND"] == S3
    assert default["OPTIONS"]["bucket_name"] == "challenge-files"
    assert private["OPTIONS"]["bucket_name"] == "challenge-private"
    for options in (default["OPTIONS"], private["OPTIONS"]):
        assert options["endpoint_url"] == "http://s3:8333"
        assert options["addressing_style"] == "path"
        assert options["default_acl"] == "private"
        # Only signed URLs, valid for a minute; names never overwritten; reads spooled.
        assert options["querystring_auth"] is True and options["querystring_expire"] == 60
        assert options["file_overwrite"] is False
        assert options["max_memory_size"] == 1024
        assert "access_key" not in options  # boto3 reads the keys from the environment


def test_aws_itself_needs_no_endpoint_nor_keys(env):
    env({"S3_BUCKET": "a-files", "S3_PRIVATE_BUCKET": "a-private", "S3_REGION": "eu-west-1"})
    options = env_s3_storages(spool_bytes=1)["private"]["OPTIONS"]
    assert options["endpoint_url"] is None and options["addressing_style"] is None
    assert options["region_name"] == "eu-west-1"


def test_object_acl_none_sends_no_acl(env):
    env({**SEAWEED, "S3_OBJECT_ACL": "none"})  # buckets whose ACLs are disabled
    assert env_s3_storages(spool_bytes=1)["default"]["OPTIONS"]["default_acl"] is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"S3_BUCKET": "files"}, "S3_BUCKET and S3_PRIVATE_BUCKET must be set together"),
        ({"S3_PRIVATE_BUCKET": "files"}, "S3_BUCKET and S3_PRIVATE_BUCKET must be set together"),
        (
            {**SEAWEED, "S3_PRIVATE_BUCKET": "challenge-files"},
            "S3_BUCKET and S3_PRIVATE_BUCKET must be two buckets",
        ),
        ({**SEAWEED, "S3_BUCKET": "Files_1"}, "S3_BUCKET must be a bucket name"),
        ({**SEAWEED, "S3_PRIVATE_BUCKET": "ab"}, "S3_PRIVATE_BUCKET must be a bucket name"),
        (
            {"S3_ENDPOINT_URL": "http://s3:8333"},
            "S3_ENDPOINT_URL is set but S3_BUCKET and S3_PRIVATE_BUCKET are not",
        ),
        ({"S3_REGION": "eu-west-1"}, "S3_REGION is set but S3_BUCKET"),
        (
            {k: v for k, v in SEAWEED.items() if not k.startswith("AWS_")},
            "S3_ENDPOINT_URL needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        ),
        (
            {k: v for k, v in SEAWEED.items() if k != "AWS_SECRET_ACCESS_KEY"},
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together",
        ),
        ({**SEAWEED, "S3_ENDPOINT_URL": "s3:8333"}, "S3_ENDPOINT_URL must be http(s)://"),
        ({**SEAWEED, "S3_ENDPOINT_URL": "http://s3:8333/x"}, "S3_ENDPOINT_URL must be http"),
        ({**SEAWEED, "S3_OBJECT_ACL": "public-read"}, "S3_OBJECT_ACL must be private or none"),
        (
            {**SEAWEED, "STORAGE_BACKEND": S3},
            "STORAGE_BACKEND and S3_BUCKET exclude each other",
        ),
        (
            {**SEAWEED, "PRIVATE_STORAGE_OPTIONS": "{}"},
            "PRIVATE_STORAGE_OPTIONS and S3_BUCKET exclude each other",
        ),
    ],
)
def test_half_a_configuration_fails_loudly(env, values, message):
    env(values)
    with pytest.raises(ImproperlyConfigured) as error:
        env_s3_storages(spool_bytes=1)
    assert message in str(error.value)


PROBE = """
import json, django
django.setup()
from django.core.files.storage import storages
print(json.dumps({
    alias: [type(storages[alias]).__name__, storages[alias].bucket_name,
            storages[alias].default_acl, storages[alias].max_memory_size]
    for alias in ("default", "private")
}))
"""


def _run(args, values, tmp_path):
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith((*NAMES, "DJANGO_", "DATABASE_URL", "CELERY_", "VAR_DIR"))
    }
    clean |= {
        "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
        "VAR_DIR": str(tmp_path / "var"),
        **values,
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def test_the_site_builds_both_s3_storages(tmp_path):
    result = _run(["-c", PROBE], SEAWEED, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "default": ["S3Storage", "challenge-files", "private", 2_621_440],
        "private": ["S3Storage", "challenge-private", "private", 2_621_440],
    }


def test_a_half_configuration_stops_manage_py(tmp_path):
    result = _run(["manage.py", "check"], {"S3_BUCKET": "challenge-files"}, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "S3_BUCKET and S3_PRIVATE_BUCKET must be set together" in result.stderr
