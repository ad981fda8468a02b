"""Fetching an entry its participant acts on (final choice, withdrawal): 404 for anyone
else's, the same as for a missing one, so URLs do not reveal other users' entries."""

from django.shortcuts import get_object_or_404

from .models import Submission
from .policy import owned_submissions


def get_owned_or_404(*, user, pk: int) -> Submission:
    """An entry ``user`` owns (policy.owned_q: theirs or their team's), else the same 404
    as for a missing one."""
    return get_object_or_404(
        owned_submissions(user).select_related("dataset__challenge", "user__profile"), pk=pk
    )
