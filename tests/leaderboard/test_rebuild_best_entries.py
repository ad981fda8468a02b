"""rebuild_best_entries: every dataset's best-per-participant table computed from
scratch (the backfill after an upgrade), and the generation moved on."""

import io

from django.core.management import call_command

from challenge_site.leaderboard import best
from challenge_site.leaderboard.models import BestEntry

from .helpers import add_entry, at, cls


def _fields(row: BestEntry) -> tuple:
    return (row.split, row.loss, row.final, row.participant, row.submission_id, row.value)


def kept(dataset) -> list[tuple]:
    return sorted(_fields(row) for row in BestEntry.objects.filter(dataset=dataset))


def from_scratch(dataset) -> list[tuple]:
    return sorted(_fields(row) for row in best.recompute(dataset))


def test_rebuild_command_backfills(catalysis, ada, grace):
    from .helpers import cls

    add_entry(catalysis, user=ada, created=at(0), val=cls(0.1, 0.2), test=cls(0.2, 0.1))
    add_entry(catalysis, user=grace, created=at(0), val=cls(0.1, 0.2))
    expected = kept(catalysis)
    generation = type(catalysis).objects.get(pk=catalysis.pk).generation
    BestEntry.objects.all().delete()
    call_command("rebuild_best_entries", verbosity=0)
    assert kept(catalysis) == expected == from_scratch(catalysis)
    assert type(catalysis).objects.get(pk=catalysis.pk).generation == generation + 1


def test_one_dataset_at_a_time_with_a_line_each(catalysis, gaze, ada):
    from .helpers import reg

    add_entry(catalysis, user=ada, created=at(0), val=cls(0.1, 0.2))
    add_entry(gaze, user=ada, created=at(0), val=reg(0.5, 0.4))
    BestEntry.objects.all().delete()
    out = io.StringIO()
    call_command("rebuild_best_entries", "--dataset", str(gaze.pk), stdout=out)
    assert out.getvalue() == f"demo/gaze: {len(from_scratch(gaze))} best entries\n"
    assert kept(gaze) == from_scratch(gaze) and kept(catalysis) == []
