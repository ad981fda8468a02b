"""Leaderboard rows for tests: submissions and their Score rows written as the pipeline
writes them (one row per split and loss, NULL for n/a, +inf kept), or real zips."""

import html
import math
import re
from datetime import UTC, datetime, timedelta

import numpy as np
from django.test import Client

from challenge_site.challenges.clock import current_phase
from challenge_site.submissions import standings
from challenge_site.submissions.entrants import Entrant
from challenge_site.submissions.models import Score, Status, Submission
from challenge_site.submissions.services import MARKS
from tests.factories import VALIDATION

INF = math.inf


def cls(nlp, zero_one, *, lift=0.5, brier=0.2, ece=0.1, rauc=0.05, aurc=0.1) -> dict:
    """Classification scores; ``nlp=None`` with the others None is a point-only file."""
    return {
        **{"nlp": nlp, "01l": zero_one, "lift": lift, "brier": brier, "ece": ece},
        **{"rauc": rauc, "aurc": aurc},
    }


def point_only_cls(zero_one) -> dict:
    return {
        **{"nlp": None, "01l": zero_one, "lift": None, "brier": None, "ece": None},
        **{"rauc": None, "aurc": None},
    }


def reg(nlpd, nmse, *, crps=0.3, rauc=0.2) -> dict:
    return {"nlpd": nlpd, "nmse": nmse, "crps": crps, "rauc": rauc}


def point_only_reg(nmse) -> dict:
    return {"nlpd": None, "nmse": nmse, "crps": None, "rauc": None}


def add_entry(
    dataset,
    *,
    user=None,
    created=VALIDATION,
    val=None,
    test=None,
    method="Entry",
    authors="",
    status=Status.SCORED,
    baseline=False,
    description="",
) -> Submission:
    """A submission with Score rows for the splits given ({loss: value})."""
    phase = current_phase(dataset.challenge, now=created)
    splits = {name: scores for name, scores in (("val", val), ("test", test)) if scores}
    submission = Submission.objects.create(
        user=None if baseline else user,
        dataset=dataset,
        method=method,
        authors=authors,
        description=description,
        created=created,
        queued_at=created,
        finished_at=created + timedelta(seconds=1),
        phase=phase,
        mark="" if baseline else MARKS[phase],
        is_baseline=baseline,
        status=status,
        splits=list(splits),
    )
    Score.objects.bulk_create(
        Score(submission=submission, dataset=dataset, split=split, loss=loss, value=value)
        for split, scores in splits.items()
        for loss, value in scores.items()
    )
    # As the pipeline's transaction does: the participant's best entries and the
    # dataset's generation follow.
    standings.listing_changed(dataset=dataset, entrant=Entrant.of(submission))
    return submission


def at(minutes: int) -> datetime:
    """A validation-phase time, ``minutes`` after VALIDATION."""
    return VALIDATION + timedelta(minutes=minutes)


# The rank cell (the top tier's "≈" marker in it), the rank interval (best view; a "†"
# may follow it), the method.
ROW_RE = re.compile(
    r'<tr[^>]*>\s*<td class="num">(?:[^<]|<span[^>]*>[^<]*</span>)*</td>\s*'
    r'(?:<td class="num rank-interval">(?:[^<]|<span[^>]*>[^<]*</span>)*</td>\s*)?'
    r'<th scope="row">.*?</tr>',
    re.S,
)
LINK_RE = re.compile(r'href="/submissions/(\d+)/"')


def page_ids(response) -> list[int]:
    """Submission ids of a leaderboard page's rows, top to bottom."""
    return [int(LINK_RE.search(row).group(1)) for row in ROW_RE.findall(response.content.decode())]


def page_exact_values(response) -> list[list[str]]:
    """Per row, the exact values in the loss cells' title attributes (repr, inf, n/a)."""
    rows = ROW_RE.findall(response.content.decode())
    return [[html.unescape(v) for v in re.findall(r'<span title="([^"]*)">', row)] for row in rows]


def set_interval(
    submission,
    loss: str = "nlp",
    *,
    split: str = "val",
    own=(None, None),
    leader=(None, None),
    baseline=(None, None),
    tied=None,
    rank=(None, None),
) -> None:
    """The bootstrap fields of one Score row, as intervals.py writes them."""
    Score.objects.filter(submission=submission, split=split, loss=loss).update(
        lower=own[0],
        upper=own[1],
        leader_lower=leader[0],
        leader_upper=leader[1],
        baseline_lower=baseline[0],
        baseline_upper=baseline[1],
        tied_with_leader=tied,
        rank_lower=rank[0],
        rank_upper=rank[1],
    )


def all_page_rows(
    client, query: str, board: str = "/challenges/demo/datasets/catalysis/leaderboard"
):
    """Submission ids and exact values of every row, walking the pages by number."""
    ids, values, number = [], [], 1
    while True:
        response = client.get(f"{board}/?{query}&page={number}")
        if response.status_code == 404:
            return ids, values
        ids += page_ids(response)
        values += page_exact_values(response)
        number += 1


def gaussian_file(rows: int, *, seed: int, spread: float = 1.0) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(
        f"1 {float(m)!r} {float(v)!r}\n"
        for m, v in zip(rng.normal(0, spread, rows), 0.5 + rng.random(rows), strict=True)
    ).encode()


def when(month: int, day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2030, month, day, hour, minute, tzinfo=UTC)


def entry(dataset, *, user, created, seconds=1, status=Status.SCORED) -> Submission:
    """A submission made at ``created`` whose scoring ended ``seconds`` later."""
    scores = cls(0.3, 0.2) if dataset.task == "classification" else reg(0.5, 0.4)
    submission = add_entry(
        dataset,
        user=user,
        created=created,
        val=scores if status == Status.SCORED else None,
        status=status,
    )
    finished = created + timedelta(seconds=seconds) if status != Status.QUEUED else None
    Submission.objects.filter(pk=submission.pk).update(finished_at=finished)
    return submission


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def add_slices(dataset, split: str, names: list[str]) -> None:
    """The dataset's ``NAME_{split}_slices.txt`` (scoring.md §8), checked and stored by the
    services the admin uses."""
    from datasets.services import check_file, save_files
    from tests.factories import START

    checked = check_file(
        name=dataset.name,
        task=dataset.task,
        filename=f"{dataset.name}_{split}_slices.txt",
        source="".join(f"{name}\n" for name in names).encode(),
        options=dataset.scoring_options,
    )
    save_files(dataset, [checked], now=START)


def sliced(scores: dict, slice_name: str) -> dict:
    """Scores stored for one slice: each loss's key "LOSS@SLICE"."""
    return {f"{loss}@{slice_name}": value for loss, value in scores.items()}
