"""URL parts that name a known value: anything else is a 404 before a view runs."""

from .splits import ScoredSplit


class SplitConverter:
    """What a score is computed on: a split (``train``, ``val``, ``test``) or one of the
    test's parts (``public``, ``private``)."""

    regex = "|".join(ScoredSplit.values)

    def to_python(self, value: str) -> ScoredSplit:
        return ScoredSplit(value)

    def to_url(self, value: str) -> str:
        return str(ScoredSplit(value))
