"""scoring.filenames: the prediction file name a near miss meant ("did you mean …?")."""

import pytest

from scoring.filenames import suggest

DATASETS = ["gaze", "catalysis", "my-data"]


@pytest.mark.parametrize(
    ("base", "meant"),
    [
        ("Gaze_Val_Predict.txt", "gaze_val_predict.txt"),  # case
        ("GAZE_VAL_PREDICT.TXT", "gaze_val_predict.txt"),
        ("gaze_validation_predict.txt", "gaze_val_predict.txt"),  # validation for val
        ("gaze_valid_predict.txt", "gaze_val_predict.txt"),
        ("gaze_training_predict.txt", "gaze_train_predict.txt"),
        ("gaze_testing_predict.txt", "gaze_test_predict.txt"),
        ("gaze_val_predict.csv", "gaze_val_predict.txt"),  # .csv for .txt
        ("gaze_val_predict", "gaze_val_predict.txt"),  # no extension
        ("gaze_val_predict.txt.txt", "gaze_val_predict.txt"),  # a hidden extension doubled
        ("gaze_val_prediction.txt", "gaze_val_predict.txt"),  # prediction(s) for predict
        ("gaze_val_predictions.txt", "gaze_val_predict.txt"),
        ("gaze_val_preds.txt", "gaze_val_predict.txt"),
        ("gaze_val.txt", "gaze_val_predict.txt"),  # the word left out
        ("gaze-val-predict.txt", "gaze_val_predict.txt"),  # other separators
        ("gaze val predict.txt", "gaze_val_predict.txt"),
        ("val_predict_gaze.txt", "gaze_val_predict.txt"),  # another order
        ("Catalysis_Test_Predictions.csv", "catalysis_test_predict.txt"),
        ("My_Data_validation_predictions.csv", "my-data_val_predict.txt"),
        ("gaze_val_predcit.txt", "gaze_val_predict.txt"),  # typing slips
        ("gaz_val_predict.txt", "gaze_val_predict.txt"),
    ],
)
def test_near_misses_name_the_file_they_meant(base, meant):
    assert suggest(base, DATASETS) == meant


@pytest.mark.parametrize(
    "base",
    [
        "notes.txt",
        "README.md",
        "gaze_val_predict.png",  # not a text file
        "gaze_val_test_predict.txt",  # two splits: which one?
        "wheat_val_predict.txt",  # no dataset of that name, nor close to one
        "gaze_val_inputs.txt",
        "predictions.txt",  # no split
    ],
)
def test_no_suggestion_where_the_meaning_is_unclear(base):
    assert suggest(base, DATASETS) is None


def test_only_the_datasets_given_are_suggested():
    assert suggest("Catalysis_val_predict.txt", ["gaze"]) is None
    assert suggest("Catalysis_val_predict.txt", ["catalysis"]) == "catalysis_val_predict.txt"


def test_without_known_datasets_any_valid_name_will_do():
    assert suggest("Wheat_Validation_Predictions.csv") == "wheat_val_predict.txt"
    assert suggest("wheat_val.txt") == "wheat_val_predict.txt"
    assert suggest("1wheat_val.txt") is None  # not a dataset name


def test_the_longest_dataset_name_wins():
    assert suggest("my-data_val_predict.csv", ["data", "my-data"]) == "my-data_val_predict.txt"
