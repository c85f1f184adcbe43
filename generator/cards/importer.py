"""Write a model card from a transformers ``config.json``.

The head comes from ``--head`` or, without it, from the class the file's ``architectures`` names.
The card is checked with the same validation a build uses before anything is written, so an
imported card always builds; a problem that check finds is reported against the config.json key
it comes from.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from generator.cards.card import ID_PATTERN, ID_RULE, load_card
from generator.cards.config import ConfigSchema, load_schema
from generator.cards.problems import InputError, Location, Problem, describe
from generator.counting.architecture import Family, Head
from generator.counting.families import FAMILIES

# The class-name endings transformers uses for each head this site counts (modeling_auto.py's
# MODEL_FOR_*_MAPPING_NAMES: BertForSequenceClassification, ElectraForPreTraining, XLMRobertaModel).
HEAD_SUFFIXES = (
    ("ForSequenceClassification", Head.SEQUENCE_CLASSIFICATION),
    ("ForMaskedLM", Head.MASKED_LM),
    ("ForPreTraining", Head.PRETRAINING),
    ("Model", Head.BASE),
)


@dataclass(frozen=True)
class HeadChoice:
    """The head a card gets, why, and what the user should know about it."""

    head: Head
    reason: str
    warning: str | None = None


@dataclass(frozen=True)
class Imported:
    """The card written, its head and why, and the config.json keys left out of it."""

    path: Path
    dropped: tuple[str, ...]
    choice: HeadChoice


def import_config(source: Path, card_id: str, head: str | None, models_dir: Path, *, force: bool = False) -> Imported:
    """Turn a config.json into ``models_dir/<card_id>.yaml``; raise InputError on any problem.

    ``head`` None means: take it from the file's ``architectures``.
    """
    text = _read_text(source)
    config = _parse_json(source, text)
    keys = key_locations(source, text)
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        supported = ", ".join(sorted(FAMILIES))
        message = f"expected a model_type this site counts ({supported}), found {describe(model_type)}"
        raise InputError([Problem(keys.get("model_type", Location(source)), "model_type", message)])
    if not ID_PATTERN.fullmatch(card_id):
        message = f"{ID_RULE}, found {describe(card_id)}"
        raise InputError([Problem(Location(source), "--id", message)])
    family = FAMILIES[model_type]
    choice = choose_head(source, config, keys, family, head)
    target = models_dir / f"{card_id}.yaml"
    if (target.exists() or target.is_symlink()) and not force:  # a broken link is there too
        message = f"{target} already exists; pass --force to overwrite it"
        raise InputError([Problem(Location(target), "--id", message)])

    schema = load_schema(family)
    kept = {k: v for k, v in config.items() if schema.known(k)}
    dropped = tuple(sorted(k for k in config if not schema.known(k)))
    card: dict[str, Any] = {
        "id": card_id,
        "title": card_id,
        "family": family.name,
        "head": choice.head.value,
        "config": kept,
        "sources": [],
        "claims": [],
        "notes": f"Imported from `{source.name}` ({schema.config_class}, {schema.version}).",
    }
    card_text = yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=100)
    _validate(card_text, card_id, source, keys, schema)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        target.write_text(card_text, encoding="utf-8")
    except OSError as error:  # --models names a file, a folder that cannot be made, or a folder is in the way
        message = f"expected a folder the card can be written into; writing it failed: {error.strerror}"
        raise InputError([Problem(Location(Path(error.filename or target)), "--models", message)]) from None
    return Imported(target, dropped, choice)


def choose_head(
    source: Path, config: dict[str, Any], keys: dict[str, Location], family: Family, asked: str | None
) -> HeadChoice:
    """The head from ``--head``, else from ``architectures``; raise InputError when it cannot be counted."""
    where = keys.get("architectures", Location(source))
    named = _architecture(source, config, where)
    inferred = _head_of(named)
    choices = ", ".join(h.value for h in family.heads)
    if asked is not None:
        if asked not in {h.value for h in family.heads}:
            message = f"expected one of {choices}, found {describe(asked)}"
            raise InputError([Problem(Location(source), "--head", message)])
        head = Head(asked)
        warning = None
        if named is not None and inferred is not head:
            counted = "a head this site does not count" if inferred is None else f"the {inferred.value} head"
            warning = (
                f"{where}: architectures: names {named}, {counted}; the card counts the {head.value} head, "
                "as --head asks"
            )
        return _with_labels(HeadChoice(head, f"--head {head.value}", warning), source, config, keys, family)
    if named is None:
        return HeadChoice(Head.BASE, "the file has no architectures")
    if inferred is None:
        warning = (
            f"{where}: architectures: {named} is a head this site does not count; the card counts the "
            f"{family.name} encoder it sits on (base); pass --head to count another head ({choices})"
        )
        return HeadChoice(Head.BASE, f"architectures names {named}", warning)
    if inferred not in family.heads:
        message = f"names {named}, but the {family.name} family has no {inferred.value} head; pass --head ({choices})"
        raise InputError([Problem(where, "architectures", message)])
    return _with_labels(HeadChoice(inferred, f"architectures names {named}"), source, config, keys, family)


def _architecture(source: Path, config: dict[str, Any], where: Location) -> str | None:
    """The first class ``architectures`` names (save_pretrained writes the one saved), or None."""
    names = config.get("architectures")
    if names is None or names == []:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        message = f"expected a list of transformers class names, found {describe(names)}"
        raise InputError([Problem(where, "architectures", message)])
    return str(names[0])


def _head_of(class_name: str | None) -> Head | None:
    """The head a transformers class name stands for, or None for a head this site does not count."""
    if class_name is None or "Head" in class_name:  # BertLMHeadModel is a causal-LM head, not BertModel
        return None
    return next((head for suffix, head in HEAD_SUFFIXES if class_name.endswith(suffix)), None)


def _with_labels(
    choice: HeadChoice, source: Path, config: dict[str, Any], keys: dict[str, Location], family: Family
) -> HeadChoice:
    """Add where a classifier's number of labels comes from; raise InputError for an id2label that is no mapping."""
    if choice.head is not Head.SEQUENCE_CLASSIFICATION:
        return choice
    if "num_labels" in config:
        return replace(choice, reason=f"{choice.reason}; num_labels is {config['num_labels']!r}")
    id2label = config.get("id2label")
    if isinstance(id2label, dict):
        return replace(choice, reason=f"{choice.reason}; id2label has {len(id2label)} labels")
    if id2label is not None:
        message = f"expected a mapping of label ids to names, found {describe(id2label)}"
        raise InputError([Problem(keys.get("id2label", Location(source)), "id2label", message)])
    # PretrainedConfig gives 2 labels then; the card is counted the same way and its page says so.
    default = load_schema(family).default_num_labels
    return replace(
        choice, reason=f"{choice.reason}; neither num_labels nor id2label, so transformers' default of {default} labels"
    )


