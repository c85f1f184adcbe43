"""A card's ``config:`` resolved against its family's transformers config class.

What transformers accepts, and the defaults it fills in, come from
``generator/counting/families/transformers/<family>.json``, which ``tools/reference.py`` writes from
the installed library; nothing here restates a transformers default by hand.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from generator.cards import types
from generator.cards.problems import Problem, describe, shown_key
from generator.cards.yamlsource import Document, KeyPath
from generator.counting.architecture import Family
from generator.counting.conditions import HEAD
from generator.counting.texts import NULL_REFUSED, check_message

MAX_SIZE = 2**31 - 1  # transformers sizes are int64, but a larger table would not fit any machine


@dataclass(frozen=True)
class _Report:
    """Where a config sits in its card (``base``: the path of its ``config:``) and the list its problems go to."""

    doc: Document
    base: KeyPath
    problems: list[Problem]

    def bad_value(self, key: str, message: str) -> None:
        """A problem with the value of ``key``, located at that value."""
        self.problems.append(Problem(self.doc.where((*self.base, key)), f"config.{key}", message))

    def unknown_key(self, key: str, message: str) -> None:
        """A key that has no business here, located at the key itself."""
        self.problems.append(Problem(self.doc.where_key((*self.base, key)), f"config.{shown_key(key)}", message))

    def missing(self, key: str, message: str) -> None:
        """A key the config lacks, located at the config."""
        self.problems.append(Problem(self.doc.where(self.base), f"config.{key}", message))


@dataclass(frozen=True)
class ConfigSchema:
    """The keys a transformers config class accepts and the defaults it fills in."""

    config_class: str
    version: str  # "transformers 5.23.0", or where a family's own keys come from
    defaults: Mapping[str, Any]
    bookkeeping: frozenset[str]
    default_num_labels: int
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)  # other name -> key
    # What the class checks each value against, where it checks (generator/cards/types.py).
    types: Mapping[str, types.JSON] = dataclasses.field(default_factory=dict)

    def known(self, key: str) -> bool:
        return key in self.defaults or key in self.bookkeeping or key in self.aliases

    def candidates(self) -> list[str]:
        """The keys an unknown key may be a near miss of (its aliases are not offered), sorted."""
        return sorted(set(self.defaults) | self.bookkeeping)


def load_schema(family: Family) -> ConfigSchema:
    """The keys a family's config accepts: from transformers, or declared by the family itself."""
    if family.own_config is not None:
        own = family.own_config
        return ConfigSchema(own.config_class, own.source, own.defaults, frozenset(), 2)
    schema = _transformers_schema(family.name)
    if family.extra_config:
        schema = dataclasses.replace(schema, defaults={**family.extra_config, **schema.defaults})
    return schema


@cache
def _transformers_schema(family: str) -> ConfigSchema:
    """Read the committed description of a transformers config class (see tools/reference.py)."""
    text = resources.files("generator.counting.families").joinpath("transformers", f"{family}.json").read_text("utf-8")
    data = json.loads(text)
    return ConfigSchema(
        config_class=data["config_class"],
        version=f"transformers {data['transformers_version']}",
        defaults=data["defaults"],
        bookkeeping=frozenset(data["bookkeeping"]),
        default_num_labels=data["default_num_labels"],
        aliases=data.get("aliases", {}),
        types=data["types"],
    )


def resolve_config(
    family: Family, doc: Document, base: KeyPath, problems: list[Problem], head: str | None = None
) -> tuple[dict[str, Any], frozenset[str]]:
    """Merge a card's config over the family defaults, appending a problem for each bad key.

    Returns the resolved config and the keys the card gave itself (under their canonical names).
    The family's rules are checked for ``head`` (a rule about one head's modules holds for it only).
    """
    schema = load_schema(family)
    given = doc.data.get(base[-1]) if isinstance(doc.data, dict) else None
    given = given if given is not None else {}
    if not isinstance(given, dict):
        problems.append(
            Problem(doc.where(base), "config", f"expected a mapping of config.json keys, found {describe(given)}")
        )
        return {}, frozenset()
    report = _Report(doc, base, problems)
    resolved = dict(schema.defaults)
    candidates = schema.candidates()
    given = _apply_aliases(given, schema, report)
    for key, value in given.items():
        if not schema.known(key):
            hint = difflib.get_close_matches(key, candidates, n=1)
            suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
            report.unknown_key(key, f"unknown key for {schema.config_class} ({schema.version}){suggestion}")
            continue
        resolved[key] = value
    resolved["num_labels"] = _num_labels(given, schema, report)
    _check_types(family, schema, resolved, given, report, head)
    return resolved, frozenset(given)


