"""Rules written once: no module of any app and no template decides who may see what on
its own. The policy modules (challenges, datasets and submissions ``policy.py``) hold
every such rule; everything else asks them.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("challenge_site", "datasets")
POLICIES = [
    ROOT / "challenge_site" / "challenges" / "policy.py",
    ROOT / "datasets" / "policy.py",
    ROOT / "challenge_site" / "submissions" / "policy.py",
]
SOURCES = [
    path
    for folder in APPS
    for path in (ROOT / folder).rglob("*.py")
    if "migrations" not in path.parts and path not in POLICIES
]
TEMPLATES = list((ROOT / "templates").rglob("*.html")) + list((ROOT / "templates").rglob("*.txt"))

# Deciding by staff status instead of by organising the challenge.
STAFF = re.compile(r"\.is_staff\b(?!\")")
# The listed-entries rule (and its parts) written by hand instead of asking the
# submissions policy's builders (listed_q, page_public_q, valid_q, standing_q, …).
LISTED_IN_CODE = re.compile(
    r"status=Status\.SCORED|moderation(__in)?=(Moderation\.|\[)|withdrawn_at__isnull=True"
)
LISTED_IN_TEMPLATES = re.compile(r"status == \"scored\"|moderation == \"none\"")
ALLOWED = {
    # The admin link in the header is navigation, not a rule about challenge data.
    ("templates/base.html", "{% if user.is_staff %}<li><a href=\"{% url 'admin:index' %}\">"),
    # The staff status given to a new co-organiser (the door to the admin, not a right).
    ("challenge_site/accounts/services.py", "if not user.is_staff:"),
    ("challenge_site/accounts/services.py", "user.is_staff = True"),
    # The size of a request body the admin's door admits (dataset files), read before any
    # view: staff status, as the admin itself asks (challenges.policy imports this module).
    ("challenge_site/middleware.py", "if declared > limit and not request.user.is_staff:"),
}


def _lines(paths):
    for path in paths:
        for line in path.read_text().splitlines():
            yield str(path.relative_to(ROOT)), line


def _allowed(path: str, line: str) -> bool:
    return any(path == allowed and snippet in line for allowed, snippet in ALLOWED)


def test_the_scan_covers_every_app_and_finds_the_rules_where_they_are_written():
    scanned = {Path(path).parts[1] for path, _ in _lines(SOURCES) if path.startswith("challenge_")}
    assert {"accounts", "announcements", "challenges", "leaderboard", "notifications"} <= scanned
    assert {"submissions", "teams"} <= scanned
    assert any(path.startswith("datasets/") for path, _ in _lines(SOURCES))
    # The patterns match the rules as the policy modules write them.
    policy_lines = [line for _, line in _lines(POLICIES)]
    assert any(STAFF.search(line) for line in policy_lines)
    for part in ("status=Status.SCORED", "moderation=Moderation.", "withdrawn_at__isnull=True"):
        assert any(part in line and LISTED_IN_CODE.search(line) for line in policy_lines), part


def test_no_module_or_template_decides_visibility_on_its_own():
    offending = [
        (path, line.strip())
        for path, line in _lines(SOURCES + TEMPLATES)
        if STAFF.search(line) and "list_display" not in line and not _allowed(path, line)
    ]
    assert offending == []


def test_no_module_or_template_picks_the_listed_entries_itself():
    # Database constraints and partial indexes (``condition=``) describe the schema.
    in_code = [
        (path, line.strip())
        for path, line in _lines(SOURCES)
        if LISTED_IN_CODE.search(line) and "condition=" not in line
    ]
    in_templates = [
        (path, line.strip()) for path, line in _lines(TEMPLATES) if LISTED_IN_TEMPLATES.search(line)
    ]
    assert in_code + in_templates == []
