"""challenge_site.query_params: the page numbers of every list and API, and the error that
names each bad parameter."""

import pytest

from challenge_site.query_params import BadOptions, parse_page


def test_page_numbers():
    assert [parse_page(None), parse_page(""), parse_page("1"), parse_page("42")] == [1, 1, 1, 42]
    assert parse_page("999999999") == 999_999_999  # nine digits: offsets fit in 64 bits


@pytest.mark.parametrize("value", ["0", "-1", "01", "1.5", "x", "1000000000", "١", " 2"])
def test_anything_else_is_a_bad_option_naming_the_page(value):
    with pytest.raises(BadOptions) as bad:
        parse_page(value)
    assert bad.value.errors == {"page": f"expected a page number from 1, found {value!r}"}


def test_bad_options_say_every_reason_at_once():
    bad = BadOptions({"split": "no split 'tset'", "page": "expected a page number"})
    assert str(bad) == "split: no split 'tset'; page: expected a page number"
