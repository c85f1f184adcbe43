"""A family's tensor names as patterns, and each head's closed form, read off its declaration.

A family page lists every name the family's classes can register, once, with the layer index
written as a placeholder (``encoder.layer.{n}.attention.self.query.weight``), and each head's
closed form. Nothing here counts a card: the names come from the builder's declarations for
every head and every setting of the switches that decide a block (the enumeration the
calculator's export relies on, ``calculator.slot_switches``), the shapes are the declared
polynomials, and the closed forms are ``derivation.closed_form`` of the blocks a head declares
with the config class's defaults.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from generator.analysis.calculator_data import merge_orders, slot_switches
from generator.cards.config import load_schema
from generator.counting.architecture import Architecture, Block, Family, Head, Module, Param, Tie
from generator.counting.derivation import block_form, closed_form
from generator.counting.expr import Expr, dim_expr, poly_expr
from generator.counting.poly import Poly, product

# How a name writes the index of each level of a repeated block, and of a module repeated inside one.
BLOCK_PLACEHOLDERS = ("{n}", "{m}")
MODULE_PLACEHOLDER = "{k}"


@dataclass(frozen=True)
class Form:
    """One shape a named tensor takes, and the switch settings it takes it in."""

    shape: tuple[Expr, ...]  # empty for a tied slot
    count: Expr | None  # None for a tied slot, which holds no parameters of its own
    tied_to: str | None
    label: str  # the module's label: "query", "token embeddings"
    role: str
    when: tuple[tuple[str, bool], ...]  # switches that must be on (True) or off (False); () always
    exact: bool  # False when ``when`` only approximates the settings (the page says "in some settings")

    @property
    def described(self) -> str:
        """What the tensor is: its module's label and its own role ("query, weight")."""
        return f"{self.label}, {self.role}"


@dataclass(frozen=True)
class PatternRow:
    """One distinct tensor name of a family, with the heads that register it and its forms."""

    name: str
    heads: tuple[Head, ...]
    forms: tuple[Form, ...]


@dataclass(frozen=True)
class Placeholder:
    """What a placeholder in a name counts: from ``first`` to ``last`` (in symbols)."""

    name: str
    first: int
    last: Expr
    label: str  # what a block's level counts (its symbol's meaning), or the repeated module's label
    module: bool = False  # the copies of a module inside the block, not the block's own instances


@dataclass(frozen=True)
class BlockPatterns:
    """The names of one block key across every head, in registration order."""

    key: str
    title: str
    rows: tuple[PatternRow, ...]
    placeholders: tuple[Placeholder, ...]


@dataclass(frozen=True)
class Piece:
    """A block a head adds to the base model or leaves out: its title and its parameters in symbols."""

    title: str
    formula: Poly  # every copy included
    expression: Expr
    key: str = ""  # the block's key: a block a head holds in another form has the same key in both


@dataclass(frozen=True)
class HeadForm:
    """A head's class and closed form with the defaults' switches, and what it changes from the base model."""

    head: Head
    class_name: str
    formula: Poly
    closed_form: Expr
    added: tuple[Piece, ...]  # blocks the base model lacks, or holds in another form
    removed: tuple[Piece, ...]  # blocks of the base model this head leaves out, or holds in another form

    @property
    def changes(self) -> tuple[tuple[str, Piece, Piece | None], ...]:
        """What a page says the head does to the base model, block by block: ("without", block, None),
        ("with", block, None), or ("as", the head's form, the base model's) for a block both hold in
        different forms (masked-LM embeddings whose token table the head's tie moves out)."""
        mine = {piece.key: piece for piece in self.added}
        theirs = {piece.key: piece for piece in self.removed}
        return (
            *(("without", piece, None) for piece in self.removed if piece.key not in mine),
            *(("with", piece, None) for piece in self.added if piece.key not in theirs),
            *(("as", piece, theirs[piece.key]) for piece in self.added if piece.key in theirs),
        )


def _order(family: Family) -> tuple[str, ...]:
    return tuple(s.name for s in family.symbols)


