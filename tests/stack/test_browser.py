"""People in a browser (Playwright, Debian's Chromium) against the live gunicorn.

A participant signs up, reads the format help, downloads a dataset zip, uploads through
the form (watching the progress bar), watches the status turn to scored, finds the entry
on the leaderboard and sorts by another loss. An organiser (staff allowed to start
challenges, no superuser) creates a draft challenge in the admin, uploads its files,
previews it as a participant would, opens it, disqualifies an entry with a public reason,
posts news that reaches the participant's mailbox (an SMTP server of the test,
tests/stack/mailbox.py), exports every submission and score, moves it into the test
phase and publishes the results after the deadline; test scores, the test leaderboard
and the statistics appear to everyone. Full-page screenshots go to
test-output/screenshots/ (PARTICIPANT_*.png, ORGANISER_*.png).
"""

import io
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.factories import dataset_files

from .client import Client
from .conftest import MAILBOX, PASSWORD, make_user, wait_final
from .data import make_zip, prediction_lines, sample_lines

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def context(browser, stack):
    context = browser.new_context(
        base_url=stack.base_url, viewport={"width": 1280, "height": 900}, accept_downloads=True
    )
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        context.close()


def shoot(page, screenshots, name: str) -> None:
    """A full-page PNG once every image, lazy ones below the fold included, has loaded
    (after the navigation a click may have started: its document must have a body)."""
    page.wait_for_load_state("load")
    page.wait_for_function("() => document.body !== null")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    # Images in a closed <details> (the forest plot) are not loaded until it opens.
    page.wait_for_function(
        "() => Array.from(document.images)"
        ".every(i => i.complete || i.closest('details:not([open])'))"
    )
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def test_participant_signs_up_downloads_uploads_and_sees_the_score(
    stack, challenge, context, screenshots
):
    page = context.new_page()
    page.goto("/")
    expect(page.get_by_role("link", name="Stack test challenge")).to_be_visible()
    shoot(page, screenshots, "participant_01_home")

    page.get_by_role("link", name="Sign up").click()
    page.locator("#id_username").fill("grace")
    page.locator("#id_email").fill("grace@example.org")
    page.locator("#id_display_name").fill("Grace H.")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    shoot(page, screenshots, "participant_02_signup")
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_text("Welcome, grace: your account is ready.")).to_be_visible()

    page.get_by_role("navigation", name="Main").get_by_role("link", name="File formats").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("format")
    shoot(page, screenshots, "participant_03_formats")

    page.goto("/")
    page.get_by_role("link", name="Stack test challenge").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Stack test challenge")
    shoot(page, screenshots, "participant_04_challenge")

    page.goto("/challenges/stack/datasets/sines/")
    shoot(page, screenshots, "participant_05_dataset")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download sines.zip").click()
    download = download_info.value
    assert download.suggested_filename == "sines.zip"
    data = Path(download.path()).read_bytes()
    assert data.startswith(b"PK\x03\x04")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        released = {name: archive.read(name) for name in archive.namelist()}
    files = challenge["files"]["sines"]
    # The validation phase releases the training files and the validation inputs.
    expected = ("sines_train_inputs.txt", "sines_train_targets.txt", "sines_val_inputs.txt")
    readme = released.pop("sines/README.txt").decode()
    assert released == {f"sines/{name}": files[name] for name in expected}
    assert "Files in this zip" in readme and "sines_test_targets" not in readme

    # An upload large enough (1000 samples a row, stored uncompressed: 700 KB) to watch
    # its progress bar while the browser's upload is throttled to 250 KB/s.
    predictions = sample_lines(100, 1000, seed=4)
    archive_bytes = make_zip({"sines_val_predict.txt": predictions}, level=0)
    assert len(archive_bytes) > 700_000
    page.goto("/challenges/stack/submit/")
    page.locator("#id_dataset").select_option("sines")
    page.locator("#id_method").fill("Sampled GP")
    page.locator("#id_authors").fill("G. Hopper")
    page.locator("#id_description").fill("1000 posterior samples per test point.")
    page.locator("#id_file").set_input_files(
        files=[{"name": "sines.zip", "mimeType": "application/zip", "buffer": archive_bytes}]
    )
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 20,
            "downloadThroughput": -1,
            "uploadThroughput": 250_000,
        },
    )
    page.get_by_role("button", name="Upload and score").click()
    progress = page.locator("#upload-progress")
    expect(progress).to_be_visible()
    page.wait_for_function(
        "() => { const p = document.getElementById('upload-progress');"
        " return p && p.value > 5 && p.value < 95; }"
    )
    shoot(page, screenshots, "participant_06_uploading")
    page.wait_for_url("**/submissions/*/")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": -1,
        },
    )
    pk = int(page.url.rstrip("/").rsplit("/", 1)[1])
    # In <main> (the live region outside it says it too, static/js/upload.js).
    expect(page.locator("main").get_by_text(f"Submission #{pk} received.")).to_be_visible()
    shoot(page, screenshots, "participant_07_submitted")
    assert wait_final(stack, [pk]) == {pk: "scored"}
    # The page refreshes itself (every 2 s) until the submission is final.
    expect(page.locator(".status-scored")).to_have_text("Scored")
    expect(page.get_by_role("heading", name="Scores")).to_be_visible()
    shoot(page, screenshots, "participant_08_scored")

    # The leaderboard, from the dataset page: the entry is there, ranked by nlpd (n/a for
    # sample predictions, so listed last); sorted by crps it takes its place.
    page.goto("/challenges/stack/datasets/sines/")
    page.get_by_role("link", name="validation split").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Leaderboard: Sines, validation split"
    )
    board = page.locator("table.leaderboard")
    entry = board.locator("tbody tr", has=page.get_by_role("link", name="Sampled GP"))
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text("Grace H.")
    expect(board.locator("th[aria-sort=ascending]")).to_contain_text("nlpd")
    shoot(page, screenshots, "participant_09_leaderboard")
    board.locator("thead").get_by_role("link", name="crps", exact=True).click()
    page.wait_for_url("**sort=crps**")
    expect(board.locator("th[aria-sort=ascending]")).to_contain_text("crps")
    expect(entry).to_have_count(1)
    # The sorted column's values, read off the page, go up (every entry has a crps).
    headers = board.locator("thead th")
    column = [headers.nth(i).get_attribute("aria-sort") for i in range(headers.count())].index(
        "ascending"
    )
    # Each score's exact value is its first span's title (an interval may follow).
    values = [
        float(row.locator("th, td").nth(column).locator("span").first.get_attribute("title"))
        for row in board.locator("tbody tr").all()
    ]
    assert len(values) >= 2 and values == sorted(values)  # the baseline and more
    shoot(page, screenshots, "participant_10_leaderboard_by_crps")

    # The worker computes the split's bootstrap intervals after the score (debounced):
    # each score gets its "± …" (or "+a/−b"; screen readers read the bounds), the top tier
    # its shading, and the forest plot its bars.
    wait_for_text(page, entry, "95 % interval")
    expect(board.locator("tbody tr.tied").first).to_be_visible()
    page.locator("details.forest summary").click()
    expect(page.locator("img[src*='forest.svg']")).to_be_visible()
    api = "/api/v1/challenges/stack/datasets/sines/leaderboard/?split=val&sort=crps&view=best"
    rows = Client(stack.base_url).get(api).json()["results"]
    mine = next(row for row in rows if row["method"] == "Sampled GP")
    lower, upper = mine["intervals"]["crps"]
    assert lower <= mine["scores"]["crps"] <= upper and mine["rank_interval"][0] >= 1
    shoot(page, screenshots, "participant_11_intervals_and_forest_plot")