def _read_text(source: Path) -> str:
    try:
        return source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError([Problem(Location(source), "", f"cannot read the file: {exc.strerror}")]) from None
    except UnicodeDecodeError:
        raise InputError([Problem(Location(source), "", "expected UTF-8 text")]) from None


def _parse_json(source: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(Location(source, exc.lineno, exc.colno), "", f"JSON syntax: {exc.msg}")]) from None
    if not isinstance(data, dict):
        raise InputError([Problem(Location(source), "", f"expected a JSON object, found {describe(data)}")])
    return data


def key_locations(source: Path, text: str) -> dict[str, Location]:
    """Where each top-level key of a JSON object starts (the last, when a key repeats, as json.loads keeps)."""
    decoder = json.JSONDecoder()
    found: dict[str, Location] = {}
    index = _skip_space(text, 0)
    if text[index : index + 1] != "{":
        return found
    index = _skip_space(text, index + 1)
    while index < len(text) and text[index] == '"':
        try:
            key, end = decoder.raw_decode(text, index)
            _, after = decoder.raw_decode(text, _skip_space(text, _skip_space(text, end) + 1))  # ':' and the value
        except json.JSONDecodeError:
            break  # only reached for text json.loads refused, which has no keys to point at

        line = text.count("\n", 0, index) + 1
        found[key] = Location(source, line, index - (text.rfind("\n", 0, index) + 1) + 1)
        index = _skip_space(text, after)
        if text[index : index + 1] != ",":
            break
        index = _skip_space(text, index + 1)
    return found


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _validate(text: str, card_id: str, source: Path, keys: dict[str, Location], schema: ConfigSchema) -> None:
    """Load the would-be card exactly as a build would; raise its problems against the config.json."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{card_id}.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            load_card(path)
        except InputError as error:
            raise InputError([_in_source(p, source, keys, schema) for p in error.problems]) from None


def _in_source(problem: Problem, source: Path, keys: dict[str, Location], schema: ConfigSchema) -> Problem:
    """Point a problem in the would-be card at the config.json key, or the option, it comes from."""
    if problem.key.startswith("config."):
        key = problem.key.removeprefix("config.")
        # A key the card holds under its canonical name may be spelled otherwise in the file (dim, hidden_size).
        spellings = [key, *(other for other, target in schema.aliases.items() if target == key)]
        spelled = next((s for s in spellings if s in keys), key)
        return Problem(keys.get(spelled, Location(source)), spelled, problem.message)
    option = {"id": "--id", "title": "--id", "head": "--head"}.get(problem.key, problem.key)
    return Problem(Location(source), option, problem.message)
