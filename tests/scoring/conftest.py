"""The scoring package is pure Python + numpy: its tests need neither Django nor a database.

``tests/conftest.py`` has an autouse fixture that points Django's storages at
temporary folders; it is overridden here so that these tests never touch
Django's settings.
"""

import pytest


@pytest.fixture(autouse=True)
def storage_roots():
    return None
