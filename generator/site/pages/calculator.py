"""The calculator: any config value of any family, changed in the browser, with the derivation redone.

The page itself is static: what the calculator is, how it counts, and every family with its
model pages, which is all a reader without JavaScript gets. ``static/calculator.js`` turns it
into a form. The rules it applies are not written in JavaScript: ``files`` writes each family's
document from ``generator/analysis/calculator_data.py`` (``calculator/<family>.json``, and the same data as a
script, ``calculator/<family>.js``, for a site opened from ``file://``, where pages cannot fetch).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.address import step_query
from generator.analysis.calculator_data import export_text
from generator.analysis.calculator_data import inputs as calculator_inputs
from generator.analysis.choices import load_choices
from generator.cards.config import load_schema
from generator.counting.architecture import Head
from generator.counting.compute import StepCannotRunError, UndeclaredActivationError, count_compute, measured
from generator.counting.families import families
from generator.counting.step_totals import StepTotals
from generator.site import content, typography
from generator.site.content import Text
from generator.site.erratum import printed_figures, titles
from generator.site.page import LANGUAGE, Page, Piece, guide_page
from generator.site.pages import errata, exercises
from generator.site.views import Summary

# The family the calculator opens with when its address names none (content/choices.yaml).
FIRST_FAMILY = load_choices().calculator_family


@dataclass(frozen=True)
class FamilyEntry:
    """A family as the page lists it: its heads, its catalog models and a starting config."""

    name: str
    title: str
    heads: tuple[str, ...]
    models: tuple[Summary, ...]
    # Values for inputs whose default is missing (a family of the site's own may declare no vocabulary):
    # those of the family's first catalog model, as JSON text for the script to read.
    preset: str
    origin: str = ""  # where the starting values come from, in words
    start: Summary | None = None  # the family's base catalog model, offered as another start
    same: Summary | None = None  # the catalog model whose sizes the family starts with, if one has them


def _base_model(own: Sequence[Summary], defaults: Sequence[Summary]) -> Summary | None:
    """The family's base catalog model: its "base" size by name (an id with "-base" in it), else its first."""
    named = [m for m in own if "-base" in m.id]
    return next((m for m in defaults if m in named), named[0] if named else own[0] if own else None)


def _entries(models: Sequence[Summary], t: Text, language: str) -> tuple[FamilyEntry, ...]:
    entries = []
    by_title = sorted(families(language).items(), key=lambda item: (item[0] != FIRST_FAMILY, item[1].title.lower()))
    for name, family in by_title:
        own = tuple(m for m in models if m.card.family.name == name)
        inputs = calculator_inputs(name, language)
        missing = [i["key"] for i in inputs if i["default"] is None and not i["optional"]]
        preset = {key: own[0].card.config.get(key) for key in missing} if own else {}
        # The catalog models whose every input is the family's default (or the preset): the sizes the page starts with.
        start = {i["key"]: preset.get(i["key"], i["default"]) for i in inputs if i["key"] != "num_labels"}
        catalog = [m for m in own if not m.id.startswith("exercise-")]  # an exercise is no model to start from
        same = [m for m in catalog if all(m.card.config.get(k) == v for k, v in start.items())]
        base = _base_model(catalog, same)
        schema = load_schema(family)
        origin = t("origin-own" if family.own_config else "origin-class", config_class=schema.config_class)
        if missing and own:
            origin += " " + t(
                "origin-preset", model=own[0].card.title, keys=typography.mark(language, "list").join(missing)
            )
        elif same:
            origin += " " + t("origin-same", model=same[0].card.title)
        origin = typography.tidy_spacing(origin, language)  # an attribute: the page's own tidying passes it by
        entries.append(
            FamilyEntry(
                name=name,
                title=family.title,
                heads=tuple(h.value for h in family.heads),
                models=own,
                preset=json.dumps(preset, separators=(",", ":"), sort_keys=True),
                origin=origin,
                start=None if base in same else base,
                same=same[0] if same else None,
            )
        )
    return tuple(entries)


