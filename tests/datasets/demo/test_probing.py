"""datasets.demo.probing: the running demo challenge with every defence against
leaderboard probing (a public part, the Ladder, final selections)."""

import pytest

from challenge_site.challenges.models import Challenge
from datasets.demo import covshift, probing
from datasets.importing import import_challenge


def test_the_challenge_has_every_defence_and_two_new_datasets():
    built = probing.build(2004)
    settings = built.settings
    assert (settings["slug"], settings["feedback"], settings["final_entries"]) == (
        "probing",
        "ladder",
        2,
    )
    assert settings["test_public_fraction"] == 0.5
    assert [d.name for d in built.datasets] == ["udon", "wheat"]
    # New draws: not the covshift challenge's own data.
    own, theirs = built.datasets[0].splits["train"][1], covshift.udon(2004).splits["train"][1]
    assert own.shape == theirs.shape and not (own == theirs).all()


@pytest.mark.django_db
def test_it_imports_as_a_challenge_under_the_ladder(generated):
    import_challenge(generated / "probing")
    challenge = Challenge.objects.get(slug="probing")
    assert (challenge.feedback, challenge.final_entries, challenge.test_public_fraction) == (
        "ladder",
        2,
        0.5,
    )
    assert [d.name for d in challenge.datasets.all()] == ["udon", "wheat"]
    assert challenge.deadline.year == 2030
