"""The client (client/puc_client) against a real site: pytest-django's live server, in
a thread of this process, with real rows from tests.factories. The client is imported
from the source tree (`pip install ./client` is proven in tests/stack/test_client.py)."""

import io
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from tests.factories import make_challenge, make_dataset, make_user

CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "client"
if str(CLIENT_SOURCE) not in sys.path:
    sys.path.insert(0, str(CLIENT_SOURCE))

from puc_client import cli  # noqa: E402


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def environ(tmp_path):
    """The client's environment: its config file in tmp_path, nothing else inherited."""
    return {"PUC_CONFIG": str(tmp_path / "config" / "puc.json")}


@pytest.fixture
def puc(environ):
    """Run the command line in-process: puc("challenges", "--url", …) -> Result."""

    def run(*argv: str, stdin: str = "") -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = cli.run(
            list(argv), environ=environ, stdin=io.StringIO(stdin), stdout=out, stderr=err
        )
        return Result(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def running(transactional_db):
    """A challenge in its validation phase by the real clock (the live server's)."""
    now = datetime.now(UTC).replace(microsecond=0)
    challenge = make_challenge(
        slug="live",
        title="Live challenge",
        start=now - timedelta(days=2),
        test_start=now + timedelta(days=10),
        deadline=now + timedelta(days=20),
    )
    make_dataset(challenge, "gaze", task="regression", now=now - timedelta(days=3))
    make_dataset(challenge, "coins", task="classification", seed=3, now=now - timedelta(days=3))
    return challenge


@pytest.fixture
def ada(transactional_db):
    user = make_user("ada", display_name="Ada L.")
    return {"user": user, "token": Token.objects.create(user=user).key}


@pytest.fixture
def site(live_server, running, ada, environ):
    """The live site, logged in as ada through the environment (PUC_URL, PUC_TOKEN)."""
    environ.update(PUC_URL=live_server.url, PUC_TOKEN=ada["token"])
    return {"url": live_server.url, "challenge": running, **ada}
