"""A fine-tuning method written in a card: ``fine_tuning: {method: lora, rank: 8, targets: [query, value]}``.

A card may say how it is usually fine-tuned, and a published figure may say which method it
counts (a claim's ``trained``). Both are read here into a ``counting.methods.Tuning``; a key the
method does not read, or a value of the wrong kind, is a problem at its line.
"""

from __future__ import annotations

from typing import Any

from generator.cards.problems import Problem, describe, shown_key
from generator.cards.yamlsource import Document
from generator.counting.inventory import Counted, count_parameters
from generator.counting.methods import Method, Tuning, TuningError, tune

# The keys each method reads beside ``method``.
READS = {
    Method.LORA: ("rank", "targets"),
    Method.IA3: ("targets", "feedforward"),
    Method.PROMPT_TUNING: ("virtual_tokens",),
}
KEYS = ("method", "rank", "targets", "feedforward", "virtual_tokens")
LIMIT = 2**31 - 1


def label_of(path: tuple[str | int, ...]) -> str:
    """A key path as a problem names it: ``claims[0].trained``."""
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).removeprefix(".")


def check_tunings(
    doc: Document, card: Counted, written: list[tuple[tuple[str | int, ...], Tuning | None]]
) -> list[Problem]:
    """Each method a card writes that its model refuses (a target that matches nothing), at its line."""
    problems = []
    for path, tuning in written:
        if tuning is None:
            continue
        try:
            tune(count_parameters(card), tuning)
        except TuningError as error:
            problems.append(Problem(doc.where((*path, error.what)), f"{label_of(path)}.{error.what}", str(error)))
    return problems


def read_tuning(doc: Document, path: tuple[str | int, ...], problems: list[Problem]) -> Tuning | None:
    """The method written at ``path`` (a mapping), or None when there is none or it has problems."""
    value: Any = doc.data
    for step in path:
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            value = None
    if value is None:
        return None
    label = label_of(path)
    if not isinstance(value, dict):
        problems.append(Problem(doc.where(path), label, f"expected a mapping with method, found {describe(value)}"))
        return None
    before = len(problems)
    names = [m.value for m in Method]
    method = value.get("method")
    if method not in names:
        where = doc.where((*path, "method")) if "method" in value else doc.where(path)
        problems.append(
            Problem(where, f"{label}.method", f"expected one of {', '.join(names)}, found {describe(method)}")
        )
        return None
    reads = READS.get(Method(method), ())
    given: dict[str, Any] = {}
    for key, item in value.items():
        where, name = doc.where((*path, key)), f"{label}.{shown_key(key)}"
        if key == "method":
            continue
        if key not in KEYS:
            problems.append(
                Problem(doc.where_key((*path, key)), name, f"unknown key; expected one of {', '.join(KEYS)}")
            )
        elif key not in reads:
            users = [m.value for m, keys in READS.items() if key in keys]
            problems.append(Problem(where, name, f"expected only with method {' or '.join(users)}, found {method}"))
        elif key in ("rank", "virtual_tokens"):
            if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= LIMIT:
                problems.append(
                    Problem(where, name, f"expected a whole number from 1 to 2,147,483,647, found {describe(item)}")
                )
            else:
                given[key] = item
        elif not isinstance(item, list) or not item or not all(isinstance(n, str) and n.strip() for n in item):
            found = "an empty list" if item == [] else describe(item)
            problems.append(Problem(where, name, f"expected a list of module names, found {found}"))
        else:
            given[key] = tuple(n.strip() for n in item)
    return Tuning(Method(method), **given) if len(problems) == before else None
