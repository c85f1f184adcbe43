"""The activation functions transformers has, as the families' rules: a class that looks one up by
name when it is built (``ACT2FN[config.hidden_act]``) raises KeyError on any other name.

``tools/reference.py`` records, in each family's ``transformers/<family>.json`` (``activations``),
the names ACT2FN has and, for each head, the keys its class looks up there, with its layers and
without; these rules refuse a card (and the calculator a form) that names another function under
one of those keys where the class looks it up.

A new family has no such file until the tools first run, and they import every family first: its
rules are then none, so the tools can run. ``tests/test_family_coverage.py`` fails until the file is
written, so no family ships without them.
"""

from __future__ import annotations

import json
from importlib import resources

from generator.counting.conditions import Condition, Junction, const, eq, gt, head_is, value
from generator.counting.switches import Rule


def rules(family: str, layers: str = "num_hidden_layers") -> tuple[Rule, ...]:
    """One rule per key the family's classes look up: for the heads that look it up without layers
    (a head's own module, ALBERT's shared group), and for the others when ``layers`` is above 0."""
    path = resources.files(__package__).joinpath("transformers", f"{family}.json")
    if not path.is_file():
        return ()
    text = path.read_text("utf-8")
    recorded = json.loads(text)["activations"]
    names: list[str] = recorded["names"]
    heads = list(recorded["keys"])
    keys = list(dict.fromkeys(key for head in heads for key in recorded["keys"][head]))
    found = []
    for key in keys:
        always = [h for h in heads if key in recorded["keys_without_layers"][h]]
        layered = [h for h in heads if key in recorded["keys"][h] and h not in always]
        unknown = ~Junction("any", tuple(eq(key, const(name)) for name in names))
        where: list[Condition] = [head_is(*always)] if always else []
        where += [head_is(*layered) & gt(layers, 0)] if layered else []
        if always == heads:
            fails: Condition = unknown
        else:
            fails = (where[0] if len(where) == 1 else Junction("any", tuple(where))) & unknown
        shown = (("name", const(key)), ("found", value(key)), ("known", const(", ".join(names))))
        found.append(Rule("unknown-activation", fails, (key,), values=shown))
    return tuple(found)
