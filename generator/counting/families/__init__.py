"""The registry of model families.

Each module in this package declares one family as a module-level ``FAMILY``; the registry
finds them by itself, so adding a family touches no other file.
"""

from __future__ import annotations

import copyreg
import importlib
import pkgutil
from collections.abc import Callable

from generator.counting.architecture import Family
from generator.counting.texts import with_texts


def _discover() -> dict[str, Family]:
    families: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        family = getattr(module, "FAMILY", None)
        if isinstance(family, Family):
            families[family.name] = with_texts(family)  # its words, from content/
    return families


FAMILIES: dict[str, Family] = _discover()


def registered_family(name: str) -> Family:
    """The registered family of this name: how a pickled family is read back."""
    return FAMILIES[name]


def _pickled_as_name(family: Family) -> tuple[Callable[[str], Family], tuple[str]]:
    return (registered_family, (family.name,))


# A family is pickled as its name, so that a card a worker process read comes back with the
# build's own family object (and its builder, by which built architectures are cached). The
# registry says so, not Family: Family lies below the registry and cannot name it.
copyreg.pickle(Family, _pickled_as_name)
