"""Tests mirror modules: every source module has a test module of the same name, where
anyone looking for its tests would look first.

``challenge_site/<app>/<sub…>/<m>.py`` is tested in ``tests/<app>/<sub…>/test_<m>.py``
(a template tag library and a management command may sit one level up, in
``tests/<app>/test_<m>.py``); ``challenge_site/<m>.py`` in ``tests/test_<m>.py``;
``datasets/…`` and ``scoring/…`` in ``tests/datasets/…`` and ``tests/scoring/…``;
``client/puc_client/<m>.py`` in ``tests/client/test_<m>.py``. A private module's leading
underscore is dropped (``scoring/_accel.py`` → ``tests/scoring/test_accel.py``).
"""

from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
# Source folder → the test folder that mirrors it.
PACKAGES = {
    "challenge_site": "tests",
    "datasets": "tests/datasets",
    "scoring": "tests/scoring",
    "client/puc_client": "tests/client",
}
# Modules with nothing of their own to test, by name wherever they are.
EXEMPT_NAMES = {
    "__init__.py": "package markers and re-exports, tested through what they re-export",
    "__main__.py": "`python -m` entry points: one call to the tested cli's main()",
    "apps.py": "AppConfig declarations, loaded by every test that starts Django",
    "urls.py": "routing tables, exercised by every view test that resolves a URL",
    "api_urls.py": "routing tables, exercised by every API test that resolves a URL",
}
# Single modules, with the reason each needs no test module of its own.
EXEMPT_PATHS = {
    "challenge_site/wsgi.py": "the WSGI entry point: two lines, run by the stack tests",
    "scoring/_build.py": "builds the C extension the suite runs on; "
    "tests/scoring/test_native_parse.py checks its pow10 table",
}


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = PurePosixPath(path.relative_to(ROOT).as_posix())
            if "migrations" in relative.parts or "generated" in relative.parts:
                continue
            if relative.name in EXEMPT_NAMES or str(relative) in EXEMPT_PATHS:
                continue
            yield package, relative


def _test_name(relative: PurePosixPath) -> str:
    return "test_" + relative.name.lstrip("_")


def expected_tests(package: str, relative: PurePosixPath) -> list[PurePosixPath]:
    """Where the tests of one source module may be: the mirrored path first."""
    tests = PurePosixPath(PACKAGES[package])
    inner = relative.relative_to(package).parent
    name = _test_name(relative)
    places = [tests / inner / name]
    if inner.name == "templatetags":
        places.append(tests / inner.parent / name)
    if inner.parts[-2:] == ("management", "commands"):
        places.append(tests / inner.parent.parent / name)
    return places


def missing_tests() -> list[str]:
    return [
        f"{relative} -> {expected_tests(package, relative)[0]}"
        for package, relative in _sources()
        if not any((ROOT / place).is_file() for place in expected_tests(package, relative))
    ]


def test_the_mapping_finds_modules_where_the_rule_puts_them():
    def places(path):
        package = next(p for p in sorted(PACKAGES, key=len, reverse=True) if path.startswith(p))
        return [str(place) for place in expected_tests(package, PurePosixPath(path))]

    assert places("challenge_site/submissions/services.py") == [
        "tests/submissions/test_services.py"
    ]
    assert places("challenge_site/cache.py") == ["tests/test_cache.py"]
    assert places("challenge_site/leaderboard/demo/loader.py") == [
        "tests/leaderboard/demo/test_loader.py"
    ]
    assert places("challenge_site/challenges/templatetags/organiser_banner.py") == [
        "tests/challenges/templatetags/test_organiser_banner.py",
        "tests/challenges/test_organiser_banner.py",
    ]
    assert places("datasets/management/commands/import_challenge.py") == [
        "tests/datasets/management/commands/test_import_challenge.py",
        "tests/datasets/test_import_challenge.py",
    ]
    assert places("datasets/demo/epuc.py") == ["tests/datasets/demo/test_epuc.py"]
    assert places("scoring/tasks/binary.py") == ["tests/scoring/tasks/test_binary.py"]
    assert places("scoring/_accel.py") == ["tests/scoring/test_accel.py"]
    assert places("client/puc_client/check.py") == ["tests/client/test_check.py"]
    # The walk sees every package, skips migrations and the exempt modules.
    seen = {str(relative) for _, relative in _sources()}
    assert {"challenge_site/submissions/services.py", "datasets/services.py"} <= seen
    assert {"scoring/evaluate.py", "client/puc_client/cli.py"} <= seen
    assert not any("migrations" in path or path.endswith("__init__.py") for path in seen)
    assert "scoring/_build.py" not in seen
    for path in EXEMPT_PATHS:
        assert (ROOT / path).is_file(), path


def test_every_source_module_has_its_test_module():
    missing = missing_tests()
    print("\n".join(["modules without their test module:", *missing]))
    assert missing == []
