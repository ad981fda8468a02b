"""Two challenges: A ("mine", open, organised by "me") and B ("theirs", a draft, or open
and unpublished, organised by "them"), with secrets of B that "me" must never see."""

from datetime import timedelta

from django.test import Client

from challenge_site.announcements.models import Announcement
from challenge_site.challenges.models import Participant
from challenge_site.submissions import moderation
from challenge_site.submissions.models import Submission
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg

SECRET_TITLE = "Zanzibar Secret Draft"
SECRET_DATASET = "quokkadata"
SECRET_EMAIL = "victim-only-in-b@corp.example"
SECRET_REASON = "Cheated-with-leaked-labels-XYZZY"
SECRET_ANN = "Embargoed announcement PLUGH"
SECRET_METHOD = "Hush-hush-method-FROBOZZ"
SECRET_TEST = 0.918273645


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def build(*, draft_b=True):
    mine = make_challenge(slug="mine", title="Mine")
    extra = {"opened_at": None} if draft_b else {}
    theirs = make_challenge(slug="theirs", title=SECRET_TITLE, **extra)
    gaze = make_dataset(mine, "gaze")
    secret = make_dataset(theirs, SECRET_DATASET)
    me = make_user("me", organiser_of=mine)
    them = make_user("them", organiser_of=theirs)
    victim = make_user("victim")
    victim.email = SECRET_EMAIL
    victim.save()
    Participant.objects.create(challenge=theirs, user=victim, joined=VALIDATION)
    entry = add_entry(
        secret, user=victim, method=SECRET_METHOD, val=reg(0.5, 0.4), test=reg(SECRET_TEST, 0.1)
    )
    hidden = add_entry(secret, user=victim, method="hidden one", val=reg(0.6, 0.4))
    moderation.hide(
        submissions=Submission.objects.filter(pk=hidden.pk),
        reason=SECRET_REASON,
        user=them,
        now=VALIDATION,
    )
    ann = Announcement.objects.create(
        challenge=theirs, title=SECRET_ANN, body="body", published_at=VALIDATION - timedelta(days=1)
    )
    mine_entry = add_entry(gaze, user=make_user("ann"), val=reg(0.5, 0.4), test=reg(0.25, 0.1))
    return dict(
        mine=mine,
        theirs=theirs,
        gaze=gaze,
        secret=secret,
        me=me,
        them=them,
        victim=victim,
        entry=entry,
        hidden=hidden,
        ann=ann,
        mine_entry=mine_entry,
    )


SECRETS = (
    SECRET_TITLE,
    SECRET_DATASET,
    SECRET_EMAIL,
    SECRET_REASON,
    SECRET_ANN,
    SECRET_METHOD,
    "918273",
)


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]
