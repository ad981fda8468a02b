"""Signs that a participant probes the leaderboard instead of modelling, for organisers.

Six flags, each with its evidence, shown in the submissions console (admin_probing.py)
and explained in docs/probing.md. They rest on statistics that jitter does not hide,
computed when an entry is scored (probing_stats.record) and stored on the entry:

- **constant but for a few rows**: all but a few rows sit in a bulk whose spread is
  tiny next to theirs (Whitehill 2017's oracle, with or without jitter);
- **few-row changes**: ``RUN_LENGTH`` or more entries in a row, each differing from
  one of the participant's recent entries in a change whose top few rows carry
  ``CONCENTRATED`` of its mass (a jittered oracle on any file);
- **same file as another account**: byte-identical prediction files from several
  accounts;
- **many near-chance entries**: ``BOOST_MIN`` or more entries of one participant not
  better than the baseline by a sign test and uncorrelated with each other (the random
  vectors of Blum & Hardt's boosting attack), each of them flagged;
- **vote of near-chance entries**: an entry correlated with the z-weighted mean of such
  entries (the attack's final combination);
- **burst of new accounts**: near-chance first entries of accounts that joined during
  the test phase, ``BURST_MIN`` or more within 24 h (the many-accounts attack).

``flags`` reads them back for a page of entries with one query.
"""

from dataclasses import dataclass

from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce

from .entrants import of_rows
from .models import Submission
from .probing_stats import (  # noqa: F401 - record and the thresholds: probing's names
    BOOST_MIN,
    BURST_MIN,
    BURST_WINDOW,
    COMBINED_R,
    COMPARED_SPLITS,
    CONCENTRATED,
    FEW_ROWS,
    FEW_SHARE,
    R_RANDOM,
    Z_CHANCE,
    differing_share,
    few_rows,
    is_random_like,
    random_like_q,
    record,
)

RUN_LENGTH = 3


@dataclass(frozen=True)
class Flag:
    code: str
    label: str
    explanation: str
    evidence: str = ""  # this entry's numbers, for the organiser


CONSTANT = "constant"
RUN = "run"
SAME_FILE = "same_file"
BOOSTING = "boosting"
COMBINED = "combined"
BURST = "burst"
FLAGS = {
    CONSTANT: (
        "constant but for a few rows",
        f"Every example gets about the same prediction but at most {FEW_ROWS} (or "
        f"{FEW_SHARE:.0%}) of them, which stand out of the others by more than 30 times "
        "their spread (any jitter on the others is ignored): the score then tells about "
        "those few examples' targets.",
    ),
    RUN: (
        "few-row changes",
        f"{RUN_LENGTH} or more entries in a row from one participant, each a change of one "
        f"of its recent entries whose top {FEW_ROWS} (or {FEW_SHARE:.0%}) rows carry "
        f"{CONCENTRATED:.0%} of the change: rows probed one by one, whatever the jitter.",
    ),
    SAME_FILE: (
        "same file as another account",
        "Another account uploaded byte-identical prediction files to this dataset: one "
        "participant may be using several accounts' feedback and limits.",
    ),
    BOOSTING: (
        "many near-chance entries",
        f"This participant made {BOOST_MIN} or more entries that are not better than the "
        f"baseline (sign test on the shown split, z < {Z_CHANCE:g}) and uncorrelated with "
        f"their recent entries (|r| < {R_RANDOM:g}): random vectors whose shown scores "
        "are kept when they beat chance (Blum & Hardt's boosting attack).",
    ),
    COMBINED: (
        "vote of near-chance entries",
        f"Correlated (r ≥ {COMBINED_R:g}) with the mean of its participant's earlier "
        "near-chance entries weighted by their z: the boosting attack's final entry, "
        "which looks good on the shown split and is at chance on the hidden one.",
    ),
    BURST: (
        "burst of new accounts",
        f"One of {BURST_MIN} or more accounts that joined after the test phase began and "
        f"whose near-chance first entries came within {BURST_WINDOW.total_seconds() / 3600:g}"
        " h (and 3 times more than the daily sign-ups before the test phase): each new "
        "account's first score is feedback the Ladder does not limit.",
    ),
}


def is_constant_but_few(rows_off_mode: int | None, rows: int | None) -> bool:
    if not rows_off_mode or not rows:
        return False
    return rows_off_mode <= few_rows(rows)


def _rows(submission: Submission) -> int | None:
    dataset = submission.dataset
    for split in COMPARED_SPLITS:
        if split in submission.splits:
            return getattr(dataset, f"n_{split}")
    return None


