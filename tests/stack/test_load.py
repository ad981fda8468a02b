"""50 simultaneous uploads to gunicorn: each accepted or refused with a reason, none lost."""

import threading
import time

from challenge_site.submissions.models import Submission

from .client import Client
from .conftest import import_challenge, make_user, orm, wait_final
from .data import DatasetSpec, in_validation, prediction_zip

USERS, PER_USER, DAILY_LIMIT = 5, 10, 8
LOADSET = DatasetSpec("regression", (40, 30, 30), dim=2, seed=9)


def test_fifty_simultaneous_uploads(stack):
    """5 participants send 10 uploads each at the same moment; the validation limit is 8 a
    day, so exactly 8 of each are accepted (the quota row lock serialises them on
    PostgreSQL) and 2 refused with 429, the reason and Retry-After. Every accepted one is
    scored; nothing else is stored."""
    import_challenge(
        stack, in_validation("load", "Load test", {"loadset": LOADSET}, val_daily_limit=8)
    )
    tokens = [make_user(f"load{i}")[1] for i in range(USERS)]
    jobs = [
        (token, prediction_zip("loadset", LOADSET, seed=100 + n))
        for n, token in enumerate(t for t in tokens for _ in range(PER_USER))
    ]
    results: list = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def send(index, token, data):
        client = Client(stack.base_url, token=token, timeout=120)
        start.wait(timeout=60)
        began = time.monotonic()
        response = client.api_submit("load", data, method=f"load {index}")
        results[index] = (token, response, time.monotonic() - began)

    threads = [
        threading.Thread(target=send, args=(i, token, data), daemon=True)
        for i, (token, data) in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(thread.is_alive() for thread in threads), "uploads still running after 180 s"
    assert all(result is not None for result in results)

    accepted, refused = [], []
    for token, response, _ in results:
        assert response.status in (201, 429), response
        (accepted if response.status == 201 else refused).append((token, response))
    for token in tokens:
        mine = [r for t, r in accepted if t == token]
        assert len(mine) == DAILY_LIMIT
    for _, response in refused:
        body = response.json()
        assert "the daily limit in the validation phase" in body["detail"]
        assert int(response.headers["Retry-After"]) > 0
    assert len(refused) == USERS * (PER_USER - DAILY_LIMIT)

    ids = sorted(response.json()["id"] for _, response in accepted)
    stored = orm(
        lambda: sorted(
            Submission.objects.filter(
                dataset__challenge__slug="load", is_baseline=False
            ).values_list("pk", flat=True)
        )
    )
    assert stored == ids  # none lost, none extra
    assert wait_final(stack, ids, timeout=180) == dict.fromkeys(ids, "scored")
    assert orm(lambda: {s.attempts for s in Submission.objects.filter(pk__in=ids)}) == {1}
