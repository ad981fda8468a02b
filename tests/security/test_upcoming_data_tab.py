"""Before the start nothing is released ("an unreleased file leaves no trace for
participants: no size, hash, row count or date"), yet the Data tab prints each dataset's
input dimension, the column count of the (unreleased) input files."""

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from tests.factories import BEFORE_START, make_challenge, make_dataset


@pytest.mark.django_db
def test_data_tab_before_start_shows_no_input_dimension():
    with time_machine.travel(BEFORE_START, tick=False):
        challenge = make_challenge()
        make_dataset(challenge, "gaze", dim=17)
        page = Client().get(reverse("challenge_data", args=[challenge.slug])).content.decode()
        assert "Gaze" in page  # named, as intended
        assert '<td class="num">17</td>' not in page
