"""A participant of a challenge with a public part, the Ladder and final selections, in
a browser against the live gunicorn and a real Celery worker: two uploads (a model and a
probe that changes a few predictions), the public board through the Ladder, the probe's
page saying it did not move the shown score, marking an entry as final, and the rules
page explaining the options. Screenshots: test-output/screenshots/ladder_*.png."""

import io
import zipfile

import numpy as np
import pytest
from playwright.sync_api import expect

from .client import Client
from .conftest import PASSWORD, import_challenge, make_user, wait_final
from .data import DatasetSpec, in_test_phase
from .test_browser import browser, context, shoot  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser

N_TEST = 400


def _zip(p) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("beta_test_predict.txt", "".join(f"{x:.6g}\n" for x in p))
    return buffer.getvalue()


def _submit(client: Client, p, method: str) -> int:
    response = client.post_multipart(
        "/api/v1/submissions/",
        {"challenge": "ladder", "method": method},
        {"file": ("predictions.zip", _zip(p))},
    )
    assert response.status == 201, response.text
    return response.json()["id"]


def test_a_probe_does_not_move_the_ladder_and_a_final_entry_is_chosen(
    stack,
    context,  # noqa: F811 - the fixture imported above
    screenshots,
):
    spec = in_test_phase(
        "ladder",
        "Ladder test challenge",
        {"beta": DatasetSpec("classification", (40, 30, N_TEST))},
        test_public_fraction=0.5,
        feedback="ladder",
        final_entries=2,
    )
    files = import_challenge(stack, spec)
    y = np.array(files["beta"]["beta_test_targets.txt"].split(), dtype=float)
    _, token = make_user("turing")
    api = Client(stack.base_url, token=token)
    p = 0.05 + 0.9 * np.random.default_rng(7).random(N_TEST)
    model = _submit(api, p, "Model")
    # A probe: three predictions pushed to the wrong class (worse, whichever part
    # they fall in), so the shown score stays the model's.
    probe_p = p.copy()
    probe_p[:3] = np.where(y[:3] == 1, 0.02, 0.98)
    probe = _submit(api, probe_p, "Probe")
    assert wait_final(stack, [model, probe]) == {model: "scored", probe: "scored"}

    page = context.new_page()
    page.goto("/accounts/login/")
    page.locator("#id_username").fill("turing")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")

    page.goto("/challenges/ladder/datasets/beta/leaderboard/?split=public")
    expect(page.get_by_text("Shown through the Ladder.")).to_be_visible()
    board = page.locator("table.leaderboard")
    expect(board.locator("tbody tr")).to_have_count(1)
    expect(board).to_contain_text("Model")
    expect(board).not_to_contain_text("Probe")
    shoot(page, screenshots, "ladder_01_public_board")

    page.goto(f"/submissions/{probe}/")
    expect(page.locator(".ladder-score")).to_contain_text("did not beat your shown score")
    page.get_by_role("button", name="Mark as final").click()
    page.wait_for_url(f"**/submissions/{probe}/")
    expect(page.get_by_text("is now one of your final entries")).to_be_visible()
    expect(page.get_by_role("button", name="Unmark as final")).to_be_visible()
    shoot(page, screenshots, "ladder_02_probe_marked_final")
    data = api.get(f"/api/v1/submissions/{probe}/").json()
    assert data["final_selection"]["final"] is True and "public" not in data["scores"]
    assert data["ladder"]["public"]["accepted"] is False

    page.goto("/challenges/ladder/rules/")
    expect(page.locator("#ranking")).to_be_visible()
    expect(page.locator(".ranking-rules")).to_contain_text("Ladder feedback")
    shoot(page, screenshots, "ladder_03_rules")
