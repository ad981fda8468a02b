"""Every page at a phone's width (390 × 844) and a laptop's (1280 × 800), in Chromium
against the live gunicorn: no page scrolls sideways (wide tables scroll inside their own
box), every column of every table can be reached, a leaderboard keeps its rank and method
columns (and its header row) in view while it scrolls, and at 1280 px a board with every
loss column shows them all without scrolling. Also: the submit form's progress bar stays
hidden until an upload starts, the favicon answers, and the main menu works on a phone,
with and without JavaScript, by mouse and by keyboard.

Two challenges of their own: "widths" (a classification and a regression dataset, test
entries with long names, results published) and "widths-ladder" (in its test phase, its
public board shown through the Ladder). Full-page screenshots go to
test-output/screenshots/width_<390|1280>_<page>.png.
"""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from challenge_site.challenges.models import Challenge
from challenge_site.challenges.services import publish_results

from .client import Client
from .conftest import PASSWORD, import_challenge, make_user, orm, wait_final
from .data import DatasetSpec, in_test_phase, prediction_zip
from .harness import wait_until
from .test_browser import WAIT_MS, browser, shoot  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.browser

VIEWPORTS = {390: 844, 1280: 800}
WIDTHS = {"pebbles": DatasetSpec("classification", (60, 40, 150), seed=6)}
WIDTHS["ripples"] = DatasetSpec("regression", (60, 40, 100), seed=7)
LADDER = {"gamma": DatasetSpec("classification", (40, 30, 120), seed=8)}
# (user, dataset, method, authors): long names, one of them a single 55-letter word.
ENTRIES = [
    (
        "wendy",
        "pebbles",
        "Gradient-boosted trees with isotonic recalibration (5-fold cross-fitting)",
        "Wendy Carlos, Xavier Leroy & the Uncertainty Reading Group",
    ),
    ("wendy", "pebbles", "heteroscedastic_gaussian_process_with_input_warping_v2", "W. Carlos"),
    ("wendy", "pebbles", "Logistic regression", "W. Carlos"),
    ("xavier", "pebbles", "k-NN class frequencies", "X. Leroy"),
    ("xavier", "pebbles", "Bayesian neural network, 10 000 posterior samples averaged", ""),
    ("wendy", "ripples", "Gaussian process regression", "W. Carlos"),
    ("xavier", "ripples", "Quantile regression forest", "X. Leroy"),
]


@pytest.fixture(scope="module")
def site(stack):
    """Both challenges, their entries scored, the results of "widths" published (with the
    bootstrap intervals that widen every score cell); {"entry": a pk of wendy's}."""
    tokens = {name: make_user(name)[1] for name in ("wendy", "xavier")}
    import_challenge(stack, in_test_phase("widths", "Widths: every page on every screen", WIDTHS))
    ladder = in_test_phase(
        "widths-ladder",
        "Widths: a board through the Ladder",
        LADDER,
        test_public_fraction=0.5,
        feedback="ladder",
    )
    import_challenge(stack, ladder)
    pks = []
    for seed, (user, dataset, method, authors) in enumerate(ENTRIES, start=1):
        data = prediction_zip(dataset, WIDTHS[dataset], splits=("test",), seed=seed)
        response = Client(stack.base_url, token=tokens[user]).api_submit(
            "widths", data, dataset=dataset, method=method, authors=authors
        )
        assert response.status == 201, response.text
        pks.append(response.json()["id"])
    for seed, (user, method) in enumerate(
        [("wendy", "A ladder entry with a rather long descriptive name"), ("xavier", "Probe")]
    ):
        data = prediction_zip("gamma", LADDER["gamma"], splits=("test",), seed=20 + seed)
        response = Client(stack.base_url, token=tokens[user]).api_submit(
            "widths-ladder", data, method=method
        )
        assert response.status == 201, response.text
        pks.append(response.json()["id"])
    assert set(wait_final(stack, pks).values()) == {"scored"}

    def publish():
        challenge = Challenge.objects.get(slug="widths")
        challenge.deadline = timezone.now() - timedelta(seconds=1)
        challenge.save(update_fields=["deadline"])
        publish_results(challenge=challenge, user=None, now=timezone.now(), via="widths test")

    orm(publish)
    board = "/api/v1/challenges/widths/datasets/pebbles/leaderboard/?split=test"

    def intervals_ready():
        rows = Client(stack.base_url).get(board).json()["results"]
        values = [value for row in rows for value in row["intervals"].values()]
        return len(rows) == 6 and values and None not in values

    wait_until(intervals_ready, timeout=90, interval=1, what="the pebbles test intervals")
    return {"entry": pks[0]}


