"""The guides in docs/ and the README stay in step with the code.

What the code defines is read from the code itself, never from a list kept here:
the environment variables from the ``env_*`` helper calls of settings.py (parsed, not
run), the management commands from the files Django finds them in, and the keys of
``challenge.toml`` from the importer's own tables of allowed keys. Each must be
documented where its reader looks for it, a documented setting or command must still
exist, and every relative link must lead to a file and heading that exist.
"""

import ast
import re
import tomllib
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import find_commands

from datasets.importing import CHALLENGE_KEYS, DATASET_KEYS
from datasets.services import SLICE_PARTS, expected_filename

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SETTINGS = ROOT / "challenge_site" / "settings.py"
OPERATORS = DOCS / "operators.md"
ORGANISERS = DOCS / "organisers.md"

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
SETTING_NAME = re.compile(r"`([A-Z][A-Z0-9_]+)`")


# --- Reading the code -----------------------------------------------------------------


def _called(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else None


def _helpers(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("env_")
    }


def _derived_suffixes(helpers: dict[str, ast.FunctionDef]) -> dict[str, list[str]]:
    """Helpers that read f"{prefix}SUFFIX" (env_storage: STORAGE -> STORAGE_BACKEND, ...)."""
    derived: dict[str, list[str]] = {}
    for name, function in helpers.items():
        params = {arg.arg for arg in function.args.args}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and _called(node) in helpers and node.args):
                continue
            first = node.args[0]
            if not isinstance(first, ast.JoinedStr) or len(first.values) != 2:
                continue
            head, tail = first.values
            if (
                isinstance(head, ast.FormattedValue)
                and isinstance(head.value, ast.Name)
                and head.value.id in params
                and isinstance(tail, ast.Constant)
            ):
                derived.setdefault(name, []).append(tail.value)
    return derived


def _loop_names(tree: ast.Module, helpers) -> set[str]:
    """``for name in ("A", "B"): env_str(name)``: the names the loop reads."""
    names = set()
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Tuple | ast.List):
            continue
        variables = {node.id for node in ast.walk(loop.target) if isinstance(node, ast.Name)}
        reads = any(
            isinstance(node, ast.Call)
            and _called(node) in helpers
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in variables
            for node in ast.walk(loop)
        )
        if reads:
            names |= {
                node.value
                for node in ast.walk(loop.iter)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SETTING_NAME.fullmatch(f"`{node.value}`")
            }
    return names


def env_settings() -> set[str]:
    """Every environment variable settings.py reads through its env_* helpers."""
    tree = ast.parse(SETTINGS.read_text())
    helpers = _helpers(tree)
    derived = _derived_suffixes(helpers)
    names = _loop_names(tree, helpers)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) in helpers and node.args):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            suffixes = derived.get(_called(node))
            names |= {first.value + s for s in suffixes} if suffixes else {first.value}
    return names


def management_commands() -> set[str]:
    """The commands of the project's own apps, found as Django finds them."""
    found = set()
    for app in apps.get_app_configs():
        path = Path(app.path)
        # (a virtualenv inside the checkout holds the third-party apps)
        if path.is_relative_to(ROOT) and "site-packages" not in path.parts:
            found |= set(find_commands(str(path / "management")))
    return found


# --- Reading the docs -----------------------------------------------------------------


def _without_code(text: str) -> str:
    return FENCE.sub("", text)


