"""``python -m scoring evaluate PREDICTIONS TARGETS [LOSS]`` (spec §4), and
``python -m scoring check ZIP --dataset NAME --task TASK --rows train=N,val=N,test=N``:
a submission zip checked as the site checks it (scoring.upload_check)."""

from __future__ import annotations

import argparse
import math
import sys
from datetime import UTC, datetime

from .errors import ScoringError
from .evaluate import evaluate
from .losses import by_legacy_number, find_loss, format_value, loss_names
from .options import MAX_CLASSES, MAX_LEVELS, ScoringOptions, quantile_levels
from .slices import read_slices
from .tasks import TASKS

FORMATS = """\
file formats (plain ASCII, one example per line, in the order of the inputs;
numbers separated by spaces or tabs; MATLAB's save -ascii output is fine):

  classification   p                      p(y = +1 | x), 0 <= p <= 1; targets are +1 or -1
  regression       1 m v                  Gaussian, mean m, variance v >= 0 (v = 0: a point)
                   0 a1 q1 ... aN qN      quantiles p(y < qk) = ak, 0 < a1 < ... < aN < 1,
                                          q1 < ... < qN, 2 <= N <= 200
                   2 s1 ... sK            a sample of 1 <= K <= 1000 values
  Row types may be mixed in one regression file.
  multiclass       p0 p1 ... p(L-1)        the L class probabilities, each in [0, 1],
                                          summing to 1 within 0.01; targets 0 ... L-1
                   M members' L each       an ensemble row of M*L numbers (2 <= M <= 100),
                                          member after member, unless --no-ensembles
  L is --classes, or else the count of numbers on the first prediction line.

losses (lower is better):
  classification   nlp (3), 01l (4), lift, brier, ece
  regression       nlpd (1), nmse (2), crps; with --levels, also wis and the
                   coverages covP of the central intervals (unranked)
  multiclass       nlp, brier, 01l, ece, rmsce, sce, ace; with ensemble rows, also
                   tu, du and mi (total and data uncertainty, their difference; unranked)
  The numbers are the loss_type of the 2006 challenge's evaluate.py.

A file with problems exits with status 1 and lists every bad line on stderr as
PATH:LINE: message, led by a PATH: line for each problem that many lines share.
"""


def _loss_name(text: str) -> str:
    if text.isdigit():
        loss = by_legacy_number(int(text))
        if loss is None:
            raise argparse.ArgumentTypeError(f"loss number must be 1 to 4, got {text}")
        return loss.name
    if text not in loss_names():  # some task's loss; the task is checked once it is known
        raise argparse.ArgumentTypeError(
            f"unknown loss {text!r}; choose from {', '.join(loss_names())} or 1-4"
        )
    return text


