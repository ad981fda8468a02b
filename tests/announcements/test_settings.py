"""The e-mail settings announcements use, from the environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    "backend": settings.EMAIL_BACKEND,
    "from": settings.DEFAULT_FROM_EMAIL,
    "batch": settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE,
}))
"""


def probe(tmp_path, **env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "EMAIL_", "DEFAULT_FROM_EMAIL", "ANNOUNCEMENT_"))
    }
    clean.update(DJANGO_SETTINGS_MODULE="challenge_site.settings", VAR_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=clean, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


def test_embedded_default_prints_emails_in_batches_of_100(tmp_path):
    result = probe(tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "backend": "django.core.mail.backends.console.EmailBackend",
        "from": "challenges@localhost",
        "batch": 100,
    }


def test_sender_and_batch_size_from_the_environment(tmp_path):
    result = probe(
        tmp_path,
        EMAIL_HOST="smtp.example.org",
        DEFAULT_FROM_EMAIL="News <news@example.org>",
        ANNOUNCEMENT_EMAIL_BATCH_SIZE="25",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "backend": "django.core.mail.backends.smtp.EmailBackend",
        "from": "News <news@example.org>",
        "batch": 25,
    }


def test_a_batch_size_below_one_stops_start_up(tmp_path):
    result = probe(tmp_path, ANNOUNCEMENT_EMAIL_BATCH_SIZE="0")
    assert result.returncode != 0
    assert "ANNOUNCEMENT_EMAIL_BATCH_SIZE must be at least 1; got 0" in result.stderr
