import pytest

from datasets.demo.generate import main


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """The demo challenges, written once for the session."""
    out = tmp_path_factory.mktemp("demo")
    assert main([str(out)]) == 0
    return out
