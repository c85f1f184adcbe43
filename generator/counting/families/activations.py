"""The activation functions transformers has, as the families' rules: a class that looks one up by
name when it is built (``ACT2FN[config.hidden_act]``) raises KeyError on any other name.

``tools/reference.py`` records, in each family's ``transformers/<family>.json`` (``activations``),
the names ACT2FN has and, for each head, the keys its class looks up there; these rules refuse a
card (and the calculator a form) that names another function under one of those keys.
"""

from __future__ import annotations

import json
from importlib import resources

from generator.counting.conditions import Junction, const, eq, head_is, value
from generator.counting.switches import Rule


def rules(family: str) -> tuple[Rule, ...]:
    """One rule per key the family's classes look up, for the heads that look it up."""
    text = resources.files(__package__).joinpath("transformers", f"{family}.json").read_text("utf-8")
    recorded = json.loads(text)["activations"]
    names: list[str] = recorded["names"]
    heads_of: dict[str, list[str]] = {}
    for head, keys in recorded["keys"].items():
        for key in keys:
            heads_of.setdefault(key, []).append(head)
    every_head = [head for head, keys in recorded["keys"].items() if keys]
    found = []
    for key, heads in heads_of.items():
        unknown = ~Junction("any", tuple(eq(key, const(name)) for name in names))
        fails = unknown if heads == every_head else head_is(*heads) & unknown
        shown = (("name", const(key)), ("found", value(key)), ("known", const(", ".join(names))))
        found.append(Rule("unknown-activation", fails, (key,), values=shown))
    return tuple(found)
