"""How a challenge is going: the organisers' statistics, public once the results are.

Four views of a challenge's submissions (baselines left out everywhere), each counted by
the database in a fixed number of aggregate queries whatever the number of submissions:

- ``daily``: valid submissions per UTC day of the challenge, validation and test phase
  apart (the challenge chapter's Fig. 1); post-challenge ones are only counted;
- ``by_dataset``: valid submissions and participants per dataset and phase (the SV and
  ST columns of the chapter's Table 1, and the post-challenge ones);
- ``outcomes``: every upload per phase by its status: the share of invalid and failed
  uploads;
- ``turnaround``: the median time from upload to scored (``created`` to ``finished_at``
  of scored submissions), overall and per phase.

*Valid* means scored: what the leaderboards list. A participant is a person with at
least one valid submission. Days are UTC days; day 1 is the day the challenge opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber, TruncDate

from challenge_site.challenges import policy
from challenge_site.challenges.models import Challenge, Phase
from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.policy import valid_q

# The phases participants submit in (nothing is accepted before the start).
PHASES = (Phase.VALIDATION, Phase.TEST, Phase.POST)
# The two series of the chapter's Fig. 1: the days of the challenge itself.
DAILY_PHASES = (Phase.VALIDATION, Phase.TEST)
PENDING = (Status.QUEUED, Status.RUNNING)


def statistics_visible(challenge: Challenge, *, user) -> bool:
    """``policy.statistics_visible``; whether the challenge itself may be seen (drafts) is
    get_visible_or_404's."""
    return policy.statistics_visible(challenge, user=user)


def hidden_reason(challenge: Challenge, *, now: datetime) -> str:
    """Why the statistics are not shown yet (no number of the challenge in it)."""
    if now <= challenge.deadline:
        return (
            "The statistics are published with the results, after the deadline "
            f"({challenge.deadline:%d %b %Y, %H:%M} UTC)."
        )
    return (
        "The statistics are published with the results; the organisers have not published them yet."
    )


def _uploads(challenge: Challenge) -> QuerySet[Submission]:
    """The participants' submissions to the challenge (baselines left out), unordered."""
    return Submission.objects.filter(dataset__challenge=challenge, is_baseline=False).order_by()


def _valid(challenge: Challenge) -> QuerySet[Submission]:
    return _uploads(challenge).filter(valid_q())


# --- Valid submissions per day (Fig. 1) ----------------------------------------------


@dataclass(frozen=True)
class Day:
    number: int  # 1 = the UTC day the challenge opened
    date: date
    validation: int
    test: int

    @property
    def total(self) -> int:
        return self.validation + self.test


@dataclass(frozen=True)
class Daily:
    days: tuple[Day, ...]  # every day from the start to the deadline, or to today
    after_deadline: int  # valid post-challenge submissions: counted, not drawn
    test_start_day: int  # the number of the day the test phase began

    @property
    def validation(self) -> int:
        return sum(day.validation for day in self.days)

    @property
    def test(self) -> int:
        return sum(day.test for day in self.days)


def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def daily(*, challenge: Challenge, now: datetime) -> Daily:
    """Valid submissions per UTC day and phase, from the day the challenge opened to the
    deadline's day (or to today, while it runs): one query, a row per day and phase."""
    counts = (
        _valid(challenge)
        .annotate(day=TruncDate("created", tzinfo=UTC))
        .values("day", "phase")
        .annotate(n=Count("id"))
        .values_list("day", "phase", "n")
    )
    by_day: dict[tuple[date, str], int] = {}
    after_deadline = 0
    for day, phase, n in counts:
        if phase in DAILY_PHASES:
            by_day[day, phase] = n
        elif phase == Phase.POST:
            after_deadline += n
    first = _day(challenge.start)
    last = min(_day(challenge.deadline), _day(now))
    if by_day:  # whatever the clock says, every counted day is shown
        first = min(first, *(day for day, _ in by_day))
        last = max(last, *(day for day, _ in by_day))
    days = tuple(
        Day(
            number=(first + timedelta(days=i) - _day(challenge.start)).days + 1,
            date=first + timedelta(days=i),
            validation=by_day.get((first + timedelta(days=i), Phase.VALIDATION), 0),
            test=by_day.get((first + timedelta(days=i), Phase.TEST), 0),
        )
        for i in range((last - first).days + 1)
    )
    test_start_day = (_day(challenge.test_start) - _day(challenge.start)).days + 1
    return Daily(days=days, after_deadline=after_deadline, test_start_day=test_start_day)


