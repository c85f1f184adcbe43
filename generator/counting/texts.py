"""What the families' declarations are called, read from ``content/<language>/families.yaml``.

A family declares keys only: its name, a symbol's letter, a switch's name, a block's key, a
module's key, a tensor's role, a part. The words a reader sees (its title, what a symbol means
and a switch decides, the blocks' titles, the modules' labels that name the derivation's steps,
what each tensor is, the parts' titles, the paragraphs on what differs from the baseline family)
are content, beside the site's other prose, so that a second language is a sibling file. A module's key is the
slug of its English label ("feed-forward-in"), which the step's anchor is made of; it stays when
the words change.

The file has the shared ``symbols``, ``switches``, ``blocks``, ``modules``, ``roles`` and
``attentions`` (the titles of a derivation's attention runs, keyed by the child module that holds
each attention: ``architecture.holder``) and the ``parts`` at the top, and under ``families`` one
section a family: its ``title``, the texts where it differs from the shared ones, and its
``differences``, keyed paragraphs in reading order. The registry fills them into one Family per
family and language (``with_texts``, through ``families.family_in(name, language)``); a build
passes its language down, and nothing here holds one. Code that picks a step or a block picks it by
key, never by its words.

The counting layer reads the file itself (it may not import the site's ``content.py``), so the
card check's messages name a symbol in the default language's words. The file is the project's,
not input: a text the code asks for and the file lacks is a ``MissingTextError`` naming the file
and the key to add; tests/test_content.py also fails on a text no declaration has.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml

from generator.counting.architecture import Architecture, Block, Family, Head, Param, Part, Tie
from generator.counting.memo import IdentityMemo
from generator.counting.switches import FirstOf, Rule

T = TypeVar("T")

CONTENT = (Path(__file__).parent / "texts").resolve()  # a link to content/, as generator/site/texts is
LANGUAGE = "en"  # the language a family's words are read in unless one is named (site.page.LANGUAGE agrees)


class MissingTextError(LookupError):
    """A key the code declares that the content file has no text for."""

    def __init__(self, path: Path, key: str, message: str) -> None:
        super().__init__(f"{path}: {key}: {message}")
        self.path, self.key, self.message = path, key, message


@dataclass(frozen=True)
class FamilyTexts:
    """The words of one family: its title, its symbols' meanings, its switches', and its differences."""

    title: str
    symbols: Mapping[str, str]
    switches: Mapping[str, str]
    blocks: Mapping[str, str]  # titles by block key
    modules: Mapping[str, str]  # labels by module key
    roles: Mapping[str, str]  # what a module's tensor is ("weight", "is the output bias"), by the key it declares
    attentions: Mapping[str, str]  # a derivation's attention runs' titles, by the module holding each (``holder``)
    rules: Mapping[str, str]  # the rules' messages (str.format templates) by rule name
    differences: tuple[tuple[str, str], ...]  # (key, Markdown paragraph), in reading order


def load(language: str = LANGUAGE, root: Path | None = None) -> Mapping[str, Any]:
    """The parsed families.yaml of one language (from content/ unless ``root`` names another folder)."""
    return _load(root or CONTENT, language)


@functools.cache
def _load(root: Path, language: str) -> Mapping[str, Any]:
    path = root / language / "families.yaml"
    if not path.is_file():
        raise MissingTextError(path, "families", "expected the families' words in this language, found no file")
    with path.open(encoding="utf-8") as file:
        # libyaml when installed: every process reads this file at start-up, and PyYAML's own parser
        # takes ten times as long (70 ms). The file is the project's, not a card: nothing to locate.
        data = yaml.load(file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, dict) or not isinstance(data.get("families"), dict):
        raise MissingTextError(
            path, "families", "expected a mapping with 'families', 'symbols', 'switches' and 'parts'"
        )
    return data


def _section(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        data = data.get(key) or {}
    return data


def family_texts(name: str, language: str = LANGUAGE, root: Path | None = None) -> FamilyTexts:
    """The words of the family ``name``: its own texts over the shared ones."""
    root = root or CONTENT
    data = load(language, root)
    if name not in data["families"]:
        raise MissingTextError(root / language / "families.yaml", "families", f"no section for the family {name!r}")
    own = _section(data, "families", name)
    return FamilyTexts(
        title=_text(own, "title", root / language, f"families.{name}.title"),
        symbols={**_section(data, "symbols"), **_section(own, "symbols")},
        switches={**_section(data, "switches"), **_section(own, "switches")},
        blocks={**_section(data, "blocks"), **_section(own, "blocks")},
        modules={**_section(data, "modules"), **_section(own, "modules")},
        roles={**_section(data, "roles"), **_section(own, "roles")},
        attentions={**_section(data, "attentions"), **_section(own, "attentions")},
        rules={**_section(data, "rules"), **_section(own, "rules")},
        differences=tuple((str(key), str(text)) for key, text in _section(own, "differences").items()),
    )


# The checks every family has that are not its Rules: the card check words them itself (cards/card.py).
NULL_REFUSED = "null-refused"  # a null written for one of a family's null_refused keys (cards/config.py)
CARD_CHECKS = ("no-parameters", NULL_REFUSED)


def check_message(name: str, language: str = LANGUAGE, root: Path | None = None) -> str:
    """The message of one of ``CARD_CHECKS``, from the file's shared ``rules``."""
    root = root or CONTENT
    return _text(_section(load(language, root), "rules"), name, root / language, f"rules.{name}")