def check_config(
    family: Family,
    config: Mapping[str, Any],
    changed: Mapping[str, Any],
    doc: Document,
    base: KeyPath,
    problems: list[Problem],
    head: str | None,
) -> dict[str, Any]:
    """A resolved config with some keys changed, checked as a card's own config is, for ``head``."""
    schema = load_schema(family)
    report = _Report(doc, base, problems)
    merged = dict(config)
    for key, value in changed.items():
        if not isinstance(key, str) or not schema.known(key) or key in schema.aliases:
            message = f"unknown key for {schema.config_class} ({schema.version}); give keys under their own names"
            report.unknown_key(key, message)
            continue
        if key == "id2label":  # the card's own config derives num_labels from it; here it would be ignored
            report.bad_value(key, f"give num_labels instead of id2label here, found {describe(value)}")
            continue
        merged[key] = value
    _check_types(family, schema, merged, changed, report, head)
    return merged


def _apply_aliases(given: dict[str, Any], schema: ConfigSchema, report: _Report) -> dict[str, Any]:
    """Rename keys the config class accepts under another name (its attribute_map)."""
    renamed: dict[str, Any] = {}
    for key, value in given.items():
        target = schema.aliases.get(key)
        if target is None:
            renamed.setdefault(key, value)
            continue
        if target in given and given[target] != value:
            message = f"{key} ({describe(value)}) is another name for {target}, which says {describe(given[target])}"
            report.bad_value(key, message)
        renamed[target] = given.get(target, value)
        report.doc.value_at.setdefault((*report.base, target), report.doc.where((*report.base, key)))
    return renamed


def _num_labels(given: Mapping[str, Any], schema: ConfigSchema, report: _Report) -> Any:
    # PretrainedConfig takes the size of id2label when num_labels is absent; when both are
    # present and differ it only warns, so a card must not be that ambiguous.
    id2label = given.get("id2label")
    if id2label is not None and not isinstance(id2label, dict):
        report.bad_value("id2label", f"expected a mapping of label ids to names, found {describe(id2label)}")
        id2label = None
    if "num_labels" in given:
        if id2label is not None and given["num_labels"] != len(id2label):
            report.bad_value(
                "num_labels", f"num_labels ({given['num_labels']}) disagrees with id2label ({len(id2label)} labels)"
            )
        return given["num_labels"]
    if id2label is not None:
        return len(id2label)
    return schema.default_num_labels


def _check_types(
    family: Family,
    schema: ConfigSchema,
    resolved: Mapping[str, Any],
    given: Mapping[str, Any],
    report: _Report,
    head: str | None,
) -> None:
    found = _Report(report.doc, report.base, [])  # the cross-field rules run only when none is found
    # Sizes and flags are checked below, more strictly than their types, and keys whose type a family rule
    # tests in words of its own (a vocabulary size that may be 0); every other value as the class checks it.
    stricter = {s.key for s in family.symbols if s.value is None and s.size} | {*family.flag_keys, *family.kind_keys}
    for key, value in given.items():
        kind = schema.types.get(key)
        if key not in stricter and kind is not None and not types.matches(value, kind):
            found_text = f"{describe(value)}{types.hint(value, kind)}"
            message = f"expected {types.shown(kind)}, as {schema.config_class} declares it, found {found_text}"
            found.bad_value(key, message)
    for symbol in family.symbols:
        if symbol.value is not None or not symbol.size:
            continue  # derived from sizes, or a count the family's own checks describe
        value = resolved.get(symbol.key)
        if value is None and symbol.optional:
            continue
        if value is None and symbol.key not in given:
            found.missing(symbol.key, f"missing; expected a whole number ({symbol.meaning})")
            continue
        if symbol.key not in given and symbol.key != "num_labels":
            continue  # a default from the config class
        if not isinstance(value, int) or isinstance(value, bool) or not symbol.minimum <= value <= MAX_SIZE:
            limit = f"a whole number from {symbol.minimum} to {MAX_SIZE:,}"
            found.bad_value(symbol.key, f"expected {limit} ({symbol.meaning}), found {describe(value)}")
    for key in family.null_refused:
        if key in given and given[key] is None:
            found.bad_value(key, check_message(NULL_REFUSED))
    for key in family.flag_keys:
        if key in given and not isinstance(given[key], bool):
            found.bad_value(key, f"expected true or false, found {describe(given[key])}")
    report.problems.extend(found.problems)
    if found.problems:
        return  # cross-field rules need well-typed values
    checked = {**resolved, HEAD: head}
    for check in family.build_rules:
        failure = check(checked)
        if failure:
            message, keys = failure
            report.bad_value(keys[0], message)
