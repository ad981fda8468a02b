import pytest
import time_machine

from tests.factories import VALIDATION


@pytest.fixture(autouse=True)
def clock():
    """Every test runs in the validation phase of the ``challenge`` fixture."""
    with time_machine.travel(VALIDATION, tick=False) as traveller:
        yield traveller


@pytest.fixture(autouse=True)
def batches_of_two(settings):
    settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE = 2
