"""Reading list pages' query parameters, shared by every app's lists and their APIs."""

import re

PAGE_NUMBER = re.compile(r"[1-9][0-9]{0,8}")  # ASCII digits; offsets stay within 64 bits


class BadOptions(Exception):
    """Query parameters that name no split, loss, view or page; ``errors`` maps each to why."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()))


def parse_page(value: str | None) -> int:
    if value in (None, ""):
        return 1
    if not PAGE_NUMBER.fullmatch(value):
        raise BadOptions({"page": f"expected a page number from 1, found {value!r}"})
    return int(value)