def _settings(family: Family, head: Head) -> Iterator[tuple[str, dict[str, bool], Architecture]]:
    """For each block key, every setting of the switches that decide it (the others off) and its declaration."""
    names = [s.name for s in family.switches]
    off = family.declared(dict.fromkeys(names, False), head)
    keys = dict.fromkeys([b.key for b in off.blocks] + [k for s in family.switches for k in s.blocks])
    for key in keys:
        deciding = slot_switches(family, key)
        for bits in itertools.product((False, True), repeat=len(deciding)):
            on = dict(zip(deciding, bits, strict=True))
            yield key, on, family.declared({**dict.fromkeys(names, False), **on}, head)


def pattern_name(block: Block, module: Module, param: Param | Tie) -> str:
    """A tensor's name with each repeat index written as its placeholder."""
    prefix = block.prefix.format(*BLOCK_PLACEHOLDERS[: len(block.repeat)])
    path = module.path.replace("{n}", MODULE_PLACEHOLDER)
    return f"{prefix}{path}.{param.name}" if path else f"{prefix}{param.name}"


@dataclass
class _Seen:
    """What the enumeration has seen of one name so far (filled in as the declarations are read)."""

    heads: list[Head]
    keys: dict[Head, str]  # the block each head declares it in (two heads may share one, e.g. head.dense)
    contexts: dict[tuple[Head, tuple[tuple[str, bool], ...]], tuple[object, ...]]  # context -> form key
    forms: dict[tuple[object, ...], tuple[Param | Tie, Module]]


# What family_patterns found, by what it reads of a family: equal keys give equal patterns.
_PATTERNS: dict[tuple[object, ...], tuple[BlockPatterns, ...]] = {}


def family_patterns(family: Family) -> tuple[BlockPatterns, ...]:
    """Every distinct tensor name of the family, grouped by block, in an order every head follows.

    Worked out once per process: every switch setting of every head is declared (a family with many
    switches has hundreds), and a build asks for it while its workers write the model pages (``prepare``)."""
    key = (family.declare, family.heads, family.switches, family.symbols)
    if key not in _PATTERNS:
        _PATTERNS[key] = _family_patterns(family)
    return _PATTERNS[key]


def _family_patterns(family: Family) -> tuple[BlockPatterns, ...]:
    order = _order(family)
    rows: dict[str, dict[str, _Seen]] = {}  # block key -> name -> what was seen
    placed: dict[str, str] = {}  # name -> the block key its row is listed under (the first seen)
    titles: dict[str, str] = {}
    placeholders: dict[str, dict[str, Placeholder]] = {}
    sequences: list[list[str]] = []
    settings_by_key: dict[tuple[Head, str], list[tuple[tuple[str, bool], ...]]] = {}
    for head in family.heads:
        for key, on, architecture in _settings(family, head):
            sequences.append([b.key for b in architecture.blocks])
            context = tuple(sorted(on.items()))
            settings_by_key.setdefault((head, key), []).append(context)
            for block in architecture.blocks:
                if block.key != key:
                    continue
                titles.setdefault(key, block.title)
                placeholders.setdefault(key, {}).update(_placeholders(block, family))
                for module in block.modules:
                    for param in module.params:
                        name = pattern_name(block, module, param)
                        named = rows.setdefault(placed.setdefault(name, key), {})
                        seen = named.setdefault(name, _Seen([], {}, {}, {}))
                        if head not in seen.heads:
                            seen.heads.append(head)
                            seen.keys[head] = key
                        form_key = _form_key(param)
                        seen.contexts[(head, context)] = form_key
                        seen.forms.setdefault(form_key, (param, module))
    ranked = merge_orders(sequences)
    result = []
    for key in sorted(rows, key=ranked.index):
        block_rows = []
        for name, seen in rows[key].items():
            settings = [(h, c) for h in seen.heads for c in settings_by_key[(h, seen.keys[h])]]
            forms = tuple(
                _form(param, module, order, [c for c, k in seen.contexts.items() if k == form_key], settings)
                for form_key, (param, module) in seen.forms.items()
            )
            block_rows.append(PatternRow(name, tuple(seen.heads), forms))
        result.append(BlockPatterns(key, titles[key], tuple(block_rows), tuple(placeholders[key].values())))
    return tuple(result)


def _form_key(param: Param | Tie) -> tuple[object, ...]:
    if isinstance(param, Tie):
        return ("tied", param.tied_to, param.role)
    return ("shape", param.shape, param.role)


