"""axe-core on every page at a phone's width (390 × 844) and a laptop's (1280 × 800), in
Chromium against the live gunicorn: no violation on any page of the site, signed out and
as a participant, and the organisers' admin pages (challenge page, submissions list). Also
what axe cannot see: a table that scrolls sideways says so, a board's first loss column
starts in view on a phone, the admin's challenge page and submissions list fit 1280 px,
and after an upload replaces the page by XHR the focus is on the new page's message,
announced by a live region, and stays there while the page updates itself.

axe-core is vendored (tests/stack/vendor/axe.min.js, 4.14.1 from the npm registry, with its
licence): nothing is fetched at run time. Screenshots go to
test-output/screenshots/axe_<390|1280>_<page>.png.
"""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from challenge_site.challenges.models import Challenge
from challenge_site.challenges.services import publish_results

from .client import Client
from .conftest import PASSWORD, import_challenge, make_user, orm, wait_final
from .data import DatasetSpec, in_test_phase, in_validation, prediction_zip
from .test_browser import WAIT_MS, browser, shoot  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
VIEWPORTS = {390: 844, 1280: 800}
DATASETS = {"cobbles": DatasetSpec("classification", (60, 40, 150), seed=16)}
DATASETS["tides"] = DatasetSpec("regression", (60, 40, 100), seed=17)
LADDER = {"delta": DatasetSpec("classification", (40, 30, 120), seed=18)}
OPEN = {"brook": DatasetSpec("regression", (60, 40, 100), seed=19)}
# (user, dataset, method, authors)
ENTRIES = [
    ("ada_axe", "cobbles", "Gradient-boosted trees with isotonic recalibration", "G. Hopper"),
    ("ada_axe", "cobbles", "heteroscedastic_gaussian_process_with_input_warping_v2", ""),
    ("edsger_axe", "cobbles", "k-NN class frequencies", "E. Dijkstra"),
    ("ada_axe", "tides", "Gaussian process regression", "G. Hopper"),
    ("edsger_axe", "tides", "Quantile regression forest", "E. Dijkstra"),
]


@pytest.fixture(scope="module")
def site(stack):
    """ "axe" (two datasets, entries scored, results published), "axe-ladder" (test phase,
    its public board through the Ladder) and "axe-open" (validation phase); a superuser.
    Returns {"entry": a pk of ada_axe's, "challenge": the pk of "axe"}."""
    tokens = {name: make_user(name)[1] for name in ("ada_axe", "edsger_axe")}
    make_user("axe_admin", staff=True)
    import_challenge(stack, in_test_phase("axe", "Axe: every page checked", DATASETS))
    ladder = in_test_phase(
        "axe-ladder", "Axe: a Ladder board", LADDER, test_public_fraction=0.5, feedback="ladder"
    )
    import_challenge(stack, ladder)
    import_challenge(
        stack, in_validation("axe-open", "Axe: a running challenge", OPEN, max_team_size=3)
    )
    pks = []
    for seed, (user, dataset, method, authors) in enumerate(ENTRIES, start=1):
        data = prediction_zip(dataset, DATASETS[dataset], splits=("test",), seed=seed)
        response = Client(stack.base_url, token=tokens[user]).api_submit(
            "axe", data, dataset=dataset, method=method, authors=authors
        )
        assert response.status == 201, response.text
        pks.append(response.json()["id"])
    data = prediction_zip("delta", LADDER["delta"], splits=("test",), seed=30)
    response = Client(stack.base_url, token=tokens["ada_axe"]).api_submit(
        "axe-ladder", data, method="A ladder entry"
    )
    assert response.status == 201, response.text
    pks.append(response.json()["id"])
    assert set(wait_final(stack, pks).values()) == {"scored"}

    def publish():
        challenge = Challenge.objects.get(slug="axe")
        challenge.deadline = timezone.now() - timedelta(seconds=1)
        challenge.save(update_fields=["deadline"])
        publish_results(challenge=challenge, user=None, now=timezone.now(), via="axe test")
        return challenge.pk

    return {"entry": pks[0], "challenge": orm(publish)}


BOARD = "/challenges/axe/datasets/cobbles/leaderboard/?split=test"
ANONYMOUS_PAGES = {
    "home": "/",
    "login": "/accounts/login/",
    "signup": "/accounts/signup/",
    "password_reset": "/accounts/password_reset/",
}
PAGES = {
    "home": "/",
    "leaderboards": "/leaderboards/",
    "formats": "/formats/",
    "challenge": "/challenges/axe/",
    "challenge_data": "/challenges/axe/data/",
    "challenge_evaluation": "/challenges/axe/evaluation/",
    "challenge_rules": "/challenges/axe/rules/",
    "challenge_news": "/challenges/axe/news/",
    "dataset": "/challenges/axe/datasets/cobbles/",
    "leaderboard": BOARD,
    "leaderboard_best": BOARD + "&view=best",
    "leaderboard_regression": "/challenges/axe/datasets/tides/leaderboard/?split=test",
    "ladder": "/challenges/axe-ladder/datasets/delta/leaderboard/?split=public",
    "results": "/challenges/axe/results/",
    "statistics": "/challenges/axe/statistics/",
    "submit": "/challenges/axe-ladder/submit/",
    "submit_validation": "/challenges/axe-open/submit/",
    "running_challenge": "/challenges/axe-open/",
    "team": "/challenges/axe-open/team/",
    "entry": "/submissions/{entry}/",
    "my_submissions": "/accounts/submissions/",
    "profile": "/accounts/profile/",
    "password_change": "/accounts/password_change/",
}
ADMIN_PAGES = {
    "admin_challenge": "/admin/challenges/challenge/{challenge}/change/",
    "admin_submissions": "/admin/submissions/submission/",
}


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main").get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out", include_hidden=True)).to_be_attached()


