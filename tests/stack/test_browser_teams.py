"""Two participants form a team in a browser against the live gunicorn and a real Celery
worker: one creates it and copies the invitation link, the other opens the link and joins
on a phone-sized screen, an entry made by one is listed for both under the team's name on
the leaderboard, and a member withdraws it. Screenshots:
test-output/screenshots/teams_*.png (1280 and 390 px wide)."""

import io
import zipfile

import numpy as np
import pytest
from playwright.sync_api import expect

from .client import Client
from .conftest import PASSWORD, import_challenge, make_user, wait_final
from .data import DatasetSpec, in_validation
from .test_browser import WAIT_MS, browser, context, shoot  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser

N_VAL = 30


def _log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")


def _zip(p) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("delta_val_predict.txt", "".join(f"{x:.6g}\n" for x in p))
    return buffer.getvalue()


@pytest.fixture
def phone(browser, stack):  # noqa: F811 - the fixture imported above
    small = browser.new_context(
        base_url=stack.base_url, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    small.set_default_timeout(WAIT_MS)
    try:
        yield small
    finally:
        small.close()


def test_a_team_forms_submits_as_one_and_withdraws_an_entry(
    stack,
    context,  # noqa: F811 - the fixture imported above
    phone,
    screenshots,
):
    spec = in_validation(
        "teams",
        "Teams test challenge",
        {"delta": DatasetSpec("classification", (40, N_VAL, 20))},
        max_team_size=3,
    )
    import_challenge(stack, spec)
    make_user("alan")
    _, joan_token = make_user("joan")

    desk = context.new_page()
    _log_in(desk, "alan")
    desk.goto("/challenges/teams/team/")
    expect(desk.get_by_text("You take part alone in this challenge.")).to_be_visible()
    desk.get_by_label("Team name").fill("Bletchley")
    desk.get_by_role("button", name="Create the team").click()
    expect(desk.get_by_text("You created the team “Bletchley”.")).to_be_visible()
    link = desk.get_by_label("Invitation link").input_value()
    assert "/challenges/teams/team/join/" in link
    shoot(desk, screenshots, "teams_01_created_1280")

    mobile = phone.new_page()
    _log_in(mobile, "joan")
    mobile.goto(link)
    expect(mobile.get_by_role("heading", name="Join the team “Bletchley”")).to_be_visible()
    shoot(mobile, screenshots, "teams_02_invitation_390")
    mobile.get_by_role("button", name="Join Bletchley").click()
    expect(mobile.get_by_text("You joined the team “Bletchley”.")).to_be_visible()
    expect(mobile.get_by_text("On the leaderboards: Bletchley (Alan & Joan)")).to_be_visible()
    width = mobile.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the team page is {width} px wide on a 390 px screen"
    shoot(mobile, screenshots, "teams_03_joined_390")

    # Joan submits by API; the entry is the team's, for both members and on the board.
    api = Client(stack.base_url, token=joan_token)
    p = 0.05 + 0.9 * np.random.default_rng(3).random(N_VAL)
    response = api.post_multipart(
        "/api/v1/submissions/",
        {"challenge": "teams", "method": "Colossus"},
        {"file": ("predictions.zip", _zip(p))},
    )
    assert response.status == 201, response.text
    entry = response.json()["id"]
    assert wait_final(stack, [entry]) == {entry: "scored"}

    desk.goto("/accounts/submissions/?challenge=teams")
    row = desk.locator("table tbody tr", has_text="Colossus")
    expect(row).to_contain_text("Bletchley, by joan")
    desk.goto("/challenges/teams/datasets/delta/leaderboard/")
    board = desk.locator("table.leaderboard")
    expect(board).to_contain_text("Bletchley (Alan & Joan)")
    shoot(desk, screenshots, "teams_04_board_1280")
    mobile.goto("/challenges/teams/datasets/delta/leaderboard/")
    expect(mobile.locator("table.leaderboard")).to_contain_text("Bletchley (Alan & Joan)")
    shoot(mobile, screenshots, "teams_05_board_390")

    # Alan withdraws the entry Joan made: it leaves the board.
    desk.goto(f"/submissions/{entry}/")
    desk.get_by_text("Withdraw this entry").click()
    desk.get_by_role("button", name=f"Withdraw submission #{entry}").click()
    expect(desk.get_by_text("it has left the leaderboards")).to_be_visible()
    shoot(desk, screenshots, "teams_06_withdrawn_1280")
    desk.goto("/challenges/teams/datasets/delta/leaderboard/")
    expect(desk.locator("body")).not_to_contain_text("Colossus")
