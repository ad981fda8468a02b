"""A regression entry scored at a dataset's quantile levels, in Chromium against the live
gunicorn at a laptop's width (1280 px) and a phone's (390 px): the retention and
risk–coverage pictures (spec §8) load as SVG under the site's policy, the coverage at the
levels is drawn beside its table, with no console error (a refused style or resource) and
no sideways scrolling; a visitor sees no curve while the validation targets are hidden. Full-page screenshots go to
test-output/screenshots/selective_<1280|390>[_tables].png (the tables opened).

A challenge of its own ("retention", validation phase): "gauge", a regression dataset with
quantile levels 0.05 … 0.95, and an entry whose rows are quantile rows at those levels for
some examples and Gaussians for the rest, each as wide as its own noise.
"""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from tests.factories import make_zip

from .client import Client
from .conftest import make_user, wait_final
from .test_browser import WAIT_MS, browser, shoot  # noqa: F401 - browser is a fixture
from .test_browser_multiclass import RECORD_VIOLATIONS, VIEWPORTS
from .test_browser_widths import WIDTH_PROBLEMS, login

pytestmark = pytest.mark.browser

LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]
Z = [-1.6448536269514729, -0.6744897501960817, 0.0, 0.6744897501960817, 1.6448536269514729]


def _lines(values) -> bytes:
    return "".join(f"{float(v)!r}\n" for v in values).encode()


def write_challenge(folder) -> bytes:
    """The challenge folder for import_challenge; returns the validation predictions."""
    now = datetime.now(UTC).replace(microsecond=0)
    dates = {"start": -2, "test_start": 10, "deadline": 20}
    lines = ['slug = "retention"', 'title = "Retention of a regression entry"']
    lines += [
        f"{key} = {(now + timedelta(days=days)).strftime('%Y-%m-%dT%H:%M:%SZ')}"
        for key, days in dates.items()
    ]
    lines += ["", "[datasets.gauge]", 'task = "regression"', f"quantile_levels = {LEVELS}"]
    (folder / "gauge").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(27)
    predictions = b""
    for split, rows in (("train", 300), ("val", 400), ("test", 200)):
        x = rng.uniform(-2, 2, rows)
        noise = 0.2 + np.abs(x)  # heteroscedastic: the entry's spread should find it
        t = np.sin(x) + noise * rng.normal(size=rows)
        (folder / "gauge" / f"gauge_{split}_inputs.txt").write_bytes(_lines(x))
        (folder / "gauge" / f"gauge_{split}_targets.txt").write_bytes(_lines(t))
        if split == "val":
            rows_text = []
            for i, (m, s) in enumerate(
                zip(np.sin(x).tolist(), (noise * 0.8).tolist(), strict=True)
            ):
                if i % 2:
                    pairs = " ".join(f"{a!r} {m + z * s!r}" for a, z in zip(LEVELS, Z, strict=True))
                    rows_text.append(f"0 {pairs}\n")
                else:
                    rows_text.append(f"1 {m!r} {s * s!r}\n")
            predictions = "".join(rows_text).encode()
    (folder / "challenge.toml").write_text("\n".join(lines) + "\n")
    return predictions


@pytest.fixture(scope="module")
def entry(stack):
    folder = stack.root / "import" / "retention"
    predictions = write_challenge(folder)
    stack.manage("import_challenge", str(folder))
    token = make_user("olga")[1]
    make_user("oscar", staff=True)  # an organiser (a superuser organises every challenge)
    data = make_zip({"gauge_val_predict.txt": predictions})
    response = Client(stack.base_url, token=token).api_submit(
        "retention", data, dataset="gauge", method="Quantiles from a noise model"
    )
    assert response.status == 201, response.text
    pk = response.json()["id"]
    assert set(wait_final(stack, [pk]).values()) == {"scored"}
    return pk


@pytest.fixture(params=sorted(VIEWPORTS), ids=lambda width: f"{width}px")
def width(request):
    return request.param


def test_retention_and_coverage_pictures_under_the_policy(
    browser,  # noqa: F811 - the fixture imported above
    stack,
    entry,
    width,
    screenshots,
):
    context = browser.new_context(
        base_url=stack.base_url, viewport={"width": width, "height": VIEWPORTS[width]}
    )
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        # The validation targets are hidden in the validation phase: the curves, which give
        # each example's error in an order the entry chose, wait for them (a visitor sees
        # the scores but no curve); the organisers see them.
        page.goto(f"/submissions/{entry}/")
        assert page.locator("main figure img[src$='retention.svg']").count() == 0
        assert "Nlpd" in page.locator("main").inner_text() or "nlpd" in page.content()
        login(page, "oscar")
        response = page.goto(f"/submissions/{entry}/")
        assert response.status == 200
        shoot(page, screenshots, f"selective_{width}")
        shown = page.evaluate(
            """() => Array.from(document.querySelectorAll("main figure img"))
              .map(i => [i.currentSrc.split("/").pop(), i.naturalWidth > 0, i.alt])"""
        )
        names = [src for src, _, _ in shown]
        assert "retention.svg" in names and "risk_coverage.svg" in names, names
        assert all(loaded and alt for _, loaded, alt in shown), shown
        # The coverage at the levels: drawn, with its table of nominal against observed.
        coverage = page.locator("main figure.coverage")
        assert coverage.count() == 1
        assert coverage.locator("svg").count() == 1
        assert coverage.locator("tbody tr").count() == 2  # cov50 and cov90
        assert "cov90" in coverage.inner_text()
        page.evaluate("document.querySelectorAll('main details').forEach(d => d.open = true)")
        shoot(page, screenshots, f"selective_{width}_tables")
        assert page.evaluate(WIDTH_PROBLEMS) == []
        assert page.evaluate("window.__violations") == []
        assert errors == [], errors
    finally:
        context.close()
    for kind in ("retention", "risk_coverage"):
        answer = Client(stack.base_url).get(f"/submissions/{entry}/plots/val/{kind}.svg")
        assert answer.status == 404, kind  # (a visitor: the validation targets are hidden)