# --- Per dataset and phase (Table 1's SV and ST) --------------------------------------


@dataclass(frozen=True)
class Cell:
    submissions: int  # valid ones
    participants: int  # people with at least one valid one


NO_CELL = Cell(0, 0)


@dataclass(frozen=True)
class DatasetRow:
    name: str
    task: str
    cells: tuple[Cell, ...]  # one per PHASES

    @property
    def submissions(self) -> int:
        return sum(cell.submissions for cell in self.cells)


def by_dataset(*, challenge: Challenge) -> tuple[DatasetRow, ...]:
    """Valid submissions and participants per dataset and phase: two queries (the
    datasets, then one row per dataset and phase)."""
    datasets = list(challenge.datasets.values_list("pk", "name", "task"))
    counts = (
        _valid(challenge)
        .values("dataset_id", "phase")
        .annotate(submissions=Count("id"), participants=Count("user", distinct=True))
        .values_list("dataset_id", "phase", "submissions", "participants")
    )
    cells = {(pk, phase): Cell(n, people) for pk, phase, n, people in counts}
    return tuple(
        DatasetRow(
            name=name,
            task=task,
            cells=tuple(cells.get((pk, phase), NO_CELL) for phase in PHASES),
        )
        for pk, name, task in datasets
    )


# --- What became of the uploads --------------------------------------------------------


@dataclass(frozen=True)
class OutcomeRow:
    label: str
    uploads: int
    scored: int
    invalid: int
    failed: int
    pending: int  # queued or being scored
    participants: int  # people with at least one valid submission
    uploaders: int  # people with at least one upload

    def _share(self, count: int) -> float | None:
        return 100 * count / self.uploads if self.uploads else None

    @property
    def scored_share(self) -> float | None:
        return self._share(self.scored)

    @property
    def invalid_share(self) -> float | None:
        return self._share(self.invalid)

    @property
    def failed_share(self) -> float | None:
        return self._share(self.failed)

    @property
    def pending_share(self) -> float | None:
        return self._share(self.pending)


@dataclass(frozen=True)
class Outcomes:
    phases: tuple[OutcomeRow, ...]  # one per PHASES
    total: OutcomeRow


def _outcome_counts() -> dict:
    scored = valid_q()
    return {
        "uploads": Count("id"),
        "scored": Count("id", filter=scored),
        "invalid": Count("id", filter=Q(status=Status.INVALID)),
        "failed": Count("id", filter=Q(status=Status.FAILED)),
        "pending": Count("id", filter=Q(status__in=PENDING)),
        "participants": Count("user", distinct=True, filter=scored),
        "uploaders": Count("user", distinct=True),
    }


def outcomes(*, challenge: Challenge) -> Outcomes:
    """Every upload by phase and status, and the people behind them: two queries (per
    phase, then the whole challenge, since a person counts once however many phases)."""
    uploads = _uploads(challenge)
    per_phase = {
        row.pop("phase"): row for row in uploads.values("phase").annotate(**_outcome_counts())
    }
    empty = dict.fromkeys(_outcome_counts(), 0)
    phases = tuple(OutcomeRow(label=phase.label, **per_phase.get(phase, empty)) for phase in PHASES)
    total = OutcomeRow(label="All phases", **uploads.aggregate(**_outcome_counts()))
    return Outcomes(phases=phases, total=total)


