"""teams.signals: what a join means for the apps above teams, told through signals they
connect in their AppConfig.ready(), in the order a join sends them (teams imports none
of them; what the submissions app does then: tests/submissions/test_team_entries.py)."""

from challenge_site.teams import services, signals
from challenge_site.teams.models import Team
from tests.factories import VALIDATION, make_challenge, make_user


def answered_by(signal, team, user) -> list[str]:
    responses = signal.send(
        sender=Team, team=team, user=user, challenge=team.challenge, now=VALIDATION
    )
    return [f"{receiver.__module__}.{receiver.__name__}" for receiver, _ in responses]


def test_the_submissions_answer_each_step_of_a_join(db):
    challenge = make_challenge()
    team = services.create(challenge=challenge, user=make_user("ada"), name="Gaze", now=VALIDATION)
    bob = make_user("bob")
    assert answered_by(signals.joiner_locking, team, bob) == [
        "challenge_site.submissions.team_entries.lock_quota_rows"
    ]
    assert answered_by(signals.joining, team, bob) == [
        "challenge_site.submissions.team_entries.check_limits"
    ]
    assert answered_by(signals.joined, team, bob) == [
        "challenge_site.submissions.team_entries.take_entries"
    ]


def test_a_join_sends_them_in_order(db):
    challenge = make_challenge()
    team = services.create(challenge=challenge, user=make_user("ada"), name="Gaze", now=VALIDATION)
    heard = []

    def listen(name):
        def receiver(sender, **kwargs):
            heard.append((name, kwargs["user"].username, kwargs["challenge"].pk))

        return receiver

    listeners = {name: listen(name) for name in ("joiner_locking", "joining", "joined")}
    for name, receiver in listeners.items():
        getattr(signals, name).connect(receiver, sender=Team)
    try:
        services.join(team=team, user=make_user("bob"), now=VALIDATION)
    finally:
        for name, receiver in listeners.items():
            getattr(signals, name).disconnect(receiver, sender=Team)
    assert heard == [
        ("joiner_locking", "bob", challenge.pk),
        ("joining", "bob", challenge.pk),
        ("joined", "bob", challenge.pk),
    ]