BOARD = "/challenges/widths/datasets/pebbles/leaderboard/?split=test"
BOARDS = {
    "leaderboard": BOARD,
    "leaderboard_best": BOARD + "&view=best",
    "leaderboard_regression": "/challenges/widths/datasets/ripples/leaderboard/?split=test",
    "ladder": "/challenges/widths-ladder/datasets/gamma/leaderboard/?split=public",
}
PAGES = {
    "home": "/",
    "leaderboards": "/leaderboards/",
    "formats": "/formats/",
    "challenge": "/challenges/widths/",
    "challenge_data": "/challenges/widths/data/",
    "challenge_evaluation": "/challenges/widths/evaluation/",
    "challenge_rules": "/challenges/widths/rules/",
    "challenge_news": "/challenges/widths/news/",
    "dataset": "/challenges/widths/datasets/pebbles/",
    **BOARDS,
    "results": "/challenges/widths/results/",
    "statistics": "/challenges/widths/statistics/",
    "submit": "/challenges/widths-ladder/submit/",
    "entry": "/submissions/{entry}/",
    "my_submissions": "/accounts/submissions/",
    "profile": "/accounts/profile/",
    "password_change": "/accounts/password_change/",
}
ANONYMOUS_PAGES = {
    "login": "/accounts/login/",
    "signup": "/accounts/signup/",
    "password_reset": "/accounts/password_reset/",
}

# Problems with the page's width: a page wider than the window, a table whose last
# header cell cannot be brought into view (outside any box that scrolls, or past the end
# of its box once scrolled all the way).
WIDTH_PROBLEMS = """() => {
  const problems = [];
  const root = document.documentElement;
  const W = root.clientWidth;
  if (root.scrollWidth > W) problems.push(`the page is ${root.scrollWidth} px wide in ${W} px`);
  for (const table of document.querySelectorAll("main table")) {
    if (table.getClientRects().length === 0) continue;  // not shown
    const name = (table.caption ? table.caption.textContent : table.className).trim().slice(0, 50);
    const heads = table.querySelectorAll("thead th");
    const last = heads.length ? heads[heads.length - 1] : table;
    const box = table.closest(".table-wrap");
    if (!box) {
      const right = table.getBoundingClientRect().right;
      if (right > W + 0.5) problems.push(`${name}: ends at ${right} px, outside any scrolling box`);
      continue;
    }
    if (!["auto", "scroll"].includes(getComputedStyle(box).overflowX)) {
      problems.push(`${name}: its box does not scroll`);
    }
    const before = box.scrollLeft;
    box.scrollLeft = box.scrollWidth;
    const end = last.getBoundingClientRect().right;
    const boxRight = box.getBoundingClientRect().right;
    if (end > boxRight + 1 || end > W + 1) {
      problems.push(`${name}: the last column ends at ${end} px, its box at ${boxRight} px`);
    }
    box.scrollLeft = before;
  }
  return problems;
}"""


def login(page, username: str = "wendy") -> None:
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
    context = browser.new_context(
        base_url=stack.base_url, viewport={"width": width, "height": VIEWPORTS[width]}
    )
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        context.close()


def visit(page, path: str, errors: list[str]) -> None:
    response = page.goto(path)
    assert response.status == 200, f"{path}: {response.status}"
    assert not errors, f"{path}: {errors}"


def test_every_page_fits_at_both_widths(site, context, width, screenshots):
    print(f"\nscreenshots: {screenshots}/width_{width}_*.png")
    page = context.new_page()
    errors = []  # console errors: a refused resource (CSP), a 404 (favicon), a script error
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    problems = {}
    for name, path in ANONYMOUS_PAGES.items():
        visit(page, path, errors)
        shoot(page, screenshots, f"width_{width}_{name}")
        problems[name] = page.evaluate(WIDTH_PROBLEMS)
    login(page)
    for name, path in PAGES.items():
        visit(page, path.format(**site), errors)
        shoot(page, screenshots, f"width_{width}_{name}")
        # With every disclosure open (the forest plot, a plot's numbers) too.
        page.evaluate("document.querySelectorAll('main details').forEach(d => { d.open = true; })")
        problems[name] = page.evaluate(WIDTH_PROBLEMS)
    assert not {name: found for name, found in problems.items() if found}
    assert not errors