def _form(
    param: Param | Tie,
    module: Module,
    order: tuple[str, ...],
    where: list[tuple[Head, tuple[tuple[str, bool], ...]]],
    settings: list[tuple[Head, tuple[tuple[str, bool], ...]]],
) -> Form:
    """A form with the switch literals every setting it appears in shares, and whether they say it all."""
    common = set(where[0][1])
    for _, context in where[1:]:
        common &= set(context)
    when = tuple(sorted(common))
    matching = [(h, c) for h, c in settings if set(when) <= set(c)]
    exact = set(matching) == set(where)
    if isinstance(param, Tie):
        return Form((), None, param.tied_to, module.label, param.role, when, exact)
    # One tensor's count: every copy of a repeated block or module is a name of its own.
    count = poly_expr(product(param.shape), order)
    return Form(tuple(dim_expr(d, order) for d in param.shape), count, None, module.label, param.role, when, exact)


def _placeholders(block: Block, family: Family) -> dict[str, Placeholder]:
    order = _order(family)
    meanings = {s.name: s.meaning for s in family.symbols}
    found: dict[str, Placeholder] = {}
    for level, (symbol, count) in enumerate(zip(block.repeat, block.counts(), strict=True)):
        first = block.start if level == 0 else 0
        last = poly_expr(count + (first - 1), order)
        found[BLOCK_PLACEHOLDERS[level]] = Placeholder(BLOCK_PLACEHOLDERS[level], first, last, meanings[symbol])
    for module in block.modules:
        if module.repeat is not None:
            last = poly_expr(module.repeat + (-1), order)
            found[MODULE_PLACEHOLDER] = Placeholder(MODULE_PLACEHOLDER, 0, last, module.label, module=True)
    return found


def defaults(family: Family) -> Mapping[str, object]:
    """The config class's defaults: the switch settings a closed form is written for."""
    return load_schema(family).defaults


# What head_forms found, by what it reads of a family (its name: the defaults of its config class).
_FORMS: dict[tuple[object, ...], tuple[HeadForm, ...]] = {}


def head_forms(family: Family) -> tuple[HeadForm, ...]:
    """Each head's closed form with the defaults' switches, and the blocks it adds to or drops from the base model.

    A block the head declares under the base model's key but with another count (a masked-LM model
    whose tie moves the token table out of its embeddings) is both: the base model's form
    left out, the head's added, so the base model's total minus the one plus the other is the head's.
    Worked out once per process, like ``family_patterns``: the family index and the family's own page
    both show them.
    """
    key = (family.name, family.declare, family.heads, family.switches, family.symbols)
    if key not in _FORMS:
        _FORMS[key] = _head_forms(family)
    return _FORMS[key]


def _head_forms(family: Family) -> tuple[HeadForm, ...]:
    order = _order(family)
    config = defaults(family)
    declared = {head: family.architecture(config, head) for head in family.heads}
    base = declared.get(Head.BASE)
    own = {b.key: _instance_total(b, order) for b in base.blocks} if base is not None else {}
    forms = []
    for head, architecture in declared.items():
        theirs = {b.key: _instance_total(b, order) for b in architecture.blocks}
        added: tuple[Piece, ...] = ()
        removed: tuple[Piece, ...] = ()
        if base is not None and head is not Head.BASE:
            changed = [b for b in architecture.blocks if own.get(b.key) != theirs[b.key]]
            added = tuple(_piece(b, theirs[b.key], order) for b in changed)
            removed = tuple(_piece(b, own[b.key], order) for b in base.blocks if theirs.get(b.key) != own[b.key])
        blocks = [block_form(b, order) for b in architecture.blocks]
        formula = sum(theirs.values(), Poly())
        forms.append(HeadForm(head, architecture.class_name, formula, closed_form(blocks, order), added, removed))
    return tuple(forms)


def _piece(block: Block, formula: Poly, order: tuple[str, ...]) -> Piece:
    return Piece(block.title, formula, poly_expr(formula, order), block.key)


def _instance_total(block: Block, order: tuple[str, ...]) -> Poly:
    """A block's parameters in symbols, every copy included."""
    return block_form(block, order).formula * block.copies()
