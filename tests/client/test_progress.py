"""The text progress bar: drawn on a terminal (or when asked), silent otherwise."""

import io

from puc_client.progress import Progress, human_bytes


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_bar_on_a_terminal_shows_share_amount_and_rate():
    stream, clock = Terminal(), Clock()
    bar = Progress("gaze.zip", 2_000_000, stream=stream, clock=clock)
    clock.now += 1
    bar.update(500_000)
    assert stream.getvalue() == (
        "\rgaze.zip [#######.......................]  25% 500.0 kB/2.0 MB 500.0 kB/s"
    )
    clock.now += 0.01  # within the redraw interval: not drawn again
    bar.update(500_000)
    assert stream.getvalue().count("\r") == 1
    clock.now += 1
    bar.update(1_000_000)
    bar.close()
    last = stream.getvalue().split("\r")[-1]
    assert last.startswith("gaze.zip [" + "#" * 30 + "] 100% 2.0 MB/2.0 MB")
    assert last.endswith("\n")


def test_no_bar_when_stderr_is_not_a_terminal():
    stream = io.StringIO()
    with Progress("gaze.zip", 10, stream=stream) as bar:
        bar.update(10)
    assert stream.getvalue() == "" and bar.done == 10


def test_forced_on_and_an_unknown_total():
    stream, clock = io.StringIO(), Clock()
    with Progress("big.zip", None, stream=stream, enabled=True, clock=clock) as bar:
        clock.now += 2
        bar.update(3_000_000)
    assert stream.getvalue().split("\r")[-1] == "big.zip 3.0 MB 1.5 MB/s\n"


def test_a_shorter_line_blanks_the_previous_one():
    stream, clock = Terminal(), Clock()
    bar = Progress("x", None, stream=stream, clock=clock, interval=0)
    clock.now += 1
    bar.update(999_999)
    clock.now += 1000
    bar.update(1)
    first, second = stream.getvalue().split("\r")[1:]
    assert len(second) == len(first)


def test_human_bytes():
    assert [human_bytes(n) for n in (5, 1500, 2_500_000, 7e12)] == [
        "5 B",
        "1.5 kB",
        "2.5 MB",
        "7000.0 GB",
    ]