# Where the rank and method cells of a board's first body row and of its header are,
# before and after its box is scrolled to the right end; whether they are the topmost
# element at their centre (opaque, above the cells passing under them).
STICKY = """(box) => {
  const row = box.querySelector("tbody tr");
  const cells = {
    rank: row.querySelector("td"), method: row.querySelector("th[scope=row]"),
    headRank: box.querySelector("thead th"), headMethod: box.querySelector("thead th.board-method"),
  };
  const left = () => Object.fromEntries(
    Object.entries(cells).map(([key, cell]) => [key, cell.getBoundingClientRect().left]));
  box.scrollIntoView({block: "start"});  // elementFromPoint sees the window only
  const before = left();
  box.scrollLeft = box.scrollWidth;
  const after = left();
  const onTop = Object.fromEntries(Object.entries(cells).map(([key, cell]) => {
    const r = cell.getBoundingClientRect();
    return [key, cell.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2))];
  }));
  const last = Array.from(box.querySelectorAll("thead th")).pop().getBoundingClientRect();
  return {
    before, after, onTop, scrolled: box.scrollLeft,
    rankRight: cells.rank.getBoundingClientRect().right,
    keptWidth: cells.method.getBoundingClientRect().right - box.getBoundingClientRect().left,
    boxLeft: box.getBoundingClientRect().left, boxRight: box.getBoundingClientRect().right,
    boxWidth: box.clientWidth, lastRight: last.right,
    fits: box.scrollWidth <= box.clientWidth, viewport: document.documentElement.clientWidth,
    textWidth: document.querySelector("main h1").getBoundingClientRect().width,
    stickyHead: getComputedStyle(cells.headMethod).position,
  };
}"""


def test_leaderboards_scroll_inside_with_rank_and_method_kept(site, context, width, screenshots):
    page = context.new_page()
    login(page)
    for name, path in {**BOARDS, "results": "/challenges/widths/results/"}.items():
        page.goto(path)
        boxes = page.locator(".board-wrap")
        assert boxes.count() >= 1, name
        for index in range(boxes.count()):
            found = boxes.nth(index).evaluate(STICKY)
            where = f"{name} #{index}: {found}"
            assert found["stickyHead"] == "sticky", where
            # The rank column stays at the box's left edge, the method right after it.
            assert abs(found["after"]["rank"] - found["before"]["rank"]) <= 1, where
            assert abs(found["after"]["rank"] - found["boxLeft"]) <= 1, where
            if found["scrolled"]:
                assert abs(found["after"]["method"] - found["rankRight"]) <= 1, where
            if name != "leaderboard_best":  # there the rank interval passes under the method
                assert abs(found["after"]["method"] - found["before"]["method"]) <= 1, where
            assert abs(found["after"]["headMethod"] - found["after"]["method"]) <= 1, where
            assert all(found["onTop"].values()), where
            # Scrolled to the end, the last column shows in full.
            assert found["lastRight"] <= found["boxRight"] + 1, where
            assert found["lastRight"] <= found["viewport"] + 1, where
            if width == 390:
                # A phone scrolls every board; the kept columns leave most of it to the rest.
                assert found["scrolled"] > 50, where
                assert found["keptWidth"] <= 0.6 * found["boxWidth"], where
            elif name.startswith("leaderboard"):
                # 1280 px: every loss column in view without scrolling (ece was cut off
                # when the board was held to the text column's width).
                assert found["fits"], where
                if name in ("leaderboard", "leaderboard_best"):  # every classification loss
                    assert found["boxWidth"] > found["textWidth"], where
        if width == 390 and name in ("leaderboard", "ladder"):
            shoot(page, screenshots, f"width_{width}_{name}_scrolled")

    # The header row stays at the top of the box while its rows scroll under it.
    page.set_viewport_size({"width": width, "height": 420})
    page.goto(BOARD)
    box = page.locator(".board-wrap")
    heights = box.evaluate("b => [b.scrollHeight, b.clientHeight]")
    assert heights[0] > heights[1]  # 85 % of 420 px: the board scrolls down inside
    found = box.evaluate(
        """(b) => {
          b.scrollIntoView({block: "start"});
          b.scrollTop = b.scrollHeight;
          const head = b.querySelector("thead th:nth-child(3)").getBoundingClientRect();
          const top = b.getBoundingClientRect().top;
          const hit = document.elementFromPoint(head.left + head.width / 2, head.top + head.height / 2);
          return {scrolled: b.scrollTop, headTop: head.top, boxTop: top, onTop: !!(hit && hit.closest("thead"))};
        }"""
    )
    assert found["scrolled"] > 0, found
    assert abs(found["headTop"] - found["boxTop"]) <= 1 and found["onTop"], found


