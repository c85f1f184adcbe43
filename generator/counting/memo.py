"""What was worked out from an object, remembered while the same object is asked about again.

For objects that cannot be hashed (a card holds its config as a dict) or that are costly to hash (a
declaration is a deep tree): each is found by its identity, and remembered with its value so that no other
object can take its id meanwhile. Bounded: the oldest entries go first, so a long-lived process (``serve``
builds again and again with new objects) keeps only the latest.

``ValueMemo`` remembers by an equal key instead: what equal values decide, whichever objects hold them
(a card's two editions are two card objects with one config).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

O = TypeVar("O")
V = TypeVar("V")


class IdentityMemo(Generic[O, V]):
    """Values remembered for objects by identity (and by whatever else decides them), ``size`` at most."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[O, V]] = OrderedDict()

    def get(self, owner: O, *more: Hashable) -> V | None:
        """The value remembered for this very object (and ``more``), or None."""
        key = (id(owner), *more)
        found = self._entries.get(key)
        if found is None or found[0] is not owner:
            return None
        self._entries.move_to_end(key)
        return found[1]

    def keep(self, owner: O, value: V, *more: Hashable) -> V:
        """Keep ``value`` for this object (and ``more``), dropping the oldest entry past ``size``; returns it."""
        self._entries[(id(owner), *more)] = (owner, value)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every value (a test's fresh start)."""
        self._entries.clear()


K = TypeVar("K", bound=Hashable)


class ValueMemo(Generic[K, V]):
    """Values remembered by an equal key, ``size`` at most, the oldest going first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value remembered for an equal key, or None."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def keep(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key``, dropping the oldest entry past ``size``; returns it."""
        self._entries[key] = value
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every value (a test's fresh start)."""
        self._entries.clear()
