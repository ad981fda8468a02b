"""challenge_site.spreadsheet: CSV cells a spreadsheet shows as they are: numbers in full
precision, and participants' text never run as a formula."""

import math

import pytest

from challenge_site.spreadsheet import csv_number, csv_text


def test_numbers_as_the_scoring_cli_prints_them():
    assert csv_number(0.1 + 0.2) == "0.30000000000000004"
    assert csv_number(math.inf) == "inf"
    assert csv_number(None) == "n/a"


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("+1", "'+1"),
        ("-GP", "'-GP"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("Gaussian process", "Gaussian process"),
        ("A = B", "A = B"),
        ("", ""),
    ],
)
def test_text_that_a_spreadsheet_would_run_is_quoted(text, cell):
    assert csv_text(text) == cell