# --- From upload to scored --------------------------------------------------------------


@dataclass(frozen=True)
class Turnaround:
    label: str
    scored: int  # the scored submissions timed
    median: timedelta | None

    @property
    def median_text(self) -> str:
        return format_duration(self.median)

    @property
    def median_seconds(self) -> float | None:
        return None if self.median is None else self.median.total_seconds()


@dataclass(frozen=True)
class Turnarounds:
    phases: tuple[Turnaround, ...]  # one per PHASES
    total: Turnaround


def _middle(rank: str, count: str) -> Q:
    """The median's one or two rows of a group: count/2 ≤ rank ≤ count/2 + 1."""
    return Q(**{f"{rank}__gte": F(count) / 2.0, f"{rank}__lte": F(count) / 2.0 + 1})


def turnaround(*, challenge: Challenge) -> Turnarounds:
    """The median time from upload to scored, per phase and overall, in one query: each
    scored submission ranked by its time within its phase and within the challenge (window
    functions), and only the middle rows of each ranking read."""
    duration = ExpressionWrapper(F("finished_at") - F("created"), output_field=DurationField())
    order = [F("duration").asc(), F("id").asc()]
    rows = (
        _valid(challenge)
        .filter(finished_at__isnull=False)
        .annotate(duration=duration)
        .annotate(
            phase_rank=Window(RowNumber(), partition_by=[F("phase")], order_by=order),
            phase_count=Window(Count("id"), partition_by=[F("phase")]),
            rank=Window(RowNumber(), order_by=order),
            count=Window(Count("id")),
        )
        .filter(_middle("phase_rank", "phase_count") | _middle("rank", "count"))
        .values_list("phase", "duration", "phase_rank", "phase_count", "rank", "count")
    )
    middles: dict[str, list[timedelta]] = {}
    counts: dict[str, int] = {}
    overall: list[timedelta] = []
    total = 0
    for phase, spent, phase_rank, phase_count, rank, count in rows:
        counts[phase], total = phase_count, count
        if phase_count <= 2 * phase_rank <= phase_count + 2:
            middles.setdefault(phase, []).append(spent)
        if count <= 2 * rank <= count + 2:
            overall.append(spent)
    return Turnarounds(
        phases=tuple(
            Turnaround(phase.label, counts.get(phase, 0), _mean(middles.get(phase, [])))
            for phase in PHASES
        ),
        total=Turnaround("All phases", total, _mean(overall)),
    )


def _mean(values: list[timedelta]) -> timedelta | None:
    return sum(values, timedelta()) / len(values) if values else None


def format_duration(value: timedelta | None) -> str:
    """``45 s``, ``3 min 20 s``, ``2 h 5 min``, ``1 d 4 h``: the two largest units;
    ``–`` for none."""
    if value is None:
        return "–"
    seconds = round(value.total_seconds())
    if seconds < 60:
        return f"{value.total_seconds():.3g} s" if seconds < 10 else f"{seconds} s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size or parts:
            parts.append((seconds // size, unit))
            seconds %= size
    (big, big_unit), (small, small_unit) = parts[0], parts[1]
    return f"{big} {big_unit} {small} {small_unit}" if small else f"{big} {big_unit}"


# --- The page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Statistics:
    daily: Daily
    datasets: tuple[DatasetRow, ...]
    outcomes: Outcomes
    turnaround: Turnarounds


def challenge_statistics(*, challenge: Challenge, now: datetime) -> Statistics:
    """Everything the statistics page shows: six queries (whole-challenge aggregates, run
    by a worker: statistics_snapshots; the page serves the snapshot)."""
    return Statistics(
        daily=daily(challenge=challenge, now=now),
        datasets=by_dataset(challenge=challenge),
        outcomes=outcomes(challenge=challenge),
        turnaround=turnaround(challenge=challenge),
    )