def _number_type(ok, expected: str):
    """An argparse type: a float for which ``ok(value)`` holds, else a message saying what was expected."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return convert


_log_base_number = _number_type(
    lambda v: v > 0 and v != 1, "a log base: a positive number other than 1, or e"
)


def _log_base(text: str) -> float:
    """``e`` or a number (spec §4)."""
    return math.e if text == "e" else _log_base_number(text)


_gap = _number_type(lambda v: v >= 0, "a minimum quantile gap: a number >= 0")


def _classes(text: str) -> int:
    """L: a whole number from 2 to MAX_CLASSES."""
    if not (text.strip().isdigit() and 2 <= int(text) <= MAX_CLASSES):
        raise argparse.ArgumentTypeError(
            f"expected a number of classes from 2 to {MAX_CLASSES}, got {text!r}"
        )
    return int(text)


def _levels(text: str) -> tuple[float, ...]:
    """``A1,A2,…``: spec §8's quantile levels, strictly increasing in (0, 1), K ≤ 99."""
    expected = f"1 to {MAX_LEVELS} comma-separated levels strictly increasing in (0, 1)"
    values = []
    for part in text.split(","):
        try:
            values.append(float(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {expected}; {part.strip()!r} in {text!r} is not a number"
            ) from None
    try:
        return quantile_levels(values)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected {expected}; {err}") from None


def _add_multiclass(command) -> None:
    command.add_argument(
        "--classes",
        type=_classes,
        metavar="L",
        help="multiclass: the number of classes (default: the count of numbers on the "
        "first prediction line)",
    )
    command.add_argument(
        "--no-ensembles", action="store_true", help="multiclass: reject ensemble rows"
    )


class _IntermixedParser(argparse.ArgumentParser):
    """A subcommand parser whose options may come before, between or after its
    positionals (spec §4: ``P T nlp --log-base 2`` and ``P T --log-base 2 3`` alike).

    Plain argparse takes the optional LOSS as absent as soon as an option follows
    TARGETS; :meth:`parse_known_intermixed_args` parses the options first. (It calls
    :meth:`parse_known_args` itself, hence the guard.)
    """

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scoring",
        description="Validate and score probabilistic predictions.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_IntermixedParser)
    ev = commands.add_parser(
        "evaluate",
        help="score a prediction file against a target file",
        description="Score PREDICTIONS against TARGETS. Without LOSS, print every loss of the "
        "task as 'name value'; with LOSS, print only its value.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("predictions", metavar="PREDICTIONS")
    ev.add_argument("targets", metavar="TARGETS")
    ev.add_argument(
        "loss",
        metavar="LOSS",
        nargs="?",
        type=_loss_name,
        help="a loss name, or 1=nlpd 2=nmse 3=nlp 4=01l",
    )
    ev.add_argument(
        "--task",
        choices=list(TASKS),
        help="default: classification when every target is +1/-1 and every "
        "prediction line holds one number, else regression (multiclass is never inferred)",
    )
    ev.add_argument(
        "--log-base",
        type=_log_base,
        default=math.e,
        metavar="B",
        help="base of the logarithm in nlp and nlpd: a number or e (default e)",
    )
    ev.add_argument(
        "--min-quantile-gap",
        type=_gap,
        default=0.0,
        metavar="W",
        help="demand q(k+1) - q(k) >= W in quantile rows",
    )
    ev.add_argument("--no-samples", action="store_true", help="reject sample rows")
    ev.add_argument(
        "--levels",
        type=_levels,
        metavar="A1,A2,...",
        help="regression: read every row at these quantile levels and add wis and the "
        "coverage covP of every central interval (two levels summing to 1)",
    )
    ev.add_argument(
        "--slices",
        metavar="FILE",
        help="a slice name per example (one per line, a-z 0-9 _ -): also print every loss "
        "on each slice as 'LOSS@SLICE value', slices in order of first appearance",
    )
    _add_multiclass(ev)
    _add_check(commands)
    return parser


def _rows(text: str) -> dict[str, int]:
    """``train=6,val=4,test=5`` (any of the three)."""
    rows = {}
    for part in filter(None, text.split(",")):
        split, _, number = part.partition("=")
        if split.strip() not in ("train", "val", "test") or not number.strip().isdigit():
            raise argparse.ArgumentTypeError(
                f"expected SPLIT=ROWS pairs such as train=6,val=4,test=5, got {part!r}"
            )
        rows[split.strip()] = int(number)
    return rows


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO date and time, got {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _add_check(commands) -> None:
    ch = commands.add_parser(
        "check",
        help="check a submission zip as the site does, without targets",
        description="Check ZIP as the site checks an upload: its structure and file names, "
        "and every prediction file's format and row count. No target is needed. Prints the "
        "site's report on stderr and exits 1 if there is any problem.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ch.add_argument("zip", metavar="ZIP")
    ch.add_argument("--dataset", required=True, metavar="NAME", help="the dataset's name")
    ch.add_argument("--task", required=True, choices=list(TASKS))
    ch.add_argument(
        "--rows",
        type=_rows,
        required=True,
        metavar="SPLIT=N,...",
        help="examples per split, e.g. train=6,val=4,test=5 (a split left out is not checked)",
    )
    ch.add_argument("--no-samples", action="store_true", help="the dataset rejects sample rows")
    ch.add_argument("--min-quantile-gap", type=_gap, default=0.0, metavar="W")
    _add_multiclass(ch)
    ch.add_argument(
        "--datasets",
        type=_names,
        default=[],
        metavar="A,B",
        help='the challenge\'s other datasets (for "did you mean" suggestions)',
    )
    ch.add_argument("--phase", choices=["validation", "test", "post"])
    ch.add_argument("--test-start", type=_moment, metavar="ISO", help="when the test phase begins")


def check_main(args) -> int:
    from .upload_check import DatasetFacts, check_upload  # (zip modules: only for check)

    dataset = DatasetFacts(
        name=args.dataset,
        task=args.task,
        rows=args.rows,
        allow_samples=not args.no_samples,
        min_quantile_gap=args.min_quantile_gap,
        classes=args.classes,
        allow_ensembles=not args.no_ensembles,
    )
    others = [DatasetFacts(name=name, task=args.task) for name in args.datasets]
    try:
        lines = check_upload(
            args.zip,
            datasets=[dataset, *others],
            dataset=args.dataset,
            phase=args.phase,
            test_start=args.test_start,
        )
    except OSError as err:
        print(f"{args.zip}: cannot read the file: {err.strerror or err}", file=sys.stderr)
        return 1
    if lines:
        print("\n".join(lines), file=sys.stderr)
        return 1
    print(f"{args.zip}: no problems found")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "check":
        return check_main(args)
    options = ScoringOptions(
        log_base=args.log_base,
        allow_samples=not args.no_samples,
        min_quantile_gap=args.min_quantile_gap,
        classes=args.classes,
        allow_ensembles=not args.no_ensembles,
        quantile_levels=args.levels,
    )
    slice_error = None
    if args.slices is not None:  # read first: its problems are reported with the others'
        try:
            read_slices(args.slices, path=args.slices)
        except ScoringError as err:
            slice_error = err
        except OSError as err:
            print(f"{args.slices}: cannot read the file: {err.strerror or err}", file=sys.stderr)
            return 1
    try:
        result = evaluate(
            args.predictions,
            args.targets,
            task=args.task,
            options=options,
            predictions_path=args.predictions,
            targets_path=args.targets,
        )
        slices = None if args.slices is None or slice_error else _slices(args.slices, result)
    except ScoringError as err:
        print(ScoringError.combine(err, *filter(None, [slice_error])).report(), file=sys.stderr)
        return 1
    except OSError as err:
        name = err.filename or args.predictions
        print(f"{name}: cannot read the file: {err.strerror or err}", file=sys.stderr)
        return 1
    except ValueError as err:
        print(f"scoring: {err}", file=sys.stderr)
        return 1
    if slice_error is not None:
        print(slice_error.report(), file=sys.stderr)
        return 1
    if args.loss is not None:
        loss = find_loss(result.task, args.loss)
        if loss is None:
            tasks = " or ".join(name for name in TASKS if find_loss(name, args.loss))
            print(
                f"scoring: {args.loss} is a {tasks} loss, but {args.predictions} was "
                f"scored as {result.task} (use --task to say otherwise)",
                file=sys.stderr,
            )
            return 2
        if loss.name not in result.scores:  # a loss that needs an option (wis: --levels)
            print(
                f"scoring: {loss.name} is not computed without the option it needs"
                " (wis: --levels A1,A2,...)",
                file=sys.stderr,
            )
            return 2
        print(format_value(result.scores[loss.name]))
        names = [loss.name]
    else:
        for name, value in [*result.scores.items(), *result.reported.items()]:
            print(f"{name} {format_value(value)}")
        names = list(result.scores)
    for slice_name, part in (slices or {}).items():  # spec §8: losses only, per slice
        for name in names:
            print(f"{name}@{slice_name} {format_value(part.scores[name])}")
    return 0


def _slices(path: str, result) -> dict:
    """The evaluation of each slice of ``path`` (spec §8), its count checked against the
    targets' (ScoringError naming the line otherwise)."""
    return result.by_slice(read_slices(path, path=path, n=result.n))
