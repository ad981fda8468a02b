"""The organisers' console in tests: its challenge form as the admin posts it, and two
challenges each run by its own organiser."""

from django.test import Client

from tests.factories import make_challenge, make_dataset, make_user


def challenge_form(**overrides) -> dict:
    """The add page's form of a new challenge "new" with one regression dataset inline."""
    data = {
        "slug": "new",
        "title": "New challenge",
        "description": "",
        "start_0": "2030-01-10",
        "start_1": "00:00:00",
        "test_start_0": "2030-02-01",
        "test_start_1": "00:00:00",
        "deadline_0": "2030-02-08",
        "deadline_1": "23:59:59",
        "test_inputs_release": "test_start",
        "test_targets_release": "never",
        "val_daily_limit": "",
        "test_daily_limit": "5",
        "test_total_limit": "",
        "max_team_size": "5",
        "datasets-TOTAL_FORMS": "1",
        "datasets-INITIAL_FORMS": "0",
        "datasets-MIN_NUM_FORMS": "0",
        "datasets-MAX_NUM_FORMS": "1000",
        "datasets-0-name": "gaze",
        "datasets-0-task": "regression",
        "datasets-0-position": "0",
        "datasets-0-log_base": "2.718281828459045",
        "datasets-0-min_quantile_gap": "0",
        "datasets-0-nmse_normaliser": "evaluated",
        "datasets-0-ranking_loss": "",
        "datasets-0-allow_samples": "on",
    }
    data.update(overrides)
    return data


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def two_challenges() -> dict:
    """Two challenges, each with its own organiser and a dataset ("theirs" a draft)."""
    mine = make_challenge(slug="mine", title="Mine")
    theirs = make_challenge(slug="theirs", title="Theirs", opened_at=None)
    make_dataset(mine, "gaze")
    make_dataset(theirs, "secret")
    return {
        "mine": mine,
        "theirs": theirs,
        "me": make_user("me", organiser_of=mine),
        "them": make_user("them", organiser_of=theirs),
    }