def test_the_progress_bar_shows_only_while_uploading(site, browser, stack, screenshots):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page)
        page.goto("/challenges/widths-ladder/submit/")
        box = page.locator(".upload-progress")
        expect(box).to_be_attached()
        expect(box).to_be_hidden()  # the CSS's display:flex used to override `hidden`
        expect(page.locator("#upload-progress")).to_be_hidden()
        page.locator("#id_dataset").select_option("gamma")
        page.locator("#id_method").fill("Not a zip")
        page.locator("#id_file").set_input_files(
            files=[{"name": "p.zip", "mimeType": "application/zip", "buffer": b"not a zip"}]
        )
        held = []  # the upload, held back until the bar has been seen
        page.route("**/challenges/widths-ladder/submit/", lambda route: held.append(route))
        page.get_by_role("button", name="Upload and score").click()
        expect(box).to_be_visible()
        expect(page.get_by_role("button", name="Upload and score")).to_be_disabled()
        for _ in range(100):  # Playwright runs the route's handler while the page waits
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the upload never reached the route"
        shoot(page, screenshots, "width_390_submit_uploading")
        held[0].continue_()
        # The refusal replaces the form: its message shown, the bar hidden again.
        expect(page.locator("main .errors").first).to_be_visible()
        expect(page.locator(".upload-progress")).to_be_hidden()
        expect(page.get_by_role("button", name="Upload and score")).to_be_enabled()
    finally:
        context.close()


def test_favicon(site, context, stack):
    page = context.new_page()
    page.goto("/")
    icon = page.locator("link[rel=icon]")
    href = icon.get_attribute("href")
    assert icon.get_attribute("type") == "image/svg+xml"
    answer = page.request.get(href)
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("image/svg+xml")
    assert answer.body().lstrip().startswith(b"<svg")
    # /favicon.ico (asked for by browsers on answers that are not pages) leads to it.
    redirect = Client(stack.base_url).get("/favicon.ico")
    assert redirect.status == 302 and redirect.headers["Location"] == href
    assert page.request.get("/favicon.ico").status == 200


def _menu_items(page):
    return page.locator("#site-menu > li > a, #site-menu > li button")


def _within(page, locator, width: int) -> None:
    """Every item shown, inside the window's width, and clickable (nothing covers it)."""
    assert locator.count() >= 5
    for index in range(locator.count()):
        item = locator.nth(index)
        expect(item).to_be_visible()
        box = item.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (item.inner_text(), box)
        item.click(trial=True)


def test_the_main_menu_on_a_phone(site, browser, stack, screenshots):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page)
        page.goto("/")
        toggle = page.get_by_role("button", name="Menu")
        menu = page.locator("#site-menu")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(menu).to_be_hidden()
        header = page.locator(".site-header").bounding_box()
        assert header["height"] < 120  # the closed menu is one row under the site's name
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        _within(page, _menu_items(page), 390)
        shoot(page, screenshots, "width_390_menu_open")
        menu.get_by_role("link", name="My submissions").click()
        page.wait_for_url("**/accounts/submissions/")
        expect(menu).to_be_hidden()

        # By keyboard: Enter opens it, Tab reaches its first link, Escape closes it and
        # gives the focus back to the button.
        toggle.focus()
        page.keyboard.press("Enter")
        expect(toggle).to_have_attribute("aria-expanded", "true")
        page.keyboard.press("Tab")
        expect(menu.get_by_role("link", name="Challenges")).to_be_focused()
        page.keyboard.press("Escape")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(toggle).to_be_focused()
        expect(menu).to_be_hidden()
    finally:
        context.close()

    # Without JavaScript there is no button: the links wrap under the site's name.
    context = browser.new_context(
        base_url=stack.base_url, viewport={"width": 390, "height": 844}, java_script_enabled=False
    )
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page)
        page.goto("/")
        expect(page.locator(".nav-toggle")).to_be_hidden()
        _within(page, _menu_items(page), 390)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        shoot(page, screenshots, "width_390_menu_without_javascript")
    finally:
        context.close()


def test_the_main_menu_on_a_laptop(site, browser, stack):  # noqa: F811
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        login(page)
        page.goto("/")
        expect(page.locator(".nav-toggle")).to_be_hidden()
        _within(page, _menu_items(page), 1280)
        tops = {round(_menu_items(page).nth(i).bounding_box()["y"]) for i in range(5)}
        assert len(tops) == 1  # one row
    finally:
        context.close()
