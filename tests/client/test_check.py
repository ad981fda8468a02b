"""puc_client.check: the site's upload check run on this machine, fed with the public
facts of GET /api/v1/challenges/<slug>/ from the live site."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone
from puc_client import config, errors
from puc_client.check import local_check
from puc_client.commands import Context
from puc_client.errors import ClientError
from puc_client.transport import Api
from puc_client.zipping import Prepared

from tests.factories import make_challenge, make_zip
from tests.submissions.helpers import predictions


def context(url: str) -> Context:
    return Context(config.Settings(url, None, None), Api(url), io.StringIO(), io.StringIO())


def upload(tmp_path, files: dict[str, bytes]) -> Prepared:
    path = tmp_path / "upload.zip"
    path.write_bytes(make_zip(files))
    return Prepared(path)


def test_a_good_zip_has_no_report_lines(live_server, running, tmp_path):
    ctx = context(live_server.url)
    good = upload(tmp_path, predictions("gaze"))
    assert local_check(ctx, challenge="live", dataset=None, upload=good) == []


def test_a_bad_zip_gets_the_sites_line_errors(live_server, running, tmp_path):
    ctx = context(live_server.url)
    bad = upload(tmp_path, {"gaze_val_predict.txt": b"1 0.5 1\n1,0.2,1\n1 0.1\n1 0 1\n"})
    lines = local_check(ctx, challenge="live", dataset=None, upload=bad)
    assert lines and all(line.startswith("gaze_val_predict.txt") for line in lines)
    assert any(line.startswith("gaze_val_predict.txt:2: ") for line in lines)
    assert any(line.startswith("gaze_val_predict.txt:3: ") for line in lines)


def test_before_the_start_nothing_is_checked(live_server, transactional_db, tmp_path):
    now = timezone.now().replace(microsecond=0)
    start = now + timedelta(days=5)
    make_challenge(
        slug="soon",
        start=start,
        test_start=now + timedelta(days=10),
        deadline=now + timedelta(days=20),
    )
    with pytest.raises(ClientError) as raised:
        good = upload(tmp_path, predictions("gaze"))
        local_check(context(live_server.url), challenge="soon", dataset=None, upload=good)
    assert raised.value.code == errors.REFUSED
    assert raised.value.message == (
        f"soon opens on {start.strftime('%Y-%m-%d %H:%M')} UTC: it takes no submissions before then"
    )
