"""The one way views fetch what a URL names: 404 unless the user may see it now.

Hidden objects get the same 404 as missing ones, so URLs do not reveal them.
"""

from datetime import datetime

from django.shortcuts import get_object_or_404

from challenge_site.challenges.models import Challenge
from challenge_site.policy import (
    owned_submissions,
    visible_challenges,
    visible_datasets,
    visible_submissions,
)
from challenge_site.submissions.models import Submission
from datasets.models import Dataset

VISIBLE = {
    Challenge: visible_challenges,
    Dataset: visible_datasets,
    Submission: visible_submissions,
}


def get_visible_or_404(model, *, user, now: datetime, **lookup):
    return get_object_or_404(VISIBLE[model](user=user, now=now), **lookup)


def get_owned_or_404(*, user, pk: int) -> Submission:
    """An entry ``user`` owns (policy.owned_q: theirs or their team's), else the same 404
    as for a missing one."""
    return get_object_or_404(
        owned_submissions(user).select_related("dataset__challenge", "user__profile"), pk=pk
    )
