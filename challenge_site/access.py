"""The one way views fetch what a URL names: 404 unless the user may see it now.

Hidden objects get the same 404 as missing ones, so URLs do not reveal them. Which
objects a user may see is the policy's to say: ``visible`` is one of its QuerySet
builders (``challenges.policy.visible_challenges``, ``datasets.policy.visible_datasets``,
``submissions.policy.visible_submissions``), called with the user and the moment.
"""

from collections.abc import Callable
from datetime import datetime

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404


def get_visible_or_404(visible: Callable[..., QuerySet], *, user, now: datetime, **lookup):
    """The object ``lookup`` names among ``visible(user=user, now=now)``, else Http404."""
    return get_object_or_404(visible(user=user, now=now), **lookup)
