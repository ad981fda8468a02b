"""The one way views fetch what a URL names: 404 unless the user may see it now.

Hidden objects get the same 404 as missing ones, so URLs do not reveal them.
"""

from datetime import datetime

from django.shortcuts import get_object_or_404

from challenge_site.challenges.models import Challenge
from challenge_site.policy import visible_challenges, visible_datasets, visible_submissions
from challenge_site.submissions.models import Submission
from datasets.models import Dataset

VISIBLE = {
    Challenge: visible_challenges,
    Dataset: visible_datasets,
    Submission: visible_submissions,
}


def get_visible_or_404(model, *, user, now: datetime, **lookup):
    return get_object_or_404(VISIBLE[model](user=user, now=now), **lookup)