def _number(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else format(value, fmt)


def _evidence(code: str, submission: Submission, counts: dict) -> str:
    """The entry's numbers behind ``code``, in words."""
    if code == CONSTANT:
        return f"{submission.rows_off_mode} rows off the bulk of {_rows(submission)}"
    if code == RUN:
        return (
            f"top rows carry {_number(submission.change_share, '.1%')} of the change from "
            f"a recent entry; up to {counts['run']} such entries in a row"
        )
    if code == SAME_FILE:
        return f"{counts['owners']} accounts sent this file"
    if code == BOOSTING:
        return (
            f"z = {_number(submission.chance_z, '+.2f')} against the baseline, "
            f"|r| ≤ {_number(submission.max_corr, '.2f')} with recent entries; "
            f"{counts['random']} such entries from this participant"
        )
    if code == COMBINED:
        return (
            f"r = {_number(submission.combined_corr, '.2f')} with the vote of "
            f"{submission.random_count} near-chance entries; "
            f"z = {_number(submission.chance_z, '+.2f')} on the shown split"
        )
    return f"{counts['burst']} new accounts' near-chance first entries within 24 h"


def _burst_of(submission: Submission, bursts) -> int:
    """The largest burst whose window held this new account's first entry (a burst entry
    counted every such entry up to BURST_WINDOW before it), 0 if none."""
    if submission.burst is None:
        return 0
    start = submission.created
    return max(
        (count for created, count in bursts if start <= created <= start + BURST_WINDOW),
        default=0,
    )


def flags(submissions) -> dict[int, list[Flag]]:
    """{submission id: its flags} for the given entries (each with ``dataset``), with one
    query whatever their number: the entries sharing their files, and those that put a
    participant over a threshold (boosting, few-row changes)."""
    submissions = list(submissions)
    hashes = {s.predictions_sha256 for s in submissions if s.predictions_sha256}
    owners: dict[tuple, set] = {}
    most_random: dict[tuple, int] = {}
    longest_run: dict[tuple, int] = {}
    bursts: dict[int, list] = {}
    if submissions:
        wanted = (
            Q(random_count__gte=BOOST_MIN)
            | Q(similar_run__gte=RUN_LENGTH)
            | Q(burst__gte=BURST_MIN)
        )
        if hashes:
            wanted |= Q(predictions_sha256__in=hashes)
        for (
            dataset_id,
            digest,
            team_id,
            user_id,
            random_count,
            run,
            burst,
            created,
        ) in Submission.objects.filter(
            wanted, dataset_id__in={s.dataset_id for s in submissions}
        ).values_list(
            "dataset_id",
            "predictions_sha256",
            "team_id",
            "user_id",
            "random_count",
            "similar_run",
            "burst",
            "created",
        ):
            # Per participant: a team's members sending the same file is one participant.
            entrant = (dataset_id, of_rows((team_id, user_id)))
            if digest in hashes:
                owners.setdefault((dataset_id, digest), set()).add(entrant[1])
            most_random[entrant] = max(most_random.get(entrant, 0), random_count)
            longest_run[entrant] = max(longest_run.get(entrant, 0), run)
            if burst is not None and burst >= BURST_MIN:
                bursts.setdefault(dataset_id, []).append((created, burst))
    found = {}
    for submission in submissions:
        entrant = (submission.dataset_id, of_rows((submission.team_id, submission.user_id)))
        counts = {
            "owners": len(owners.get((submission.dataset_id, submission.predictions_sha256), ())),
            "random": most_random.get(entrant, 0),
            "run": longest_run.get(entrant, 0),
            "burst": _burst_of(submission, bursts.get(submission.dataset_id, ())),
        }
        codes = []
        if is_constant_but_few(submission.rows_off_mode, _rows(submission)):
            codes.append(CONSTANT)
        if submission.similar_run >= 2 and counts["run"] >= RUN_LENGTH:
            codes.append(RUN)
        if counts["owners"] > 1:
            codes.append(SAME_FILE)
        if is_random_like(submission) and counts["random"] >= BOOST_MIN:
            codes.append(BOOSTING)
        if submission.combined_corr is not None and submission.combined_corr >= COMBINED_R:
            codes.append(COMBINED)
        if counts["burst"]:
            codes.append(BURST)
        found[submission.pk] = [
            Flag(code, *FLAGS[code], evidence=_evidence(code, submission, counts)) for code in codes
        ]
    return found


def _entrant(prefix: str = ""):
    """One number per participant, never NULL (comparing NULLs would drop rows): the
    team's id, minus the user's id for a user without a team, 0 for the baseline."""
    if prefix:
        return Coalesce(OuterRef("team_id"), OuterRef("user_id") * -1, Value(0))
    return Coalesce("team_id", F("user_id") * -1, Value(0))


def _participant_reached(**threshold) -> Exists:
    """The entry's participant has an entry in its dataset meeting ``threshold``."""
    return Exists(
        Submission.objects.filter(dataset_id=OuterRef("dataset_id"), **threshold)
        .annotate(entrant=_entrant())
        .filter(entrant=_entrant("outer"))
    )


def flagged_filter(code: str) -> Q:
    """A filter on Submission for the entries flagged ``code`` (the admin's list filter).
    For constant files the share is taken of the larger of the validation and test sizes,
    so the filter may keep a few validation entries the column does not flag."""
    if code == CONSTANT:
        few = (
            Q(rows_off_mode__lte=FEW_ROWS)
            | Q(rows_off_mode__lte=F("dataset__n_test") * FEW_SHARE)
            | Q(rows_off_mode__lte=F("dataset__n_val") * FEW_SHARE)
        )
        return Q(rows_off_mode__gte=1) & few
    if code == RUN:
        return Q(similar_run__gte=2) & Q(_participant_reached(similar_run__gte=RUN_LENGTH))
    if code == BOOSTING:
        return random_like_q() & Q(_participant_reached(random_count__gte=BOOST_MIN))
    if code == COMBINED:
        return Q(combined_corr__gte=COMBINED_R)
    if code == BURST:
        later = Submission.objects.filter(
            dataset_id=OuterRef("dataset_id"),
            burst__gte=BURST_MIN,
            created__gte=OuterRef("created"),
            created__lte=OuterRef("created") + BURST_WINDOW,
        )
        return Q(burst__isnull=False) & Q(Exists(later))
    if code == SAME_FILE:
        others = (
            Submission.objects.filter(
                dataset_id=OuterRef("dataset_id"),
                predictions_sha256=OuterRef("predictions_sha256"),
            )
            .annotate(entrant=_entrant())
            .exclude(entrant=_entrant("outer"))
        )
        return ~Q(predictions_sha256="") & Q(Exists(others))
    raise ValueError(f"not a probing flag: {code}")
