"""The types a transformers config class checks its values against, as data.

transformers 5 declares its config classes as strict dataclasses: each field annotated with a
type is checked when the config is made (huggingface_hub's ``type_validator``), and a value of
another type stops the model from being built. ``tools/reference.py`` records those annotations
in each family's ``transformers/<family>.json`` (``types``) in this notation:

* ``"int"`` (a whole number, not true or false), ``"float"`` (a number written with a decimal point
  or an exponent: 1 is refused where a float is declared), ``"str"``, ``"bool"``, ``"none"`` (null),
  ``"list"`` and ``"dict"`` (any list or mapping), ``"any"``;
* ``{"union": [t, ...]}``, one of them; ``{"literal": [v, ...]}``, one of these values (true is
  not 1); ``{"list": t}``, a list of t; ``{"dict": [k, v]}``, a mapping of k to v.

``matches`` is that check; ``shown`` says a type in a card's error message, and ``hint`` adds
what YAML did when a number came out as text.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

JSON = Any

_SIMPLE: dict[str, tuple[type, ...]] = {
    "float": (float,),
    "str": (str,),
    "bool": (bool,),
    "list": (list,),
    "dict": (dict,),
}


def matches(value: object, kind: JSON) -> bool:
    """Whether transformers' strict dataclass takes ``value`` for a field of this type."""
    if kind == "any":
        return True
    if kind == "none":
        return value is None
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(kind, str):
        return isinstance(value, _SIMPLE[kind])
    if "union" in kind:
        return any(matches(value, k) for k in kind["union"])
    if "literal" in kind:
        return any(value == v and isinstance(value, bool) == isinstance(v, bool) for v in kind["literal"])
    if "list" in kind:
        return isinstance(value, list) and all(matches(item, kind["list"]) for item in value)
    keys, values = kind["dict"]
    return isinstance(value, dict) and all(matches(k, keys) and matches(v, values) for k, v in value.items())


# Each type in words: one value, and the members of a list or mapping.
_WORDS = {
    "number": ("a number", "numbers"),
    "int": ("a whole number", "whole numbers"),
    "float": ("a number with a decimal point (1.0, not 1)", "numbers with a decimal point"),
    "str": ("text", "texts"),
    "bool": ("true or false", "true or false"),
    "none": ("null", "null"),
    "list": ("a list", "lists"),
    "dict": ("a mapping", "mappings"),
    "any": ("anything", "anything"),
}


def shown(kind: JSON) -> str:
    """A type as a card's error message says it: ``a whole number or null``."""
    if isinstance(kind, str):
        return _WORDS[kind][0]
    if "union" in kind:
        members = list(kind["union"])
        if "float" in members and "int" in members:  # float | int: any number, but not true or false
            members[members.index("float")] = "number"
            members.remove("int")
        return " or ".join(shown(k) for k in members)
    if "literal" in kind:
        return "one of " + ", ".join(_literal(v) for v in kind["literal"])
    if "list" in kind:
        return f"a list of {_items(kind['list'])}"
    keys, values = kind["dict"]
    return f"a mapping of {_items(keys)} to {_items(values)}"


def _literal(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _items(kind: JSON) -> str:
    """The members of a list or mapping: ``whole numbers``, ``'a' or 'b'``."""
    if isinstance(kind, str):
        return _WORDS[kind][1]
    if "literal" in kind:
        return " or ".join(_literal(v) for v in kind["literal"])
    return shown(kind)


def hint(value: object, kind: JSON) -> str:
    """What to write instead of text that is a number, where the type takes one: the number without
    quotes, when YAML reads it so; or, where YAML 1.1 reads it as text (``1e-12``, an exponent
    without a decimal point), the same number as YAML reads a number (``1.0e-12``). Empty otherwise."""
    if not isinstance(value, str) or not matches(1.0, kind):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    unquoted = _plain(value)
    if not isinstance(unquoted, str):
        return " (in quotes: write the number without them)" if matches(unquoted, kind) else ""
    mantissa, e, exponent = repr(number).partition("e")
    written = mantissa + ("" if "." in mantissa else ".0") + e + exponent
    return f" (YAML reads {value} as text; write {written})" if matches(_plain(written), kind) else ""


def _plain(text: str) -> object:
    """What YAML makes of the text written without quotes."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text