@pytest.fixture(params=sorted(VIEWPORTS), ids=lambda width: f"{width}px")
def width(request):
    return request.param


@pytest.fixture
def context(browser, stack, width):  # noqa: F811 - browser is the fixture imported above
    # bypass_csp: the site's CSP refuses the inline <script> that carries axe in.
    context = browser.new_context(
        base_url=stack.base_url,
        viewport={"width": width, "height": VIEWPORTS[width]},
        bypass_csp=True,
    )
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        context.close()


# axe's whole rule set, every <details> opened first (what it hides is checked too);
# per violation its rule, impact and the first few elements with axe's summary of each.
RUN_AXE = """async () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, count: v.nodes.length,
    nodes: v.nodes.slice(0, 3).map((n) => [n.target.join(" "), n.failureSummary]),
  }));
}"""


def axe_violations(page, path: str) -> list[dict]:
    response = page.goto(path)
    assert response.status == 200, f"{path}: {response.status}"
    page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE)


def test_axe_finds_no_violation_on_any_page(site, context, width, screenshots):
    page = context.new_page()
    found = {}
    for name, path in ANONYMOUS_PAGES.items():
        found[f"anonymous_{name}"] = axe_violations(page, path)
    login(page, "ada_axe")
    for name, path in PAGES.items():
        found[name] = axe_violations(page, path.format(**site))
        shoot(page, screenshots, f"axe_{width}_{name}")
    # The admin's pages too (Django's markup, named by challenges.admin_labels and the
    # two admin templates the site overrides).
    context.clear_cookies()
    login(page, "axe_admin")
    admin = {name: axe_violations(page, path.format(**site)) for name, path in ADMIN_PAGES.items()}
    counts = {name: sum(v["count"] for v in found) for name, found in {**found, **admin}.items()}
    print(f"\naxe at {width} px, elements with violations per page: {counts}")
    # The whole of what axe found, to read when this fails.
    report = screenshots.parent / f"axe_{width}.json"
    report.write_text(json.dumps({**found, **admin}, indent=1))
    assert not {name: violations for name, violations in {**found, **admin}.items() if violations}


# Every box in <main> that scrolls: whether it can take the focus, its role and name,
# and whether the line before it is the visible hint (tables only).
SCROLLING_BOXES = """() => Array.from(document.querySelectorAll("main *")).filter((box) => {
  const style = getComputedStyle(box);
  const x = ["auto", "scroll"].includes(style.overflowX) && box.scrollWidth > box.clientWidth + 1;
  const y = ["auto", "scroll"].includes(style.overflowY) && box.scrollHeight > box.clientHeight + 1;
  return x || y;
}).map((box) => {
  const hint = box.previousElementSibling;
  return {
    box: box.className || box.tagName, tabIndex: box.tabIndex, role: box.getAttribute("role"),
    name: box.getAttribute("aria-label"), table: !!box.querySelector("table"),
    sideways: box.scrollWidth > box.clientWidth + 1,
    hint: !!hint && hint.classList.contains("scroll-hint") && hint.checkVisibility() ? hint.textContent : null,
  };
})"""


def test_boxes_that_scroll_take_the_focus_and_say_so_on_a_phone(site, browser, stack):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page, "ada_axe")
        found = {}
        for name in ("home", "formats", "submit", "entry", "dataset", "challenge_evaluation"):
            page.goto(PAGES[name].format(**site))
            page.wait_for_load_state("load")
            found[name] = page.evaluate(SCROLLING_BOXES)
        assert found["formats"] and found["submit"], found  # the pages axe flagged scroll
        names = []
        for page_name, boxes in found.items():
            for box in boxes:
                where = f"{page_name}: {box}"
                assert box["tabIndex"] == 0 and box["role"] == "region" and box["name"], where
                names.append((page_name, box["name"]))
                if box["table"] and box["sideways"]:
                    assert box["hint"] == "Scroll sideways to see every column →", where
        assert len(set(names)) == len(names), names  # one name per region on a page
        # The home page's table is a list of cards on a phone: nothing scrolls, every date
        # shows in full inside the window.
        page.goto("/")
        assert page.evaluate(SCROLLING_BOXES) == []
        dates = page.locator("main td[data-label=Dates]")
        assert dates.count() >= 3  # the three challenges above, and those of other modules
        for index in range(dates.count()):
            box = dates.nth(index).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
            assert " – " in dates.nth(index).inner_text()
        # A keyboard reaches the submit page's table of allowances and scrolls it.
        page.goto(PAGES["submit"])
        box = page.locator("main .table-wrap[role=region]").first
        box.focus()
        expect(box).to_be_focused()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.activeElement.scrollLeft > 0")
    finally:
        context.close()


