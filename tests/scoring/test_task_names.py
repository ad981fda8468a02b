"""No module outside a task's own code (scoring/tasks/) compares a task name.

What differs between tasks is asked of the task object (scoring.tasks.get_task); a
branch on a task's name elsewhere is one more place a new task would have to be added
to, and would be forgotten in. This test reads the source of every Python module of
the packages and every template, and fails on a comparison (==, !=, is, in, a match
case) against a task's name, as a literal string or as a ``Task.`` member.
"""

import ast
import re
from pathlib import Path

from scoring import Task
from scoring.tasks import TASKS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scoring", "challenge_site", "datasets", "client")
TASK_OWN = ROOT / "scoring" / "tasks"
NAMES = {str(task) for task in Task} | set(TASKS)
MEMBERS = {str(task.name) for task in Task} | {name.upper() for name in TASKS}


def _sources() -> list[Path]:
    files = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if TASK_OWN in path.parents or "migrations" in path.parts:
                continue
            files.append(path)
    return files


def _names_a_task(node: ast.AST) -> bool:
    """A task's name: the literal string, a ``Task.X`` member (any ``….Task.X``), or a
    tuple, list or set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in NAMES
    if isinstance(node, ast.Attribute):
        owner = node.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        return node.attr in MEMBERS and owner_name == "Task"
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_task(item) for item in node.elts)
    return False


def task_comparisons(source: str) -> list[int]:
    """Line numbers of the comparisons against a task name in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            if any(_names_a_task(operand) for operand in [node.left, *node.comparators]):
                lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and _names_a_task(node.value):
            lines.append(node.lineno)
    return sorted(lines)


_TEMPLATE_COMPARISON = re.compile(
    r"\btask\b\s*(==|!=)|(==|!=)\s*[\"'](?P<a>\w+)[\"']|[\"'](?P<b>\w+)[\"']\s*(==|!=)"
)


def template_comparisons(text: str) -> list[int]:
    """Line numbers of template tags comparing a task (``task ==``) or a task's name."""
    found = []
    for tag in re.finditer(r"\{%.*?%\}", text, re.S):
        for match in _TEMPLATE_COMPARISON.finditer(tag.group()):
            literal = match.group("a") or match.group("b")
            if literal is None or literal in NAMES:
                found.append(text.count("\n", 0, tag.start()) + 1)
    return sorted(set(found))


def test_the_checks_find_what_they_look_for():
    """Each form of comparison is found, and a mention that compares nothing is not."""
    found = task_comparisons(
        "if dataset.task == Task.CLASSIFICATION:\n    pass\n"
        "ok = task != 'regression'\n"
        "ok = scoring.Task.REGRESSION is task\n"
        "ok = task in (Task.CLASSIFICATION, 'x')\n"
        "match task:\n    case 'classification':\n        pass\n"
        "spec = {'task': 'classification'}\n"
        "name = Task.REGRESSION\n"
        "ok = kind == 'inputs'\n"
    )
    assert found == [1, 3, 4, 5, 7]
    assert template_comparisons(
        '{% if dataset.task == "classification" %}\n{% if x %}{% elif "regression" != t %}'
        '\n{% if kind == "inputs" %}<p>regression</p>'
    ) == [1, 2]


def test_no_module_outside_the_tasks_compares_a_task_name():
    offending = {
        str(path.relative_to(ROOT)): lines
        for path in _sources()
        if (lines := task_comparisons(path.read_text()))
    }
    assert not offending


def test_no_template_compares_a_task_name():
    offending = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "templates").rglob("*.html"))
        if (lines := template_comparisons(path.read_text()))
    }
    assert not offending
