"""What the calculator checks a config's keys against, from the family's config class, as ``count`` checks a card's.

``checked_type`` is the type an input's value must have; ``config_keys``, the part of a family's calculator
document that checks the address's other keys as ``cards/config.py: resolve_config`` checks a card's: the
keys the class knows (the near misses ``count`` suggests for an unknown one), its aliases, the declared types
of the known keys that are no input, and the keys whose null the family refuses, in the card check's words.
"""

from __future__ import annotations

from typing import Any

from generator.cards import types
from generator.cards.config import ConfigSchema, load_schema
from generator.counting.architecture import Family
from generator.counting.texts import LANGUAGE, NULL_REFUSED, check_message

JSON = Any


def checked_type(family: Family, schema: ConfigSchema, key: str) -> JSON:
    """What the config class checks a key's value against (``generator/cards/types.py``), or None: also
    for a key whose type a family rule tests, which the form shows in the rule's words, as the card check does.

    The form reads 1.0 as the whole number 1, so it cannot tell a float from a whole number. A type that
    takes decimals but not whole numbers (dropouts declared as float or null) is checked as any number there:
    a number typed in the form stands for the float the config would hold."""
    kind = None if key in family.kind_keys else schema.types.get(key)
    if types.matches(1.5, kind or "any") and not types.matches(1, kind or "any"):
        members = list(kind["union"]) if isinstance(kind, dict) and "union" in kind else [kind]
        return {"union": [*members, "int"]}
    return kind


def config_keys(family: Family, read: set[str], language: str = LANGUAGE) -> JSON:
    """The keys of the family's config class as ``resolve_config`` checks them; ``read``: the inputs' keys,
    whose types the inputs carry."""
    schema = load_schema(family)
    if not read.issuperset(family.null_refused):  # the page tells a null from a key left out in inputs only
        raise ValueError(f"{family.name}: null_refused {sorted(set(family.null_refused) - read)} are no inputs")
    return {
        "class": schema.config_class,
        "version": schema.version,
        "keys": schema.candidates(),
        "aliases": dict(sorted(schema.aliases.items())),
        "types": {key: kind for key, kind in sorted(schema.types.items()) if key not in read},
        "null_refused": list(family.null_refused),
        "null_refused_message": check_message(NULL_REFUSED, language),
    }