# The first loss column's header of a board: where its box ends, where the header and the
# loss's name (its sort link) are.
FIRST_LOSS = """(box) => {
  const head = box.querySelector("thead th.board-method ~ th.num");
  const name = head.querySelector("a") || head;
  return {left: head.getBoundingClientRect().left, nameRight: name.getBoundingClientRect().right,
          text: head.textContent.trim(), boxRight: box.getBoundingClientRect().right,
          scrolled: box.scrollLeft};
}"""


def test_a_boards_losses_start_in_view_on_a_phone(site, browser, stack):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page, "ada_axe")
        for name in ("leaderboard", "leaderboard_best", "leaderboard_regression", "ladder"):
            page.goto(PAGES[name])
            found = page.locator(".board-wrap").first.evaluate(FIRST_LOSS)
            assert found["scrolled"] == 0, (name, found)
            # The loss's name in view without scrolling (the column started past 390 px:
            # the participant, authors and date columns came first).
            assert found["nameRight"] <= found["boxRight"], (name, found)
            # The participant is still there.
            expect(page.locator(".board-wrap thead th", has_text="Participant")).to_be_visible()
    finally:
        context.close()


def test_after_an_upload_the_focus_is_on_the_new_page(site, browser, stack):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page, "edsger_axe")
        focused = (
            "() => [document.activeElement.tagName, document.activeElement.textContent.trim()]"
        )
        announced = "document.getElementById('page-announcer').textContent"
        # Refused: the form comes back with its message focused and announced.
        page.goto(PAGES["submit_validation"])
        page.locator("#id_dataset").select_option("brook")
        page.locator("#id_method").fill("Not a zip")
        page.locator("#id_file").set_input_files(
            files=[{"name": "p.zip", "mimeType": "application/zip", "buffer": b"not a zip"}]
        )
        page.get_by_role("button", name="Upload and score").click()
        expect(page.locator("main .errors").first).to_be_visible()
        page.wait_for_function(f"() => {announced} !== ''")
        tag, text = page.evaluate(focused)
        assert tag != "BODY" and text, (tag, text)
        assert page.evaluate("document.activeElement.closest('main') !== null")
        assert text in page.evaluate(announced)
        # Accepted: the entry's page replaces the form (same document, new URL); the
        # focus is on its "received" message, said by the live region.
        data = prediction_zip("brook", OPEN["brook"], splits=("val",), seed=40)
        page.locator("#id_method").fill("Accepted by XHR")
        page.locator("#id_file").set_input_files(
            files=[{"name": "brook.zip", "mimeType": "application/zip", "buffer": data}]
        )
        page.get_by_role("button", name="Upload and score").click()
        expect(page).to_have_url(re.compile(r"/submissions/\d+/$"))
        page.wait_for_function(f"() => {announced}.includes('received')")
        tag, text = page.evaluate(focused)
        assert tag != "BODY" and "received" in text, (tag, text)
        assert "Accepted by XHR. Submission #" in page.evaluate(announced)
        expect(page.locator("#page-announcer")).to_have_attribute("aria-live", "polite")
        # Until it is scored the page updates itself in the background, without a reload
        # (a meta refresh took the focus back to the top every 2 s; axe's meta-refresh):
        # the new status is focused and said.
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        page.evaluate("window.sameDocument = true")
        expect(page.locator("main .status-scored")).to_have_text("Scored")
        assert page.evaluate("window.sameDocument === true")
        page.wait_for_function(f"() => {announced}.includes('Scored')")
        tag, text = page.evaluate(focused)
        assert tag != "BODY" and "Scored" in text, (tag, text)
    finally:
        context.close()


# Each visible table of the admin page: where it ends, where its box ends.
ADMIN_TABLES = """() => Array.from(document.querySelectorAll("#content table"))
  .filter((t) => t.getClientRects().length)
  .map((t) => ({table: t.id || t.closest("[id]").id, right: t.getBoundingClientRect().right,
                boxRight: t.parentElement.getBoundingClientRect().right,
                page: document.documentElement.scrollWidth}))"""


def test_the_admins_wide_pages_fit_a_laptop(site, browser, stack, screenshots):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page, "axe_admin")
        for name, path in ADMIN_PAGES.items():
            page.goto(path.format(**site))
            tables = page.evaluate(ADMIN_TABLES)
            assert tables, name
            for found in tables:
                where = f"{name}: {found}"
                assert found["page"] <= 1280 and found["right"] <= 1280, where
                assert found["right"] <= found["boxRight"] + 1, where  # no sideways scroll
            shoot(page, screenshots, f"axe_1280_{name}_fits")
        # Every column of the submissions list is there (the score columns included).
        heads = page.locator("#result_list thead th").all_inner_texts()
        assert {"Method", "Ranked by", "Validation", "Test"} <= set(heads), heads
    finally:
        context.close()
