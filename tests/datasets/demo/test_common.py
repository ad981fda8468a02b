"""datasets.demo.common: the demo generators' seeding, their challenge.toml and files."""

import tomllib

import numpy as np

from datasets.demo import covshift, epuc
from datasets.demo.common import DemoChallenge, DemoDataset, challenge_toml, write_challenge


def test_challenge_toml_reads_back_as_written(tmp_path):
    dataset = DemoDataset(
        "tiny",
        {"task": "regression", "log_base": 10, "allow_samples": False, "description": 'a "b"'},
        {split: (np.array([[0.5, 1.0]]), np.array([2.0])) for split in ("train", "val", "test")},
    )
    challenge = DemoChallenge(
        {"slug": "tiny", "start": "2030-01-01T00:00:00Z", "test_public_fraction": 0.5},
        [dataset],
    )
    config = tomllib.loads(challenge_toml(challenge))
    assert config["slug"] == "tiny" and config["test_public_fraction"] == 0.5
    assert config["start"].isoformat() == "2030-01-01T00:00:00+00:00"  # a date, not a string
    assert config["datasets"]["tiny"] == {
        "task": "regression",
        "log_base": 10,
        "allow_samples": False,
        "description": 'a "b"',
    }
    write_challenge(challenge, tmp_path / "tiny")
    assert sorted(p.name for p in (tmp_path / "tiny" / "tiny").iterdir()) == [
        f"tiny_{split}_{kind}.txt"
        for split in ("test", "train", "val")
        for kind in ("inputs", "targets")
    ]
    assert (tmp_path / "tiny" / "tiny" / "tiny_val_inputs.txt").read_text() == "0.5 1\n"


def test_generation_is_seeded():
    first, again = epuc.gaze(7), epuc.gaze(7)
    for split in ("train", "val", "test"):
        assert all(
            np.array_equal(a, b)
            for a, b in zip(first.splits[split], again.splits[split], strict=True)
        )
    assert not np.array_equal(epuc.gaze(8).splits["train"][1], first.splits["train"][1])
    assert np.array_equal(covshift.udon(7).splits["test"][0], covshift.udon(7).splits["test"][0])
