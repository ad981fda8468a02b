"""Create the S3 buckets of the default and private storages where they are missing.

Run once before the site starts (docker-compose.yml's "migrate" service does); a storage
that is not S3 is left alone. With ``--wait`` the S3 server may still be starting: the
command tries again for that many seconds before giving up.
"""

import time

from django.core.files.storage import storages
from django.core.management.base import BaseCommand, CommandError

ALIASES = ("default", "private")


def _missing(error) -> bool:
    return error.response.get("Error", {}).get("Code") in {"404", "NoSuchBucket", "NotFound"}


def ensure_bucket(storage) -> bool:
    """Create ``storage``'s bucket unless it exists; whether it was created."""
    from botocore.exceptions import ClientError  # only with django-storages' S3 backend

    client = storage.connection.meta.client
    try:
        client.head_bucket(Bucket=storage.bucket_name)
        return False
    except ClientError as error:
        if not _missing(error):
            raise
    region = storage.region_name
    # us-east-1, AWS's default region, refuses a location constraint naming itself.
    place = {"CreateBucketConfiguration": {"LocationConstraint": region}}
    client.create_bucket(
        Bucket=storage.bucket_name, **(place if region and region != "us-east-1" else {})
    )
    return True


class Command(BaseCommand):
    help = "Create the S3 buckets of the default and private storages if they do not exist."

    def add_arguments(self, parser):
        parser.add_argument(
            "--wait",
            type=float,
            default=0,
            metavar="SECONDS",
            help="keep trying this long while the S3 server does not answer (default 0)",
        )

    def handle(self, *args, wait, **options):
        deadline = time.monotonic() + wait
        for alias in ALIASES:
            storage = storages[alias]
            if not hasattr(storage, "bucket_name"):
                self.stdout.write(f"{alias}: {type(storage).__name__}, no bucket to create")
                continue
            while True:
                try:
                    created = ensure_bucket(storage)
                    break
                except Exception as error:  # botocore's errors, unimported without S3
                    if time.monotonic() >= deadline:
                        raise CommandError(
                            f"{alias}: bucket {storage.bucket_name}: {error}"
                        ) from None
                    time.sleep(1)
            state = "created" if created else "exists"
            self.stdout.write(f"{alias}: bucket {storage.bucket_name} {state}")
