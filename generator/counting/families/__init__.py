"""The registry of model families.

Each module in this package declares one family as a module-level ``FAMILY``; the registry
finds them by itself, so adding a family touches no other file. A declaration holds keys only;
``family_in(name, language)`` is the family with its words from content/<language>/families.yaml,
made once per language and kept, so a build in another language passes its language down and
nothing here holds one. ``FAMILIES`` is the default language's registry: which families exist,
and the words of the card check's messages.
"""

from __future__ import annotations

import copyreg
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from generator.counting import texts
from generator.counting.architecture import Family, Symbol
from generator.counting.families.symbols import SHARED
from generator.counting.texts import LANGUAGE, shared_meaning, with_texts


def _discover() -> dict[str, Family]:
    families: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared = getattr(module, "FAMILY", None)
        if isinstance(declared, Family):
            families[declared.name] = declared
    return families


_DECLARED: dict[str, Family] = _discover()  # the bare declarations, by name, in module order


def declaration(name: str) -> Family:
    """The family as its module declares it: keys only, no words."""
    return _DECLARED[name]


def family_in(name: str, language: str = LANGUAGE) -> Family:
    """The family of this name with its words in ``language``: one object per (name, language)."""
    return _worded(name, language, texts.CONTENT)


@functools.cache
def _worded(name: str, language: str, root: Path) -> Family:
    # Keyed by the content folder too, which a test may point elsewhere: a cache keyed by value.
    return with_texts(_DECLARED[name], language, root)


def families(language: str = LANGUAGE) -> dict[str, Family]:
    """Every family, by name, with its words in ``language``."""
    return {name: family_in(name, language) for name in _DECLARED}


def shared_symbols(language: str = LANGUAGE) -> tuple[Symbol, ...]:
    """The symbols most families share (symbols.py), with their shared meanings in ``language``."""
    return tuple(replace(s, meaning=shared_meaning(s.name, language)) for s in SHARED.values())


FAMILIES: dict[str, Family] = families()  # every default-language text is read at import: a gap fails at once


def _pickled_as_key(worded: Family) -> tuple[Callable[[str, str], Family], tuple[str, str]]:
    return (family_in, (worded.name, worded.language or LANGUAGE))


# A family is pickled as its name and language, so that a card a worker process read comes back
# with the build's own family object (and its builder, by which built architectures are cached).
# The registry says so, not Family: Family lies below the registry and cannot name it.
copyreg.pickle(Family, _pickled_as_key)
