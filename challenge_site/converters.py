"""URL parts that name a known value: anything else is a 404 before a view runs."""

from datasets.models import Split


class SplitConverter:
    """One of the dataset splits (``train``, ``val``, ``test``)."""

    regex = "|".join(Split.values)

    def to_python(self, value: str) -> Split:
        return Split(value)

    def to_url(self, value: str) -> str:
        return str(Split(value))
