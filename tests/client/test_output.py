"""puc_client.output: scores as the API gives them, aligned tables, dates in UTC, and the
report of one submission that `show` and `wait` print."""

from puc_client.output import date_text, submission_report, table, value_text


def test_values_as_the_api_gives_them():
    assert value_text(None) == "-"
    assert value_text(0.123456789) == "0.123457"
    assert value_text(1234567.0) == "1.23457e+06"
    assert value_text("inf") == "inf"
    assert value_text(7) == "7"


def test_tables_align_text_left_and_numbers_right():
    text = table(["method", "nlpd", "n"], [["GP", 0.5, 12], ["Bayesian NN", None, 3]])
    assert text.splitlines() == [
        "method       nlpd   n",
        "-----------  ----  --",
        "GP            0.5  12",
        "Bayesian NN     -   3",
    ]


def test_a_table_without_rows_has_its_header_only():
    assert table(["split", "nlp"], []) == "split  nlp\n-----  ---"


def test_dates_in_utc_and_what_is_not_a_date_as_it_is():
    assert date_text("2030-02-08T23:59:00Z") == "2030-02-08 23:59 UTC"
    assert date_text("2030-02-09T01:59:00+02:00") == "2030-02-08 23:59 UTC"
    assert date_text("2030-02-08T23:59:00") == "2030-02-08 23:59 UTC"  # naive: taken as UTC
    assert date_text("soon") == "soon"
    assert date_text(None) == date_text("") == ""


def test_the_report_of_a_scored_submission():
    body = {
        "id": 12,
        "challenge": "live",
        "dataset": "gaze",
        "method": "GP",
        "status": "scored",
        "url": "http://a.example/submissions/12/",
        "scores": {"train": {"nlpd": 0.25, "nmse": 0.5}, "val": {"nlpd": 0.75, "crps": "inf"}},
        "ladder": {"val": {"loss": "nlpd", "shown": 0.75, "accepted": True}},
    }
    assert submission_report(body).splitlines() == [
        "Submission 12 (live / gaze, 'GP'): scored",
        "http://a.example/submissions/12/",
        "",
        "split  nlpd  nmse  crps",
        "-----  ----  ----  ----",
        "train  0.25   0.5     -",
        "val    0.75     -   inf",
        "",
        "Through the Ladder:",
        "split  loss  shown  accepted",
        "-----  ----  -----  --------",
        "val    nlpd   0.75  yes",
    ]


def test_the_report_of_an_invalid_or_failed_submission_ends_with_why():
    invalid = {
        "id": 3,
        "method": "X",
        "status": "invalid",
        "url": "",
        "errors": ["gaze_val_predict.txt:2: expected 3 numbers, got 2"],
    }
    assert submission_report(invalid) == (
        "Submission 3 (? / ?, 'X'): invalid\n\n\ngaze_val_predict.txt:2: expected 3 numbers, got 2"
    )
    failed = {"id": 4, "status": "failed", "failure": "the scoring worker stopped"}
    assert submission_report(failed).endswith("failed\n\n\nthe scoring worker stopped")
