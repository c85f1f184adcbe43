"""The calculator's address for a config: the query string that opens the calculator on it (a model
page's links, the calculator's own catalog entries), and the one for a training step of b sequences.

Every input that is not its default is in it, so the page counts what the card counts; the calculator's
documents (``analysis/calculator_data.py``) say which inputs there are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from generator.analysis.calculator_compute import BATCH, SEQ, default_seq, reads
from generator.analysis.calculator_data import FLAG, VALUE, bounds, compute_inputs, inputs
from generator.counting.architecture import Family, Head


def encode(kind: str, value: object) -> str:
    """A config value as the calculator's address writes it: booleans, null and lists as in JSON."""
    if kind in (FLAG, VALUE) or value is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def step_query(family: Family, head: Head, config: Mapping[str, Any], batch: int) -> tuple[int, str]:
    """The sequence length min(P, 512) and the calculator's query string for a training step of
    ``batch`` sequences of that length (as ``generator count --batch`` would take it)."""
    return step_of(family, config, query(family, head, config), batch)


def step_of(family: Family, config: Mapping[str, Any], config_query: str, batch: int) -> tuple[int, str]:
    """``step_query`` from the config's own query string, when it is at hand (a model's summary keeps it)."""
    seq = default_seq(family, config)
    return seq, f"{config_query}&{BATCH}={batch}&{SEQ}={seq}"


def query(family: Family, head: Head, config: Mapping[str, Any]) -> str:
    """The calculator's query string for a config: family, head, and every input that is not its default."""
    pairs = [("family", family.name), ("head", head.value)]
    for item in inputs(family.name):
        key, default = item["key"], item["default"]
        value = config.get(key)
        if _differs(value, default):
            pairs.append((key, encode(item["kind"], value)))
    # Every head's keys (a reader may switch heads: a key only one head reads) and those that bound s.
    read = [key for h in (head, *family.heads) for key in reads(family, family.architecture(config, h).blocks)]
    # And the keys only a step rule reads (a mask token id a token dropout needs): the step depends on them.
    stepped = [key for rule in (*family.step_rules, *family.inexact_steps) for key in rule.keys]
    for item in compute_inputs(family, list(dict.fromkeys([*read, *bounds(family), *stepped]))):
        value = config.get(item["key"])
        if _differs(value, item["default"]):
            pairs.append((item["key"], encode(item["kind"], value)))
    return urlencode(pairs, quote_via=quote, safe=":,")  # what a URL's query may hold as it is


def _differs(value: object, default: object) -> bool:
    """Whether the form must be told a value: not its default, where 0.0 is 0 (the form reads both as
    0) but true is not 1, nor null 0."""
    if isinstance(value, bool) is not isinstance(default, bool) or (value is None) is not (default is None):
        return True
    return value != default
