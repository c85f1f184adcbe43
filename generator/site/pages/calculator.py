"""The calculator: any config value of any family, changed in the browser, with the derivation redone.

The page itself is static: what the calculator is, how it counts, and every family with its
model pages, which is all a reader without JavaScript gets. ``static/calculator.js`` turns it
into a form. The rules it applies are not written in JavaScript: ``files`` writes each family's
document from ``generator/analysis/calculator.py`` (``calculator/<family>.json``, and the same data as a
script, ``calculator/<family>.js``, for a site opened from ``file://``, where pages cannot fetch).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.calculator import export_text
from generator.analysis.calculator import inputs as calculator_inputs
from generator.counting.families import FAMILIES
from generator.site import content
from generator.site.page import LANGUAGE, SITE_TITLE, Page
from generator.site.views import Summary

# The family the calculator opens with when its address names none.
FIRST_FAMILY = "bert"


@dataclass(frozen=True)
class FamilyEntry:
    """A family as the page lists it: its heads, its catalog models and a starting config."""

    name: str
    title: str
    heads: tuple[str, ...]
    models: tuple[Summary, ...]
    # Values for inputs whose default is missing (the 2017 Transformer has no default vocabulary):
    # those of the family's first catalog model, as JSON text for the script to read.
    preset: str


def _entries(models: Sequence[Summary]) -> tuple[FamilyEntry, ...]:
    entries = []
    for name, family in sorted(FAMILIES.items(), key=lambda item: (item[0] != FIRST_FAMILY, item[1].title.lower())):
        own = tuple(m for m in models if m.card.family is family)
        inputs = calculator_inputs(name)
        missing = [i["key"] for i in inputs if i["default"] is None and not i["optional"]]
        preset = {key: own[0].card.config.get(key) for key in missing} if own else {}
        entries.append(
            FamilyEntry(
                name=name,
                title=family.title,
                heads=tuple(h.value for h in family.heads),
                models=own,
                preset=json.dumps(preset, separators=(",", ":"), sort_keys=True),
            )
        )
    return tuple(entries)


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    page = content.load("calculator", language).section("page")
    return [
        Page(
            "calculator/index.html",
            "calculator.html",
            page("title", site=SITE_TITLE),
            page("description"),
            {"families": _entries(models)},
            guide=page("guide"),
        )
    ]


def files(models: Sequence[Summary]) -> dict[str, bytes]:
    """Each family's document, as JSON to fetch and as a script for file:// pages."""
    out: dict[str, bytes] = {}
    for name in sorted(FAMILIES):
        text = export_text(name)
        out[f"calculator/{name}.json"] = (text + "\n").encode("utf-8")
        script = "window.atlasCalculatorData = window.atlasCalculatorData || {};\n"
        script += f"window.atlasCalculatorData[{json.dumps(name)}] = {text};\n"
        out[f"calculator/{name}.js"] = script.encode("utf-8")
    return out