def wait_for_text(page, locator, text: str, *, seconds: int = 60) -> None:
    """Reload until ``locator`` holds ``text`` (work a worker finishes in the background)."""
    for _ in range(seconds):
        if text in locator.inner_text():
            return
        page.wait_for_timeout(1000)
        page.reload()
    raise AssertionError(f"{text!r} did not appear within {seconds} s")


def _fill_datetime(page, field: str, when: datetime) -> None:
    page.locator(f"#id_{field}_0").fill(when.strftime("%Y-%m-%d"))
    page.locator(f"#id_{field}_1").fill(when.strftime("%H:%M:%S"))


def test_organiser_runs_a_challenge_from_a_new_draft_to_published_results(
    stack, context, browser, screenshots, participant
):
    make_user("organiser", founder=True)  # no superuser: staff who may start challenges
    now = datetime.now(UTC).replace(microsecond=0)
    page = context.new_page()
    page.goto("/admin/")
    page.locator("#id_username").fill("organiser")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#challenges-challenge")).to_be_visible()
    shoot(page, screenshots, "organiser_01_admin")

    page.goto("/admin/challenges/challenge/add/")
    page.locator("#id_title").fill("Waves")
    page.locator("#id_description").fill("Created by an organiser in the admin.")
    expect(page.locator("#id_slug")).to_have_value("waves")  # filled in from the title
    _fill_datetime(page, "start", now - timedelta(days=1))
    _fill_datetime(page, "test_start", now + timedelta(days=5))
    _fill_datetime(page, "deadline", now + timedelta(days=9))
    shoot(page, screenshots, "organiser_02_new_challenge")
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")

    files = dataset_files("swell", task="regression", sizes=(60, 40, 50), dim=2, seed=11)
    page.goto("/admin/datasets/dataset/add/")
    page.locator("#id_challenge").select_option(label="Waves")
    page.locator("#id_name").fill("swell")
    page.locator("#id_task").select_option("regression")
    page.locator("#id_upload").set_input_files(
        files=[
            {"name": name, "mimeType": "text/plain", "buffer": data} for name, data in files.items()
        ]
    )
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist")).to_contain_text("Stored swell_")
    shoot(page, screenshots, "organiser_03_dataset_files")

    # A draft: its organiser previews it, as themselves and as a participant would see it;
    # for everyone else it does not exist.
    assert Client(stack.base_url).get("/challenges/waves/").status == 404
    page.goto("/challenges/waves/")
    banner = page.locator(".organiser-banner")
    expect(banner).to_contain_text("Draft.")
    page.get_by_role("button", name="View as a participant").click()
    expect(banner).to_contain_text("as a participant would")
    shoot(page, screenshots, "organiser_03a_draft_previewed_as_a_participant")
    page.get_by_role("button", name="Back to the organiser's view").click()
    expect(banner).to_contain_text("hidden test scores included")

    # Opening lists what is missing first (nothing now), then opens it for everyone.
    page.goto("/admin/challenges/challenge/")
    page.get_by_role("link", name="Waves", exact=True).click()
    page.get_by_role("link", name="Open challenge…").click()
    expect(page.locator("#content")).to_contain_text("Ready.")
    shoot(page, screenshots, "organiser_03b_open_confirmation")
    page.get_by_role("button", name="Yes, open it").click()
    expect(page.locator(".messagelist")).to_contain_text("Opened 1 challenge(s)")
    assert Client(stack.base_url).get("/challenges/waves/").status == 200

    # A participant's validation entry; the organiser disqualifies it, with a reason that
    # everyone reads on the entry's page.
    api = Client(stack.base_url, token=participant["token"])
    val = api.api_submit(
        "waves",
        make_zip({"swell_val_predict.txt": prediction_lines("regression", 40)}),
        method="Validation entry",
    )
    assert val.status == 201, val
    val_id = val.json()["id"]
    assert wait_final(stack, [val_id]) == {val_id: "scored"}
    page.goto("/admin/submissions/submission/?q=Validation+entry")
    row = page.locator("#result_list tr", has_text="Validation entry")
    row.locator("input.action-select").check()
    page.locator("select[name=action]").select_option("disqualify_selected")
    page.locator("button[name=index]").click()
    page.locator("[name=reason]").fill("Trained on the validation targets.")
    shoot(page, screenshots, "organiser_03c_disqualify_with_a_reason")
    page.get_by_role("button", name="Disqualify 1 entry").click()
    expect(page.locator(".messagelist")).to_contain_text("Disqualif")
    entry_page = Client(stack.base_url).get(f"/submissions/{val_id}/")
    assert entry_page.status == 200
    assert "Trained on the validation targets." in entry_page.text
    board = Client(stack.base_url).get("/challenges/waves/datasets/swell/leaderboard/?split=val")
    assert "Validation entry" not in board.text

    # News for the participants: posted, e-mailed once, read in their mailboxes.
    page.goto("/admin/announcements/announcement/add/")
    page.locator("#id_challenge").select_option(label="Waves")
    page.locator("#id_title").fill("Test phase soon")
    page.locator("#id_body").fill("The **test phase** opens in a few days.")
    _fill_datetime(page, "published_at", now - timedelta(minutes=1))
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    row = page.locator("#result_list tr", has_text="Test phase soon")
    row.locator("input.action-select").check()
    page.locator("select[name=action]").select_option("email_participants")
    page.locator("button[name=index]").click()
    expect(page.locator("#content")).to_contain_text("Test phase soon")
    shoot(page, screenshots, "organiser_03d_email_confirmation")
    page.get_by_role("button", name="Yes, e-mail 1 person").click()
    mail = MAILBOX.wait_for(participant["user"].email, "Test phase soon")
    text = mail.get_payload(decode=True).decode()
    assert "The **test phase** opens in a few days." in text
    assert "/announcements/unsubscribe/" in text and mail["List-Unsubscribe"]
    page.goto("/challenges/waves/news/")
    expect(page.locator("main")).to_contain_text("Test phase soon")
    shoot(page, screenshots, "organiser_03e_news")

    # Everything exported, from the links of the challenge's admin page.
    page.goto("/admin/challenges/challenge/")
    page.get_by_role("link", name="Waves", exact=True).click()
    page.wait_for_url("**/change/")
    shoot(page, screenshots, "organiser_03f_console_links")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="All submissions (zip)").click()
    with zipfile.ZipFile(download_info.value.path()) as archive:
        manifest = archive.read("manifest.csv").decode()
        assert "Validation entry" in manifest and any(
            name.startswith("swell/") and name.endswith(".zip") for name in archive.namelist()
        )
    scores = page.request.get("/challenges/waves/export/scores.csv")
    assert scores.status == 200 and "nlpd" in scores.text()

    # The organiser opens the test phase.
    page.goto("/admin/challenges/challenge/")
    page.get_by_role("link", name="Waves", exact=True).click()
    _fill_datetime(page, "test_start", now - timedelta(hours=1))
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    row = page.locator("#result_list tr", has_text="Waves")
    expect(row).to_contain_text("Test phase")
    shoot(page, screenshots, "organiser_04_test_phase")

    test = api.api_submit(
        "waves",
        make_zip(
            {
                "swell_val_predict.txt": prediction_lines("regression", 40),
                "swell_test_predict.txt": prediction_lines("regression", 50, seed=3),
            }
        ),
        method="Final entry",
    )
    assert test.status == 201, test
    ids = [val.json()["id"], test.json()["id"]]
    assert wait_final(stack, ids) == dict.fromkeys(ids, "scored")
    pk = test.json()["id"]

    public = browser.new_context(base_url=stack.base_url, viewport={"width": 1280, "height": 900})
    try:
        anonymous = public.new_page()
        anonymous.goto(f"/submissions/{pk}/")
        expect(
            anonymous.get_by_text("scores hidden until the results are published")
        ).to_be_visible()
        expect(anonymous.locator("caption", has_text="Test split")).to_have_count(0)
        assert set(Client(stack.base_url).get(f"/api/v1/submissions/{pk}/").json()["scores"]) == {
            "val"
        }
        assert Client(stack.base_url).get(f"/submissions/{pk}/plots/test.svg").status == 404
        shoot(anonymous, screenshots, "organiser_05_test_scores_hidden")
        anonymous.goto("/challenges/waves/datasets/swell/leaderboard/?split=val")
        switches = anonymous.get_by_role("navigation", name="Leaderboard options")
        expect(switches).to_contain_text("Test (published with the results)")
        expect(switches.get_by_role("link", name="Test", exact=True)).to_have_count(0)

        # Results are published only after the deadline: the organiser ends the test phase.
        page.goto("/admin/challenges/challenge/")
        page.get_by_role("link", name="Waves", exact=True).click()
        _fill_datetime(page, "deadline", datetime.now(UTC) - timedelta(seconds=2))
        page.locator("input[name=_save]").click()
        expect(page.locator(".messagelist")).to_contain_text("was changed successfully")

        page.goto("/admin/challenges/challenge/")
        row = page.locator("#result_list tr", has_text="Waves")
        row.locator("input.action-select").check()
        page.locator("select[name=action]").select_option("publish_results")
        page.locator("button[name=index]").click()
        expect(page.locator("#content")).to_contain_text("Becoming public:")  # asked first
        shoot(page, screenshots, "organiser_06a_publish_confirmation")
        page.get_by_role("button", name="Yes, publish the results").click()
        expect(page.locator(".messagelist")).to_contain_text(
            "Results published for 1 challenge(s)."
        )
        shoot(page, screenshots, "organiser_06_published")

        anonymous.goto(f"/submissions/{pk}/")
        expect(anonymous.locator("caption", has_text="Test split")).to_be_visible()
        expect(
            anonymous.get_by_text("scores hidden until the results are published")
        ).to_have_count(0)
        plot = Client(stack.base_url).get(f"/submissions/{pk}/plots/test.svg")
        assert plot.status == 200 and plot.headers["Content-Type"] == "image/svg+xml"
        expect(anonymous.locator("img[src$='/plots/test.svg']")).to_be_visible()
        shoot(anonymous, screenshots, "organiser_07_test_scores_public")
        anonymous.goto("/challenges/waves/datasets/swell/leaderboard/?split=val")
        switches = anonymous.get_by_role("navigation", name="Leaderboard options")
        switches.get_by_role("link", name="Test", exact=True).click()
        expect(anonymous.get_by_role("heading", level=1)).to_have_text(
            "Leaderboard: Swell, test split"
        )
        board = anonymous.locator("table.leaderboard")
        final = board.locator("tbody tr", has_text="Final entry")
        expect(final).to_have_count(1)
        # Its test intervals appear with the scores. Entries scored in quick succession
        # hold their split's interval run back until requests stop (interval_runs:
        # AFTER_RUN, QUIET; the sweep every 10 s), so they may come a little after.
        wait_for_text(anonymous, final, "95 % interval")
        shoot(anonymous, screenshots, "organiser_08_test_leaderboard_public")
        scores = Client(stack.base_url).get(f"/api/v1/submissions/{pk}/").json()["scores"]
        assert set(scores) == {"val", "test"} and scores["test"]["nlpd"] is not None

        # How it went, public now that the results are.
        anonymous.goto("/challenges/waves/statistics/")
        # A worker computes them (queue boards); the page shows them once they are in.
        expect(anonymous.locator("main")).to_contain_text(
            "Median time from upload to scored", timeout=90_000
        )
        expect(anonymous.locator("img[src$='daily.svg']")).to_be_visible()
        shoot(anonymous, screenshots, "organiser_09_statistics_public")
    finally:
        public.close()
