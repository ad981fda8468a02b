"""Which datasets a user may see: those of open challenges that have started, and every
dataset of the challenges they organise.

The release of a dataset's files, who may delete a dataset and which of its splits'
scores are public need no more than the challenge: they are rules of
``challenge_site.challenges.policy``, asked from here too. Truth table:
tests/datasets/test_policy.py.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet

from challenge_site.challenges.policy import is_superuser, organised_q

from .models import Dataset


def visible_datasets(*, user, now: datetime) -> QuerySet[Dataset]:
    """Datasets of open challenges that have started; organisers also see the upcoming
    ones and the drafts of the challenges they organise."""
    datasets = Dataset.objects.select_related("challenge")
    if is_superuser(user):
        return datasets
    public = Q(challenge__opened_at__isnull=False, challenge__start__lte=now)
    return datasets.filter(public | organised_q(user, "challenge"))
