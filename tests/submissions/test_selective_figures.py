"""The selective_figures tag: a split's retention and risk–coverage pictures on the
submission page (chosen by the ``retention`` key of its plot data), each with its numbers
as a table, and the picture URLs with the page's visibility rules."""

import pytest
import time_machine

from challenge_site.challenges.services import publish_results
from challenge_site.submissions.models import SplitResult
from tests.factories import AFTER, TEST_PHASE
from tests.pages import page_text

from .helpers import predictions
from .test_selective_plots import RETENTION

KINDS = ("retention", "risk_coverage")


def picture(pk: int, split: str, kind: str) -> str:
    return f"/submissions/{pk}/plots/{split}/{kind}.svg"


@pytest.fixture
def entry(catalysis, participant, submit_zip):
    """A scored classification entry on the validation and test splits."""
    files = predictions("catalysis", ("val", "test"), task="classification")
    return submit_zip(participant, catalysis.challenge, files, now=TEST_PHASE)


def test_the_page_shows_both_curves_with_their_tables(client, entry):
    SplitResult.objects.filter(submission=entry, split="val").update(
        plot_data={"retention": RETENTION}
    )
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{entry.pk}/")
    html, text = page.content.decode(), page_text(page)
    for kind in KINDS:
        assert f'src="{picture(entry.pk, "val", kind)}"' in html
    assert 'alt="Retention curve of the validation split: the error left' in html
    assert "Validation split: does the uncertainty find the errors?" in text
    assert "Retention: rAUC 0.375 for this entry, 0.1875 for the oracle and 0.3125 for a" in text
    assert "Kept This entry Oracle Random 25.0 % 0.25 0 0.125 50.0 % 0.25 0 0.25" in text
    assert "Risk–coverage: AURC 0.6667 for this entry" in text
    assert "Kept This entry Oracle Random 25.0 % 1 0 0.5 50.0 % 0.5 0 0.5" in text
    assert "<script" not in html.split("<main", 1)[-1]  # no inline script (CSP)
    assert "'unsafe-inline'" not in page["Content-Security-Policy"]
    with time_machine.travel(AFTER, tick=False):
        for kind in KINDS:
            response = client.get(picture(entry.pk, "val", kind))
            assert response.status_code == 200, kind
            assert response["Content-Type"] == "image/svg+xml"
            assert response.content.startswith(b"<?xml")
            again = client.get(picture(entry.pk, "val", kind), HTTP_IF_NONE_MATCH=response["ETag"])
            assert again.status_code == 304
        # Pictures of other keys are not drawn from a retention alone.
        assert client.get(picture(entry.pk, "val", "top_label")).status_code == 404
        assert client.get(picture(entry.pk, "val", "curves")).status_code == 404


def test_a_scored_entry_shows_what_scoring_stored(client, entry):
    stored = SplitResult.objects.get(submission=entry, split="val").plot_data["retention"]
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{entry.pk}/")
        for kind in KINDS:
            assert client.get(picture(entry.pk, "val", kind)).status_code == 200
    assert f"Retention: rAUC {stored['rauc']['model']:.4g} for this entry" in page_text(page)


def test_a_non_probabilistic_entry_has_no_curves(client, entry):
    SplitResult.objects.filter(submission=entry, split="val").update(plot_data={"retention": None})
    with time_machine.travel(AFTER, tick=False):
        html = client.get(f"/submissions/{entry.pk}/").content.decode()
        for kind in KINDS:
            assert picture(entry.pk, "val", kind) not in html
            assert client.get(picture(entry.pk, "val", kind)).status_code == 404


@pytest.mark.parametrize(
    ("published", "targets_released"), [(False, True), (True, False), (True, True)]
)
def test_test_split_pictures_wait_for_the_test_targets(client, entry, published, targets_released):
    """The curves give each example's error in an order the entry chose: they wait for
    the split's targets, not only for its scores (after publication, a challenge that
    never releases its test targets never shows them to participants)."""
    from challenge_site.challenges.models import TestTargetsRelease

    challenge = entry.dataset.challenge
    challenge.test_targets_release = (
        TestTargetsRelease.AFTER_PUBLICATION if targets_released else TestTargetsRelease.NEVER
    )
    challenge.save()
    if published:
        publish_results(challenge=challenge, user=None, now=AFTER, via="test")
    shown = published and targets_released
    with time_machine.travel(AFTER, tick=False):
        html = client.get(f"/submissions/{entry.pk}/").content.decode()
        for kind in KINDS:
            assert (picture(entry.pk, "test", kind) in html) is shown
            status = client.get(picture(entry.pk, "test", kind)).status_code
            assert status == (200 if shown else 404)
            assert picture(entry.pk, "val", kind) in html


def test_validation_pictures_wait_for_the_validation_targets(
    client, catalysis, participant, submit_zip
):
    """While the validation targets are hidden (the validation phase) the validation
    split's scores show but its curves do not: E(k) − E(k − 1) would be one example's
    error, in an order the entry chose, i.e. its target. Once the test phase releases
    the validation targets they show."""
    from tests.factories import VALIDATION

    files = predictions("catalysis", ("val",), task="classification")
    early = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    for now, shown in ((VALIDATION, False), (TEST_PHASE, True)):
        with time_machine.travel(now, tick=False):
            response = client.get(f"/submissions/{early.pk}/")
            assert response.status_code == 200
            html = response.content.decode()
            assert "Validation split" in page_text(response)  # its scores do show
            assert ("does the uncertainty find the errors" in html) is shown
            for kind in KINDS:
                assert (picture(early.pk, "val", kind) in html) is shown
                status = client.get(picture(early.pk, "val", kind)).status_code
                assert status == (200 if shown else 404)


def test_another_users_hidden_entry_has_no_pictures(client, entry, django_user_model):
    # Before publication the test split's pictures are the owner's no more than anyone's.
    other = django_user_model.objects.create_user("someone", "someone@example.org", "pw-123456")
    client.force_login(other)
    with time_machine.travel(AFTER, tick=False):
        for kind in KINDS:
            assert client.get(picture(entry.pk, "test", kind)).status_code == 404
