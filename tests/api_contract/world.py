"""The world schemathesis explores: challenges in every state the API distinguishes, dated
from the real clock (the server under test reads it), and what no role may ever receive.

- ``running``: in its test phase, 40 % of its test examples public; ada's and bob's real
  uploads (scored through the pipeline: eagerly here, by the stack's worker there), one of
  ada's invalid; bob's team; organised by ``org`` (the organiser role).
- ``forming``: in its validation phase, teams still forming: bob's team has invited ada.
- ``published``: after its deadline, results published (test scores public).
- ``closed``: after its deadline, results not published: the hidden test score of
  tests/security/world.py (SECRET_TEST) and an entry hidden by its organiser
  (SECRET_REASON); organised by someone else.
- ``draft``: never opened (SECRET_TITLE, SECRET_DATASET; SECRET_METHOD's entry,
  SECRET_ANN), organised by someone else. tests/security/world.py's leak check (its
  SECRETS) applies to every answer, with this world's hidden scores and files.

``tag`` suffixes every slug and user name, so that one database (the stack's, shared by
its whole session) holds several worlds; ``seed`` sets them apart in their hidden scores.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from rest_framework.authtoken.models import Token

from challenge_site.announcements.models import Announcement
from challenge_site.challenges.models import Participant
from challenge_site.submissions import moderation, services
from challenge_site.submissions.models import Score, Submission
from challenge_site.teams import services as teams
from tests.factories import dataset_files, make_challenge, make_dataset, make_user, make_zip
from tests.leaderboard.helpers import add_entry, reg
from tests.security.world import (
    SECRET_ANN,
    SECRET_DATASET,
    SECRET_EMAIL,
    SECRET_METHOD,
    SECRET_REASON,
    SECRET_TEST,
    SECRET_TITLE,
)
from tests.security.world import SECRETS as SUITE_SECRETS
from tests.submissions.helpers import gaussian_lines, upload_file

ROLES = ("anonymous", "participant", "organiser")
DAY = timedelta(days=1)
SIZES = (20, 10, 40)  # train, validation, test rows of the running challenge's dataset


@dataclass
class World:
    slugs: dict[str, str]
    tokens: dict[str, str]  # role -> API token ("anonymous": none)
    submissions: list[int]  # every submission's id (dictionaries for schemathesis)
    pending: list[int]  # uploads the caller waits for (scored by a worker on the stack)
    usernames: list[str]
    # Strings no role may receive, and those only the organiser of ``running`` may.
    secrets: list[str] = field(default_factory=list)
    organiser_only: list[str] = field(default_factory=list)
    # Private files (their bytes: a zip member equal to one is a leak).
    private_files: dict[str, bytes] = field(default_factory=dict)
    organiser_files: dict[str, bytes] = field(default_factory=dict)
    valid_zip: bytes = b""  # a valid upload to the running challenge (the test phase's file)


def _token(user) -> str:
    return Token.objects.create(user=user).key


def _upload(user, challenge, files: dict[str, bytes], *, method: str, now) -> Submission:
    return services.submit(
        user=user,
        challenge=challenge,
        dataset_name=None,
        method=method,
        description="An upload of the schemathesis world.",
        authors="A. Lovelace",
        upload=upload_file(make_zip(files)),
        now=now,
    )


def float_markers(values) -> list[str]:
    """How a hidden score would show in an answer: its first 8 significant digits, as
    JSON and CSV write a float (repr, full precision), never a prefix so short that it
    could occur by chance."""
    markers = []
    for value in values:
        if value is None or not math.isfinite(value):
            continue
        text = repr(abs(float(value)))
        significant = 0
        for end, char in enumerate(text, start=1):
            if char.isdigit() and (significant or char != "0"):
                significant += 1
                if significant == 8:
                    markers.append(text[:end])
                    break
    return markers


def _private_files(dataset, name: str, task: str, **options) -> dict[str, bytes]:
    """The test targets of a dataset built by make_dataset (the factories' seeded files)."""
    files = dataset_files(name, task=task, **options)
    return {f"{dataset.challenge.slug}/{name}_test_targets.txt": files[f"{name}_test_targets.txt"]}


def build(*, now: datetime, tag: str = "", seed: int = 0) -> World:
    """The world, its running challenge's targets drawn with ``seed`` (worlds that share a
    database differ in their hidden scores: one's organiser may see its own only)."""
    slugs = {
        kind: f"{kind}{tag}" for kind in ("running", "forming", "published", "closed", "draft")
    }
    running = make_challenge(
        slug=slugs["running"],
        title="Running challenge",
        start=now - 10 * DAY,
        test_start=now - 2 * DAY,
        deadline=now + 10 * DAY,
        opened_at=now - 11 * DAY,
        test_public_fraction=0.4,
        val_daily_limit=None,
        test_daily_limit=None,
    )
    forming = make_challenge(
        slug=slugs["forming"],
        title="Forming teams",
        start=now - 2 * DAY,
        test_start=now + 10 * DAY,
        deadline=now + 20 * DAY,
        opened_at=now - 3 * DAY,
        val_daily_limit=None,
    )
    published = make_challenge(
        slug=slugs["published"],
        title="Published results",
        start=now - 40 * DAY,
        test_start=now - 30 * DAY,
        deadline=now - 20 * DAY,
        opened_at=now - 41 * DAY,
        results_published=True,
    )
    closed = make_challenge(
        slug=slugs["closed"],
        title="Closed, unpublished",
        start=now - 40 * DAY,
        test_start=now - 30 * DAY,
        deadline=now - 20 * DAY,
        opened_at=now - 41 * DAY,
    )
    draft = make_challenge(
        slug=slugs["draft"],
        title=SECRET_TITLE + tag,
        start=now - 30 * DAY,
        test_start=now + 10 * DAY,
        deadline=now + 20 * DAY,
        opened_at=None,
    )

    gaze = make_dataset(running, "gaze", sizes=SIZES, seed=seed, now=now - 10 * DAY)
    make_dataset(forming, "gaze", now=now - 2 * DAY)
    open_board = make_dataset(published, "gaze", now=now - 40 * DAY)
    shut = make_dataset(closed, "gaze", seed=7, now=now - 40 * DAY)
    hidden = make_dataset(draft, SECRET_DATASET, seed=8, now=now - 40 * DAY)

    org = make_user(f"org{tag}", organiser_of=running)
    them = make_user(f"them{tag}", organiser_of=closed)
    draft.organisers.add(them)
    ada = make_user(f"ada{tag}", display_name=f"Ada{tag}")
    bob = make_user(f"bob{tag}", display_name=f"Bob{tag}")
    victim = make_user(f"victim{tag}")
    victim.email = SECRET_EMAIL  # shown to no one but its owner and the staff
    victim.save()
    for challenge in (running, forming, published, closed):
        for user in (ada, bob):
            Participant.objects.create(challenge=challenge, user=user, joined=now - 30 * DAY)
    Participant.objects.create(challenge=closed, user=victim, joined=now - 30 * DAY)

    # Teams: bob's in the running challenge (formed during its validation phase), and in
    # the forming one, where ada has an open invitation (accept / decline have a target).
    teams.create(challenge=running, user=bob, name=f"Owls{tag}", now=now - 5 * DAY)
    forming_team = teams.create(challenge=forming, user=bob, name=f"Larks{tag}", now=now)
    teams.invite(team=forming_team, by=bob, username=ada.username, now=now)

    test_rows = SIZES[2]
    pending = [
        _upload(
            ada,
            running,
            {
                "gaze_val_predict.txt": gaussian_lines(SIZES[1], seed=1),
                "gaze_test_predict.txt": gaussian_lines(test_rows, seed=2),
            },
            method="Ada's Gaussian process",
            now=now,
        ).pk,
        _upload(
            ada,
            running,
            {"gaze_test_predict.txt": gaussian_lines(test_rows - 3, seed=3)},  # rows missing
            method="Ada's broken file",
            now=now,
        ).pk,
        _upload(
            bob,
            running,
            {"gaze_test_predict.txt": gaussian_lines(test_rows, seed=4)},
            method="Bob's team entry",
            now=now,
        ).pk,
    ]
    public = add_entry(
        open_board,
        user=bob,
        created=now - 25 * DAY,
        method="Published entry",
        val=reg(0.5, 0.4),
        test=reg(0.75, 0.2),
    )
    # The closed challenge's hidden test score (SECRET_TEST), and one entry hidden by its
    # organiser (SECRET_REASON); the draft's entry (SECRET_METHOD) and announcement.
    secret = add_entry(
        shut,
        user=victim,
        created=now - 25 * DAY,
        method="Closed entry",
        val=reg(0.5, 0.4),
        test=reg(SECRET_TEST, 0.1),
    )
    moderated = add_entry(shut, user=victim, created=now - 24 * DAY, val=reg(0.6, 0.4))
    moderation.hide(
        submissions=Submission.objects.filter(pk=moderated.pk),
        reason=SECRET_REASON,
        user=them,
        now=now - 20 * DAY,
    )
    drafted = add_entry(
        hidden,
        user=victim,
        created=now - 25 * DAY,
        method=SECRET_METHOD,
        val=reg(0.5, 0.4),
        test=reg(0.25, 0.1),
    )
    Announcement.objects.create(
        challenge=draft, title=SECRET_ANN, body="body", published_at=now - 5 * DAY
    )
    world = World(
        slugs=slugs,
        tokens={"participant": _token(ada), "organiser": _token(org)},
        submissions=[*pending, public.pk, secret.pk, moderated.pk, drafted.pk],
        pending=pending,
        usernames=[ada.username, bob.username, victim.username, org.username],
        secrets=[*SUITE_SECRETS],
        private_files={
            **_private_files(shut, "gaze", "regression", seed=7),
            **_private_files(hidden, SECRET_DATASET, "regression", seed=8),
        },
        organiser_files=_private_files(gaze, "gaze", "regression", sizes=SIZES, seed=seed),
        valid_zip=make_zip({"gaze_test_predict.txt": gaussian_lines(test_rows, seed=5)}),
    )
    world.secrets += float_markers(
        Score.objects.filter(submission=secret, split="test").values_list("value", flat=True)
    )
    for data in world.private_files.values():
        world.secrets.append(hashlib.sha256(data).hexdigest())
    for data in world.organiser_files.values():
        world.organiser_only.append(hashlib.sha256(data).hexdigest())
    return world


def add_hidden_scores(world: World) -> None:
    """Once the uploads are scored: the running challenge's test scores (the whole test
    split and its private part) are hidden from all but its organiser until publication."""
    hidden = Score.objects.filter(
        submission_id__in=world.pending, split__in=("test", "private")
    ).values_list("value", flat=True)
    markers = float_markers(hidden)
    assert markers, "the running challenge's uploads have no hidden test score to guard"
    world.organiser_only += markers


def forbidden(world: World, role: str) -> tuple[list[str], dict[str, bytes]]:
    """What ``role`` may never receive: strings, and private files (bytes)."""
    if role == "organiser":
        return world.secrets, world.private_files
    return (
        [*world.secrets, *world.organiser_only],
        {**world.private_files, **world.organiser_files},
    )
