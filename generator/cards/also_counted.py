"""The other classes and configs a card's published figures may count (``also_counted``).

A figure printed for a base model may count its pre-training class, or the model with another
vocabulary. A card lists such readings here, each with a label, a head, config changes and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.cards.config import check_config
from generator.cards.problems import Problem, describe, did_you_mean, shown_key
from generator.cards.yamlsource import Document
from generator.counting.architecture import Family, Head


@dataclass(frozen=True)
class OtherCount:
    """The same weights counted by another class or config, as a published figure may have been.

    ``label`` names it as a reader would write it (``MobileBertModel(MobileBertConfig())``);
    ``config`` is the card's config with ``changed`` applied; ``why`` is one line.
    """

    label: str
    head: Head
    config: Mapping[str, Any]
    changed: Mapping[str, Any]
    why: str


OTHER_COUNT_FIELDS = ("label", "head", "config", "why")


def read_also_counted(
    doc: Document, family: Family, config: Mapping[str, Any], problems: list[Problem]
) -> tuple[OtherCount, ...]:
    """Read the other classes and configs a card's published figures may count."""
    value = doc.data.get("also_counted")
    if value is None:
        return ()
    if not isinstance(value, list):
        message = f"expected a list, found {describe(value)}"
        problems.append(Problem(doc.where(("also_counted",)), "also_counted", message))
        return ()
    found = []
    for index, item in enumerate(value):
        label, base = f"also_counted[{index}]", ("also_counted", index)
        if not isinstance(item, dict):
            message = f"expected a mapping with {', '.join(OTHER_COUNT_FIELDS)}, found {describe(item)}"
            problems.append(Problem(doc.where(base), label, message))
            continue
        before = len(problems)
        for name in item:
            if name not in OTHER_COUNT_FIELDS:
                message = "unknown key" + did_you_mean(str(name), OTHER_COUNT_FIELDS)
                problems.append(Problem(doc.where_key((*base, name)), f"{label}.{shown_key(name)}", message))
        texts = {}
        for name in ("label", "why"):
            text = item.get(name)
            if name not in item:
                problems.append(Problem(doc.where(base), f"{label}.{name}", "missing; expected text"))
            elif not isinstance(text, str) or not text.strip() or "\n" in text.strip():
                message = f"expected one line of text, found {describe(text)}"
                problems.append(Problem(doc.where((*base, name)), f"{label}.{name}", message))
            else:
                texts[name] = text.strip()
        head_name = item.get("head", doc.data.get("head"))
        choices = [h.value for h in family.heads]
        if head_name not in choices:
            message = f"expected one of {', '.join(choices)}, found {describe(head_name)}"
            problems.append(Problem(doc.where((*base, "head")), f"{label}.head", message))
        changed = item.get("config") or {}
        if not isinstance(changed, dict):
            message = f"expected a mapping of config.json keys, found {describe(changed)}"
            problems.append(Problem(doc.where((*base, "config")), f"{label}.config", message))
            continue
        counted_head = head_name if head_name in choices else None
        merged = check_config(family, config, changed, doc, (*base, "config"), problems, counted_head)
        if len(problems) == before:
            found.append(OtherCount(texts["label"], Head(head_name), merged, changed, texts["why"]))
    return tuple(found)