def _tables(text: str) -> list[list[list[str]]]:
    """Markdown tables outside code blocks, as rows of stripped cells (header first)."""
    tables, current = [], []
    for line in _without_code(text).splitlines() + [""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= set("-: ") for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _documented_settings(text: str) -> set[str]:
    """Names in the first column of the settings tables (``| variable | default |`` or
    ``| variable | unset |``); docker compose's own table (``needed by``) is apart."""
    names = set()
    for table in _tables(text):
        if table[0][:2] in (["variable", "default"], ["variable", "unset"]):
            for row in table[1:]:
                names |= set(SETTING_NAME.findall(row[0]))
    return names


def _compose_variables(text: str) -> set[str]:
    names = set()
    for table in _tables(text):
        if table[0][:2] == ["variable", "needed by"]:
            for row in table[1:]:
                names |= set(SETTING_NAME.findall(row[0]))
    return names


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _toml_blocks(text: str) -> list[dict]:
    return [tomllib.loads(block) for block in re.findall(r"^```toml\n(.*?)^```", text, re.M | re.S)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in _without_code(path.read_text()).splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", _without_code(path.read_text()))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


MARKDOWN = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


# --- Settings ---------------------------------------------------------------------------


def test_the_settings_reader_finds_what_settings_py_reads():
    """Guards the parser: names read directly, through a prefix and in a loop."""
    names = env_settings()
    assert {"DJANGO_DEBUG", "DATABASE_URL", "SUBMISSION_MAX_UPLOAD_BYTES", "LOGIN_RATE"} <= names
    assert {"STORAGE_BACKEND", "STORAGE_OPTIONS", "PRIVATE_STORAGE_OPTIONS"} <= names
    assert {"S3_BUCKET", "S3_OBJECT_ACL", "AWS_SECRET_ACCESS_KEY"} <= names
    assert len(names) > 60


def test_settings_py_reads_the_environment_only_through_its_helpers():
    """A bare os.environ or os.getenv would escape the check below."""
    tree = ast.parse(SETTINGS.read_text())
    helpers = _helpers(tree)
    inside = {id(node) for function in helpers.values() for node in ast.walk(function)}
    bare = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in ("environ", "getenv")
        and id(node) not in inside
    ]
    assert bare == [], f"settings.py lines {bare}: read the variable with an env_* helper"


def test_every_setting_is_documented_in_the_operators_guide():
    documented = _documented_settings(OPERATORS.read_text())
    missing = sorted(env_settings() - documented)
    assert missing == [], f"add to a settings table of docs/operators.md: {missing}"


def test_every_documented_setting_still_exists():
    stale = sorted(_documented_settings(OPERATORS.read_text()) - env_settings())
    assert stale == [], f"documented in docs/operators.md but not read by settings.py: {stale}"


def test_the_compose_variables_documented_are_the_compose_files():
    compose = (ROOT / "docker-compose.yml").read_text()
    documented = _compose_variables(OPERATORS.read_text())
    assert {"POSTGRES_PASSWORD", "WORKER_CONCURRENCY", "S3_SECRET_KEY"} <= documented
    assert sorted(name for name in documented if name not in compose) == []


# --- Management commands ----------------------------------------------------------------


def test_every_management_command_is_in_the_operators_table_and_no_other():
    section = _section(OPERATORS.read_text(), "## Management commands")
    listed = {
        row[0].strip("`").split()[0]
        for table in _tables(section)
        if table[0][0] == "command"
        for row in table[1:]
    }
    commands = management_commands()
    assert {"import_challenge", "rescore", "ensure_buckets"} <= commands
    assert sorted(commands - listed) == [], "add these to docs/operators.md"
    assert sorted(listed - commands) == [], "listed in docs/operators.md but gone"


# --- challenge.toml -----------------------------------------------------------------------


def test_every_challenge_toml_key_is_documented_for_organisers():
    text = ORGANISERS.read_text()
    in_examples = set()
    for block in _toml_blocks(text):
        in_examples |= block.keys()
        for table in block.get("datasets", {}).values():
            in_examples |= table.keys()
    mentioned = set(re.findall(r"`([a-z_]+)`", text))
    missing = sorted((CHALLENGE_KEYS.keys() | DATASET_KEYS.keys()) - in_examples - mentioned)
    assert missing == [], f"document these challenge.toml keys in docs/organisers.md: {missing}"


def test_the_organisers_examples_use_only_keys_the_importer_accepts():
    blocks = _toml_blocks(ORGANISERS.read_text())
    assert blocks, "docs/organisers.md has no challenge.toml example"
    for block in blocks:
        assert sorted(block.keys() - CHALLENGE_KEYS.keys() - {"datasets"}) == []
        for table in block.get("datasets", {}).values():
            assert sorted(table.keys() - DATASET_KEYS.keys()) == []


def test_the_full_example_sets_every_challenge_key():
    """The first example is the one to copy: every challenge-level key, and every
    dataset key of its task (tests/datasets/test_importing.py imports it)."""
    first = _toml_blocks(ORGANISERS.read_text())[0]
    assert sorted(CHALLENGE_KEYS.keys() - first.keys()) == []


def test_the_optional_slices_files_are_documented_for_organisers():
    text = ORGANISERS.read_text()
    for split, kind in SLICE_PARTS:
        assert expected_filename("NAME", split, kind) in text


# --- Links ------------------------------------------------------------------------------


def test_the_slugs_follow_githubs_rules():
    assert slug("`challenge.toml`: loading a challenge from a folder") == (
        "challengetoml-loading-a-challenge-from-a-folder"
    )
    assert slug("Who may see what, and when") == "who-may-see-what-and-when"
    assert slug("E-mail notifications") == "e-mail-notifications"


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(path):
    broken = []
    for link in relative_links(path):
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{link}: no file {file.relative_to(ROOT)}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{link}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert broken == []


def test_the_readme_and_the_index_link_every_guide():
    readme_links = {link.partition("#")[0] for link in relative_links(ROOT / "README.md")}
    guides = {f"docs/{path.name}" for path in DOCS.glob("*.md")}
    assert sorted(guides - readme_links) == []
    index_links = {link.partition("#")[0] for link in relative_links(DOCS / "README.md")}
    assert sorted({path.name for path in DOCS.glob("*.md")} - index_links - {"README.md"}) == []