def shared_meaning(symbol: str, language: str = LANGUAGE, root: Path | None = None) -> str:
    """What a shared symbol means, in the file's shared ``symbols``."""
    root = root or CONTENT
    return _text(_section(load(language, root), "symbols"), symbol, root / language, f"symbols.{symbol}")


def part_titles(language: str = LANGUAGE, root: Path | None = None) -> Mapping[Part, str]:
    """Each Part's title, in Part order."""
    root = root or CONTENT
    titles = _section(load(language, root), "parts")
    return {part: _text(titles, part.value, root / language, f"parts.{part.value}") for part in Part}


def attention_title(family: Family, holder: str, root: Path | None = None) -> str:
    """What ``family`` calls the attention module its layers register as ``holder`` ("self-attention"),
    in the family's language: its own ``attentions`` over the shared ones."""
    root, language = root or CONTENT, family.language or LANGUAGE
    titles = family_texts(family.name, language, root).attentions
    return _text(titles, holder, root / language, f"families.{family.name}.attentions.{holder}")


def _text(texts: Mapping[str, str], key: str, folder: Path, where: str) -> str:
    if key not in texts:
        raise MissingTextError(folder / "families.yaml", where, "expected a text here, found none")
    return str(texts[key])


def with_texts(family: Family, language: str = LANGUAGE, root: Path | None = None) -> Family:
    """The family with its symbols' (a training step's own too) and switches' meanings and its differences
    filled in from content/."""
    root = root or CONTENT
    texts, folder = family_texts(family.name, language, root), root / language
    where = f"families.{family.name}"
    symbols, compute_symbols = (
        tuple(replace(s, meaning=_text(texts.symbols, s.name, folder, f"{where}.symbols.{s.name}")) for s in given)
        for given in (family.symbols, family.compute_symbols)
    )
    switches = tuple(
        replace(s, meaning=_text(texts.switches, s.name, folder, f"{where}.switches.{s.name}")) for s in family.switches
    )
    differences = tuple(text for _, text in texts.differences)

    def worded(rule: Rule) -> Rule:
        return replace(rule, message=_text(texts.rules, rule.name, folder, f"{where}.rules.{rule.name}"))

    build_rules = tuple(
        worded(c) if isinstance(c, Rule) else FirstOf(tuple(map(worded, c.rules))) if isinstance(c, FirstOf) else c
        for c in family.build_rules
    )
    declare = Worded(
        family.declare,
        tuple(texts.blocks.items()),
        tuple(texts.modules.items()),
        tuple(texts.roles.items()),
        folder,
        where,
    )
    return replace(
        family,
        title=texts.title,
        symbols=symbols,
        compute_symbols=compute_symbols,
        switches=switches,
        differences=differences,
        build_rules=build_rules,
        step_rules=tuple(map(worded, family.step_rules)),
        inexact_steps=tuple(map(worded, family.inexact_steps)),
        declare=declare,
        language=language,
    )


