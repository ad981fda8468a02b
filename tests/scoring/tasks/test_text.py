"""scoring.tasks.text: the plain-text pieces of a dataset zip's README."""

from scoring.tasks import text


def test_headings_are_underlined_to_their_length():
    assert text.heading("Predictions (regression)") == (
        "Predictions (regression)\n------------------------"
    )


def test_paragraphs_and_bullets_wrap_at_78_columns():
    words = " ".join(["word"] * 40)  # 199 characters
    wrapped = text.wrap(words)
    assert max(len(line) for line in wrapped.splitlines()) <= text.WIDTH == 78
    assert wrapped.replace("\n", " ") == words
    indented = text.wrap(words, indent="  ").splitlines()
    assert all(line.startswith("  word") for line in indented)
    listed = text.bullets([words, "short"]).splitlines()
    assert listed[0].startswith("- word") and listed[1].startswith("  word")
    assert listed[-1] == "- short" and max(map(len, listed)) <= 78


def test_examples_are_indented_four_spaces_unwrapped():
    long = "0 " + " ".join(["0.5"] * 40)
    assert text.example(["1 3.1 1.7", long]) == f"    1 3.1 1.7\n    {long}"
