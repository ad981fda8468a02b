"""Keyset page positions as they travel in links: ``after=`` or ``before=`` a row.

A token is rank~value~microseconds~id: the position of the row on the board (carried,
so a deep page numbers its rows without counting those before it), its sort value ("na"
for n/a, "inf"), its submission's time (microseconds since 1970, UTC) and id. A forged
token only misplaces the numbers of the page its sender asks for: the rows themselves
are read from the board, under the board's rules.
"""

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .queries import Key

TOKEN = re.compile(
    r"([1-9][0-9]{0,11})~(na|inf|-inf|-?[0-9][0-9.]{0,40}(?:e[-+]?[0-9]{1,3})?)"
    r"~(-?[0-9]{1,18})~([1-9][0-9]{0,18})"
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Cursor:
    """A keyset page: the entries ``after`` (or ``before``) the entry at ``key``, which
    stands at position ``rank`` of the board."""

    before: bool
    rank: int
    key: Key

    def token(self) -> str:
        value = "na" if self.key.value is None else repr(self.key.value)
        micros = (self.key.created.astimezone(UTC) - EPOCH) // timedelta(microseconds=1)
        return f"{self.rank}~{value}~{micros}~{self.key.pk}"

    def params(self) -> dict[str, str]:
        return {"before" if self.before else "after": self.token()}

    @classmethod
    def parse(cls, token: str, *, before: bool) -> "Cursor":
        """ValueError for anything but a token ``token()`` could have made."""
        match = TOKEN.fullmatch(token)
        if match is None:
            raise ValueError(f"not a page position: {token!r}")
        rank, value, micros, pk = match.groups()
        try:
            created = EPOCH + timedelta(microseconds=int(micros))
            number = None if value == "na" else float(value)
        except (OverflowError, ValueError):
            raise ValueError(f"not a page position: {token!r}") from None
        if number is not None and math.isnan(number):
            raise ValueError(f"not a page position: {token!r}")
        return cls(before, int(rank), Key(number, created, int(pk)))
