"""datasets.demo.generate: the five demo challenges written, each importable as it is
(their shapes and quirks: test_epuc.py, test_covshift.py, test_probing.py,
test_cifar10c.py)."""

import pytest

from challenge_site.challenges.models import Challenge
from datasets.demo.generate import main
from datasets.importing import import_challenge

from .helpers import EPUC_SHAPES


@pytest.mark.django_db
def test_both_demo_challenges_import_with_the_published_shapes(generated):
    import_challenge(generated / "epuc")
    import_challenge(generated / "covshift")
    epuc_challenge = Challenge.objects.get(slug="epuc")
    shapes = {
        d.name: (d.task, d.input_dim, d.n_train, d.n_val, d.n_test)
        for d in epuc_challenge.datasets.all()
    }
    assert shapes == EPUC_SHAPES
    covshift_challenge = Challenge.objects.get(slug="covshift")
    datasets = {d.name: d for d in covshift_challenge.datasets.all()}
    assert list(datasets) == ["udon", "maki", "wheat", "barley", "schnitzel"]
    assert (
        datasets["wheat"].input_dim,
        datasets["wheat"].n_train,
        datasets["wheat"].n_val,
        datasets["wheat"].n_test,
    ) == (5, 400, 50, 1000)
    assert (datasets["barley"].input_dim, datasets["barley"].n_test) == (5, 1000)
    assert (
        datasets["schnitzel"].input_dim,
        datasets["schnitzel"].n_train,
        datasets["schnitzel"].n_val,
        datasets["schnitzel"].n_test,
    ) == (3, 280, 40, 185)
    assert (datasets["udon"].input_dim, datasets["maki"].input_dim) == (1, 4)
    assert all(d.nmse_normaliser == "training" for d in datasets.values() if d.task == "regression")
    # The demo's regression dataset with quantile levels (spec §8: wis, cov50 and cov90).
    assert datasets["udon"].scoring_options.quantile_levels == (0.05, 0.25, 0.5, 0.75, 0.95)
    assert "wis" in [loss.name for loss in datasets["udon"].shown_losses()]
    assert datasets["maki"].quantile_levels is None
    assert covshift_challenge.test_start.isoformat() == "2006-11-10T00:00:00+00:00"


def test_the_same_seed_writes_the_same_bytes(tmp_path, capsys):
    assert main([str(tmp_path / "a"), "--seed", "7"]) == 0
    assert main([str(tmp_path / "b"), "--seed", "7"]) == 0
    assert capsys.readouterr().out.splitlines()[:5] == [
        f"wrote {tmp_path / 'a' / slug}"
        for slug in ("epuc", "covshift", "probing", "cifar10c", "teamwork")
    ]
    written = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.txt"))
    # + the test slices files of covshift's five datasets and of the probing and teamwork
    # reuses (two each)
    assert len(written) == 6 * (5 + 5 + 2 + 1 + 2) + 5 + 2 + 2
    for path in written:
        assert (tmp_path / "a" / path).read_bytes() == (tmp_path / "b" / path).read_bytes()
