"""ensure_buckets: the S3 buckets of the default and private storages, created where
missing; a storage on disk is left alone, and a server that never answers is a clear
failure once the wait is over. (tests/stack/test_s3.py creates them on a real S3 server.)"""

import pytest
from django.core.management import CommandError, call_command


def test_storages_on_disk_have_no_bucket_to_create(capsys):
    call_command("ensure_buckets")
    assert capsys.readouterr().out.splitlines() == [
        "default: FileSystemStorage, no bucket to create",
        "private: FileSystemStorage, no bucket to create",
    ]


def test_an_s3_server_that_does_not_answer_fails_naming_the_bucket(settings):
    options = {
        "endpoint_url": "http://127.0.0.1:9",  # the discard port: nothing listens
        "access_key": "key",
        "secret_key": "secret",
        "region_name": "us-east-1",
        "addressing_style": "path",
    }
    backend = "storages.backends.s3.S3Storage"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": backend, "OPTIONS": {**options, "bucket_name": "files"}},
    }
    with pytest.raises(CommandError) as failed:
        call_command("ensure_buckets", "--wait", "0")
    assert str(failed.value).startswith("default: bucket files: Could not connect to the endpoint")
