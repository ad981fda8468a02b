"""What one hostile upload costs the site on the embedded default (SQLite, Celery tasks run
in the web process): peak memory and time of the whole request, scoring included.

One process sets up a throwaway site (migrations, a small challenge in its validation
phase, a participant with an API token), sends a valid upload to warm up, then each
upload through the API with Django's test client, as a browser or the API would. Before
each upload the process's peak resident size (VmHWM) is reset (``/proc/self/clear_refs``),
so the peak read afterwards is that request's, interpreter, Django and numpy included.
The floor to compare with is the valid 100-row upload: what any request costs. The test
client holds a request's body in memory twice (the lying zip's 47 MB included), which a
server streaming it to a temporary file does not: tests/stack/test_bombs.py measures the
same uploads in gunicorn and a Celery worker.

Usage: python bench/embedded_upload.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def setup(folder: str) -> None:
    sys.path.insert(0, str(ROOT))
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "STORAGE_BACKEND", "PRIVATE_STORAGE_BACKEND"):
        os.environ.pop(name, None)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
            "VAR_DIR": folder,
            "MEDIA_ROOT": f"{folder}/media",
            "PRIVATE_ROOT": f"{folder}/private",
            "API_THROTTLE_UPLOAD": "off",
            "LOG_LEVEL": "ERROR",
        }
    )
    import django

    django.setup()


def uploads() -> dict[str, bytes]:
    from tests.factories import make_zip
    from tests.stack.data import prediction_lines
    from tests.submissions.hostile import (
        Target,
        blank_lines,
        lying_end_record,
        one_long_line,
        too_many_rows,
    )

    def predictions(data: bytes) -> bytes:
        return make_zip({"sines_val_predict.txt": data}, level=9)

    return {
        "valid 100 rows (floor)": predictions(prediction_lines("regression", 100)),
        "4,000,000 unreadable lines": predictions(b"x\n" * 4_000_000),
        "2,000,000 distinct errors": predictions(b"".join(b"x%d\n" % k for k in range(2_000_000))),
        "800,000 lines out of range": predictions(b"1 0 1e300\n" * 800_000),
        "one 250 MB line (2.7 MB zip)": one_long_line("sines"),
        "260 M blank lines (2.9 MB zip)": blank_lines("sines"),
        "130 M rows (2.9 MB zip)": too_many_rows("coins"),
        "lying central directory": lying_end_record(Target("sines", 100, "coins")),
    }


def run() -> dict[str, dict]:
    from django.core.management import call_command
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from challenge_site.submissions.models import Submission
    from tests.factories import make_user
    from tests.stack.data import DatasetSpec, in_validation, write_challenge

    call_command("migrate", verbosity=0)
    folder = Path(os.environ["VAR_DIR"]) / "import"
    spec = in_validation(
        "bench",
        "Bench",
        {
            "sines": DatasetSpec("regression", (200, 100, 100)),
            "coins": DatasetSpec("classification", (200, 100, 100)),
        },
    )
    write_challenge(spec, folder)
    call_command("import_challenge", str(folder), verbosity=0)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user('b')).key}")

    figures = {}
    for name, data in uploads().items():
        # The request body is built before the peak is reset: a server reads it from its
        # socket, it does not build it.
        body = encode_multipart(
            BOUNDARY,
            {"challenge": "bench", "dataset": "", "method": name, "file": _file(data)},
        )
        reset_peak()
        began = time.perf_counter()
        response = client.post("/api/v1/submissions/", body, content_type=MULTIPART_CONTENT)
        seconds = time.perf_counter() - began
        outcome = (
            Submission.objects.get(pk=response.json()["id"]).status
            if response.status_code == 201
            else f"refused ({response.status_code})"
        )
        figures[name] = {
            "upload_bytes": len(data),
            "outcome": outcome,
            "seconds": round(seconds, 2),
            "peak_rss_mb": round(peak_mb(), 1),
        }
    return figures


def _file(data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("predictions.zip", data, content_type="application/zip")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-embedded-") as folder:
        setup(folder)
        figures = run()
    floor = figures["valid 100 rows (floor)"]
    print(f"{'upload':34} {'bytes':>10} {'outcome':>16} {'s':>7} {'peak MB':>8} {'÷ floor':>8}")
    for name, row in figures.items():
        ratio = row["peak_rss_mb"] / floor["peak_rss_mb"]
        print(
            f"{name:34} {row['upload_bytes']:>10} {row['outcome']:>16} "
            f"{row['seconds']:>7.2f} {row['peak_rss_mb']:>8.1f} {ratio:>8.2f}"
        )
    if args.json:
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
