"""``Slots``: how many of one kind of long request a node serves, in all and per principal.

Event streams and in-flight DDL requests each have their slots. A slot is taken when a
request is admitted (the check and the count are one step, so simultaneous callers cannot
slip past the limit) and given back exactly once when the request ends, however it ends.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Slots:
    """The admitted requests of one kind on one node, and their limits.

    Attributes:
        limit: the most such requests the node serves at once.
        per_principal: the most one principal (a token's subject, or every caller alike
            when auth is off) holds at once.
    """

    limit: int
    per_principal: int
    _by_principal: Counter[str] = field(default_factory=Counter)

    @property
    def in_use(self) -> int:
        """Return the number of slots taken."""
        return self._by_principal.total()

    def take(self, principal: str) -> Slot | None:
        """Take a slot for ``principal``; None when a limit is reached."""
        if self.in_use >= self.limit or self._by_principal[principal] >= self.per_principal:
            return None
        self._by_principal[principal] += 1
        return Slot(self, principal)

    def _give_back(self, principal: str) -> None:
        self._by_principal[principal] -= 1
        if self._by_principal[principal] <= 0:
            del self._by_principal[principal]


class Slot:
    """One taken slot; ``release`` gives it back (once, however often it is called).

    As a context manager it is released when the block ends.
    """

    def __init__(self, slots: Slots, principal: str) -> None:
        self._slots: Slots | None = slots
        self._principal = principal

    def release(self) -> None:
        """Give the slot back."""
        if self._slots is not None:
            self._slots._give_back(self._principal)
            self._slots = None

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
