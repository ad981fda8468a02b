"""challenges.converters: a URL part that names a split (or a test part) is one of them,
anything else a 404 before the view runs."""

import re

from django.test import Client
from django.urls import reverse

from challenge_site.challenges.converters import SplitConverter
from challenge_site.challenges.splits import ScoredSplit
from tests.factories import make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


def test_the_converter_takes_the_scored_splits_only():
    converter = SplitConverter()
    pattern = re.compile(f"(?:{converter.regex})")
    for name in ("train", "val", "test", "public", "private"):
        assert pattern.fullmatch(name)
        assert converter.to_python(name) is ScoredSplit(name)
        assert converter.to_url(ScoredSplit(name)) == name
    for name in ("TEST", "tes", "val.svg", "validation", ""):
        assert not pattern.fullmatch(name), name
    assert reverse("submission_plot", args=[7, ScoredSplit.PUBLIC]).endswith("/plots/public.svg")


def test_the_plot_url_names_known_splits_only(challenge):
    """Finding 6 of issue 10: a NUL in the split part of a plot URL was a 500 on PostgreSQL."""
    dataset = make_dataset(challenge, "gaze")
    submission = add_entry(dataset, user=make_user("owner"), val=reg(0.5, 0.4))
    client = Client()
    for split in ("test%00", "val%00", "tes", "VAL", "val.svg", "%00"):
        response = client.get(f"/submissions/{submission.pk}/plots/{split}.svg")
        assert response.status_code in (400, 404), split
