"""Schemathesis against the real stack: gunicorn (DJANGO_DEBUG=0), PostgreSQL, Redis and a
Celery worker scoring the uploads, as an anonymous visitor, a participant and an organiser;
the same runs and checks as tests/api_contract/test_schemathesis.py (its runner and world).

Each role has a world of its own in the stack's database (slugs and users suffixed with
the role), built before the first run, its uploads scored by the worker; a role's run is
also checked against the other worlds' secrets. gunicorn is restarted with the API's rate
limits raised for this module (and again with the stack's own after it): a run sends far
more than a person would in a minute, and every answer past the limit would be a 429.
Counts go to /tmp/schemathesis_counts_stack.json.
"""

from datetime import UTC, datetime

import pytest

from tests.api_contract import runner, world

from .conftest import orm, wait_final

RAISED = {
    "API_THROTTLE_USER": "100000/minute",
    "API_THROTTLE_ANON": "100000/minute",
    "API_THROTTLE_UPLOAD": "100000/minute",
}


def restart_web(stack, env: dict[str, str | None]) -> None:
    stack.stop_process("web")
    for key, value in env.items():
        if value is None:
            stack.env.pop(key, None)
        else:
            stack.env[key] = value
    stack.start_web()
    stack.wait_web_ready()


@pytest.fixture(scope="module")
def unthrottled(stack):
    saved = {key: stack.env.get(key) for key in RAISED}
    restart_web(stack, RAISED)
    try:
        yield stack
    finally:
        restart_web(stack, saved)


@pytest.fixture(scope="module")
def worlds(unthrottled):
    now = datetime.now(UTC)
    # Seeds apart: the worlds' hidden scores differ (one organiser sees their own only).
    built = {
        role: orm(lambda role=role, seed=seed: world.build(now=now, tag=f"-{role}", seed=seed))
        for seed, role in enumerate(world.ROLES, start=11)
    }
    pending = [pk for each in built.values() for pk in each.pending]
    finished = wait_final(unthrottled, pending)
    # The worker scored them: the valid uploads scored, the broken one invalid.
    assert sorted(finished.values()) == sorted(["invalid", "scored", "scored"] * 3)
    for each in built.values():
        orm(lambda each=each: world.add_hidden_scores(each))
    return built


@pytest.mark.parametrize("role", world.ROLES)
def test_every_answer_conforms_and_leaks_nothing(role, unthrottled, worlds, tmp_path):
    others = tuple(each for name, each in worlds.items() if name != role)
    outcome = runner.run(
        base_url=unthrottled.base_url,
        role=role,
        world=worlds[role],
        folder=tmp_path / role,
        others=others,
    )
    totals = runner.record("stack", outcome)
    print(
        f"\nschemathesis on the stack as {role}: {outcome.operations} operations, "
        f"{outcome.examples} examples, {outcome.checks} checks; statuses {outcome.statuses}; "
        f"totals so far {totals['examples']} examples, {totals['checks']} checks"
    )
    print(outcome.output[-8000:])
    advisory = outcome.failing(names=set(outcome.by_check) - set(runner.REQUIRED_CHECKS))
    print("other checks' findings (reported, not failing):", *advisory, sep="\n  ")
    assert outcome.errors == []
    assert outcome.failing() == [], "\n".join(outcome.failing())
    assert outcome.operations >= 10 and outcome.tested == outcome.operations, outcome.output
    assert outcome.examples >= outcome.operations and outcome.checks > outcome.examples
    assert outcome.by_check.get("no_hidden_data", {}).get("success", 0) > 0
    assert any(code.startswith("2") for code in outcome.statuses), outcome.statuses
    assert "500" not in outcome.statuses and "429" not in outcome.statuses, outcome.statuses
    if role == "participant":  # uploads accepted and scored by the worker, not only refused
        assert "201" in outcome.statuses, outcome.statuses