# Worded blocks remembered per declaration: more than any family's builders return (the largest has a few hundred).
WORDED_MEMO = 4096


@dataclass(frozen=True)
class Worded:
    """A family's declaration with its blocks' titles, its modules' labels and its tensors' roles filled in by key.

    Equal by value, so the architectures it declares are cached as the bare declaration's were.
    """

    declare: Callable[[Mapping[str, bool], Head], Architecture]
    titles: tuple[tuple[str, str], ...]
    labels: tuple[tuple[str, str], ...]
    roles: tuple[tuple[str, str], ...]
    folder: Path
    where: str  # "families.<name>", for a missing text's message

    def __post_init__(self) -> None:
        # The worded copy of each block the builder returned, by the block's identity (the block remembered
        # beside it). The builders return the very same block for the same switches (``per_setting_read``),
        # so declaring every setting of a family words each block once, and equal settings give identical
        # blocks, which later caches can find by identity instead of hashing a deep tree.
        object.__setattr__(self, "_memo", IdentityMemo(WORDED_MEMO))
        # Looked up once per block, module and tensor: as mappings, made once.
        words = {"blocks": dict(self.titles), "modules": dict(self.labels), "roles": dict(self.roles)}
        object.__setattr__(self, "_words", words)
        # Hashed once: every declaration a build asks for looks its Worded up (``architecture._declared``).
        object.__setattr__(
            self, "_hash", hash((self.declare, self.titles, self.labels, self.roles, self.folder, self.where))
        )

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined, no-any-return]

    def __call__(self, on: Mapping[str, bool], head: Head) -> Architecture:
        declared = self.declare(on, head)
        return replace(declared, blocks=tuple(map(self._block, declared.blocks)))

    def _block(self, block: Block) -> Block:
        memo: IdentityMemo[Block, Block] = self._memo  # type: ignore[attr-defined]
        found = memo.get(block)
        if found is not None:
            return found
        modules = tuple(
            _worded(
                m,
                label=self._word("modules", m.key),
                params=tuple(_with_role(p, self._word("roles", p.role)) for p in m.params),
            )
            for m in block.modules
        )
        return memo.keep(block, _worded(block, title=self._word("blocks", block.key), modules=modules))

    def _word(self, kind: str, key: str) -> str:
        """The words for a key the declaration gives (``kind``: blocks, modules or roles)."""
        words: dict[str, str] = self._words[kind]  # type: ignore[attr-defined]
        found = words.get(key)  # the place for the message is written only when the text is missing
        return str(found) if found is not None else _text(words, key, self.folder, f"{self.where}.{kind}.{key}")


# The fields of each class ``_worded`` copies, in order.
_FIELDS: dict[type, tuple[str, ...]] = {}


def _worded(declared: T, **words: object) -> T:
    """A declared Block, Module or tensor with its words set: ``dataclasses.replace`` without running
    ``__init__`` again, which made a third of the time of declaring every switch setting of a family
    (28,000 calls for the family pages). Only for classes that check nothing on creation and keep no
    cache.

    Each field is set as a frozen dataclass's ``__init__`` sets it, with ``object.__setattr__``: never
    through ``__dict__``, whose first use turns the object's attributes into a plain dictionary, and
    every later read of them five times slower (a build reads these objects' fields millions of times).
    """
    kind = type(declared)
    names = _FIELDS.get(kind)
    if names is None:
        assert not hasattr(kind, "__post_init__") and not hasattr(kind, "__slots__")
        names = _FIELDS[kind] = tuple(f.name for f in fields(kind))  # type: ignore[arg-type]
    made: T = object.__new__(kind)
    for name in names:
        object.__setattr__(made, name, words[name] if name in words else getattr(declared, name))
    return made


def _with_role(param: Param | Tie, role: str) -> Param | Tie:
    """A tensor of a module with the words of its role: itself when they are its key ("weight" in
    English), else made by its class, which takes its few fields faster than ``_worded`` copies them
    (a catalog build words some 6,000 tensors)."""
    if role == param.role:
        return param
    if isinstance(param, Tie):
        return Tie(param.name, param.tied_to, role, param.layer)
    return Param(param.name, param.shape, role, param.part, param.frozen, param.layer)