# The sentences static/calculator.js shows, keyed as in content/<language>/calculator.yaml: script.
SCRIPT_TEXTS = (
    *("configuration", "family", "head", "start-model", "choose", "none-in-catalog", "live-total", "see-derivation"),
    *("reset", "sizes", "sizes-hint", "structure", "structure-hint", "checked", "checked-hint", "json-hint"),
    *("may-be-empty", "keep-ratio", "from-address", "no-family", "no-head", "not-counted", "load-failed"),
    *("no-value", "flag-expected", "json-expected", "whole-missing", "whole-expected", "whole-range", "type-expected"),
    *("result", "parameters", "parameters-of", "refused", "fixes", "fix", "stale", "link", "symbols"),
    *("symbols-caption", "symbol", "config-key", "value", "meaning", "derivation", "derivation-intro"),
    *("derivation-of", "step", "formula", "with-numbers", "repeat-none", "repeat-one-of", "reuses", "and"),
    *("nothing-new", "shared-depth", "stored-many", "stored-one", "tensors-of-one", "tensors-of-the", "tied-to"),
    *("in-each-copy", "subtotals", "component", "total", "closed-form", "in-symbols", "start-from", "origin"),
    *("check-legend", "check-label", "check-button"),
    *("alias-read", "alias-conflict", "unknown-key", "did-you-mean"),
    *("labels-read", "labels-disagree", "labels-expected", "fix-rename", "fix-remove", "fixes-each", "fix-all"),
    *("training", "training-hint", "compute", "compute-hint", "compute-meaning", "meaning-batch", "meaning-seq"),
    *("structure-when-true", "structure-decides", "checked-meaning"),
    *(
        "seq-too-long",
        "seq-too-long-numbered",
        "seq-too-long-fixed",
        "activation-unknown",
        "compute-heading",
        "compute-not-measured",
        "step-at",
        "per-token",
    ),
    *("flops-forward", "flops-forward-base", "flops-backward", "activations-fp32", "activations-bf16"),
    *("training-memory-fp32", "training-memory-bf16", "compute-note", "step-cannot-run", "step-not-exact"),
    # The fine-tuning method's form, figures and refusals (static/calculator-methods.js decides them).
    *("tuning", "tuning-hint", "method", "method-full", "method-head", "method-bitfit", "method-lora", "method-ia3"),
    *("method-prompt-tuning", "tuning-rank", "tuning-rank-meaning", "tuning-targets", "tuning-targets-meaning"),
    *("peft-default-of", "no-peft-default-of", "tuning-feedforward", "tuning-feedforward-meaning", "peft-default"),
    *("no-peft-default", "tuning-tokens", "tuning-tokens-meaning", "method-heading", "trainable", "share-of"),
    *("method-added", "parameter-memory-fp32", "parameter-memory-bf16", "parameter-memory-note", "adapted"),
    *("and-more", "saved-modules", "method-step-not-derived", "or", "method-unknown", "positive-expected"),
    *("names-expected", "refuse-not-built", "refuse-head-base", "refuse-virtual-tokens", "refuse-width"),
    *("refuse-targets-none", "refuse-targets-empty", "refuse-rank", "refuse-target-kind"),
    *("refuse-target-parameterless", "refuse-target-unmatched", "refuse-rank-groups", "refuse-feedforward-none"),
    "refuse-feedforward",
    # The step under a method (static/calculator-step.js works it out), or why there is none.
    *("method-loss-unreached", "method-prompt-too-long", "method-step-positions", "against-full", "unchanged"),
    "method-step-note",
    *("method-step-none", "method-views-at-one", "step-only-linear", "step-one-layer", "step-not-looked-up"),
    *("step-flow-undeclared", "step-not-given", "step-read-before-written", "step-nothing-writes"),
    *("step-ia3-input-run", "step-unsettled", "step-no-host"),
    # The marks that join a list of names, and a label and its value, in the edition's typography.
    *("list-separator", "colon", "open-bracket", "close-bracket"),
)


def _strings(language: str) -> str:
    """Every sentence the script shows, and the answer check's (exercises.yaml: check), as JSON."""
    script = content.load("calculator", language).section("script")
    strings = {key: script.template(key) for key in SCRIPT_TEXTS}
    check = content.load("exercises", language).section("check")
    strings.update({f"check-{key}": check.template(key) for key in (*exercises.CHECK_TEXTS, "close")})
    return json.dumps(strings, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _errata(models: Sequence[Summary], language: str) -> tuple[str, str]:
    """Each erratum's title, and the figures sources printed for catalog configs, as JSON for the answer check."""
    printed = [
        {"query": card.calculator_query, "value": str(figure), "erratum": key}
        for key, card, figure in printed_figures(errata.BUILDERS, models)
    ]
    compact = {"ensure_ascii": False, "separators": (",", ":"), "sort_keys": True}
    return json.dumps(titles(errata.BUILDERS, models, language), **compact), json.dumps(printed, **compact)  # type: ignore[arg-type]


@dataclass(frozen=True)
class StartingStep:
    """What a reader without JavaScript sees: the training step the calculator starts with, for its first model."""

    title: str
    totals: StepTotals
    loss: bool  # whether its forward ends in a loss (a head with labels), as the model pages say


def _starting_step(entry: FamilyEntry) -> StartingStep | None:
    """The first family's starting model at b = 1 and s = min(P, 512), the calculator's defaults."""
    if entry.same is None or not measured(entry.same.card.family):
        return None
    seq, _ = step_query(entry.same.card.family, entry.same.card.head, entry.same.card.config, 1)
    try:
        totals = count_compute(entry.same.card).at(1, seq)
        return StartingStep(entry.same.card.title, totals, entry.same.card.head is not Head.BASE)
    except (UndeclaredActivationError, StepCannotRunError):  # an activation nobody declared, or no step runs
        return None


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    text = content.load("calculator", language)
    page = text.section("page")
    titles, printed = _errata(models, language)
    entries = _entries(models, page, language)
    context = {
        "families": entries,
        "starting": _starting_step(entries[0]),
        "strings": _strings(language),
        "errata_titles": titles,
        "printed": printed,
        "address": page.html("address"),
    }
    return [guide_page("calculator/index.html", "calculator.html", page, context)]


def files(language: str = LANGUAGE) -> list[Piece]:
    """Each family's document in ``language``, one piece of work per family (each stored in the build cache
    under its own key)."""
    return [
        Piece(f"calculator/{name}", functools.partial(family_files, name, language))
        for name in sorted(families(language))
    ]


def family_files(name: str, language: str = LANGUAGE) -> dict[str, bytes]:
    """One family's document, as JSON to fetch and as a script for file:// pages."""
    text = export_text(name, language)
    script = "window.atlasCalculatorData = window.atlasCalculatorData || {};\n"
    script += f"window.atlasCalculatorData[{json.dumps(name)}] = {text};\n"
    return {f"calculator/{name}.json": (text + "\n").encode("utf-8"), f"calculator/{name}.js": script.encode("utf-8")}
