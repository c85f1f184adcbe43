"""Two models side by side: configs, parameters by part, and the tensors one has and the other lacks.

The pairs the site compares are chosen once, in content/choices.yaml, read into ``PAIRS``.
Everything else is read off the two inventories: part subtotals (``parts.py``), part formulas
from the declarations, and the tensors matched first by name, then, for those left over, by
component and role.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from generator.analysis.choices import load_choices
from generator.counting.architecture import Kind, Part
from generator.counting.derivation import part_form
from generator.counting.expr import Expr
from generator.counting.inventory import Inventory, Tensor
from generator.counting.parts import part_subtotals, shares
from generator.counting.texts import part_titles
from generator.site.views import Model, Summary


@dataclass(frozen=True)
class Pair:
    """Two models worth comparing, from ``a`` to ``b``; what it teaches is content (diffs.yaml, by slug)."""

    a: str
    b: str

    @property
    def slug(self) -> str:
        return f"{self.a}--{self.b}"


# Every comparison page on the site (content/choices.yaml); a pair whose cards are not in the build is left out.
PAIRS = tuple(Pair(a, b) for a, b in load_choices().pairs)


@dataclass(frozen=True)
class ConfigRow:
    """One symbol of either model's count, with each model's key and value (None: not used)."""

    symbol: str
    meaning: str
    key_a: str | None
    key_b: str | None
    a: int | None
    b: int | None

    @property
    def changed(self) -> bool:
        return self.a != self.b

    @property
    def difference(self) -> int | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class PartRow:
    """One part in both models: counts, displayed shares, and its formula in each."""

    part: Part
    title: str
    a: int
    b: int
    share_a: Fraction
    share_b: Fraction
    formula_a: Expr
    formula_b: Expr
    symbols: frozenset[str]  # the symbols either formula uses

    @property
    def difference(self) -> int:
        return self.b - self.a


@dataclass(frozen=True)
class TensorRow:
    """Tensors of one kind that one model adds, drops or reshapes; identical layers folded into one row."""

    part: Part
    name_a: str | None  # a layer range is written 12–23
    name_b: str | None
    shape_a: tuple[int, ...] | None
    shape_b: tuple[int, ...] | None
    copies: int
    count_a: int  # over every copy
    count_b: int
    by_role: bool  # matched by component and role, not by name
    tensors_a: tuple[Tensor, ...] = ()  # the tensors folded into the row: a figure marks their steps
    tensors_b: tuple[Tensor, ...] = ()

    @property
    def difference(self) -> int:
        return self.count_b - self.count_a


@dataclass(frozen=True)
class NameExample:
    """One tensor that the two models name differently."""

    part: Part
    label: str  # the module's label, as the tensor tables write it
    role: str
    name_a: str
    name_b: str


@dataclass(frozen=True)
class Sharing:
    """A model that stores fewer layers than it applies: one whose layers are shared across depth."""

    model: str
    stored: int
    stored_symbols: tuple[str, ...]
    applied_symbol: str
    applied: int


@dataclass(frozen=True)
class Cause:
    """A part that carries much of the difference, and what explains it."""

    row: PartRow
    symbols: tuple[ConfigRow, ...]  # changed symbols its formulas use
    added: int  # tensors of this part only in b
    removed: int  # only in a
    reshaped: int


@dataclass(frozen=True)
class Diff:
    """Everything a comparison page shows."""

    pair: Pair
    a: Model
    b: Model
    config: tuple[ConfigRow, ...]
    parts: tuple[PartRow, ...]
    added: tuple[TensorRow, ...]
    removed: tuple[TensorRow, ...]
    reshaped: tuple[TensorRow, ...]
    unchanged: int  # tensors with the same shape in both
    by_name: int  # matched tensors found by name
    by_role: int  # found by component and role
    naming: tuple[NameExample, ...]  # how names differ, when some tensors matched by role only
    causes: tuple[Cause, ...]
    sharing: tuple[Sharing, ...]

    @property
    def difference(self) -> int:
        return self.b.total - self.a.total

    @property
    def magnitude(self) -> int:
        return abs(self.difference)

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.b.total, self.a.total)

    @property
    def added_parameters(self) -> int:
        return sum(row.count_b for row in self.added)

    @property
    def removed_parameters(self) -> int:
        return sum(row.count_a for row in self.removed)

    @property
    def reshaped_difference(self) -> int:
        return sum(row.difference for row in self.reshaped)

    @property
    def changed_symbols(self) -> tuple[ConfigRow, ...]:
        return tuple(row for row in self.config if row.changed)

    @property
    def inert_changes(self) -> tuple[ConfigRow, ...]:
        """Changed symbols that no part's formula uses (the head count A): they change no count."""
        used = frozenset().union(*(row.symbols for row in self.parts))
        return tuple(row for row in self.changed_symbols if row.symbol not in used)

    def count_of(self, rows: Sequence[TensorRow]) -> int:
        return sum(row.copies for row in rows)


@dataclass(frozen=True)
class Pairing:
    """A declared pair whose two cards are in the build: what the list of comparisons shows."""

    pair: Pair
    a: Summary
    b: Summary
    topic: str  # what the comparison teaches, in the build's language

    @property
    def difference(self) -> int:
        return self.b.total - self.a.total

    def compare(self) -> Diff:
        """The whole comparison, from both models counted again."""
        return compare(self.pair, self.a.model(), self.b.model())


def available_pairs(models: Iterable[Summary], topics: Callable[[str], str]) -> tuple[Pairing, ...]:
    """The declared pairs whose two cards are in this build, with their summaries and ``topics(slug)``."""
    by_id = {model.id: model for model in models}
    return tuple(Pairing(p, by_id[p.a], by_id[p.b], topics(p.slug)) for p in PAIRS if p.a in by_id and p.b in by_id)


def compare(pair: Pair, a: Model, b: Model) -> Diff:
    """The whole comparison of two models."""
    config = _config_rows(a, b)
    parts = _part_rows(a, b)
    matched, only_a, only_b = _match(a.inventory, b.inventory)
    reshaped_pairs = [(x, y, role) for x, y, role in matched if x.shape != y.shape]
    added = _fold([(None, t, False) for t in only_b])
    removed = _fold([(t, None, False) for t in only_a])
    reshaped = _fold(reshaped_pairs)
    by_role = [(x, y) for x, y, role in matched if role]
    causes = _causes(parts, config, only_a, only_b, reshaped_pairs)
    return Diff(
        pair=pair,
        a=a,
        b=b,
        config=config,
        parts=parts,
        added=added,
        removed=removed,
        reshaped=reshaped,
        unchanged=sum(1 for x, y, _ in matched if x.shape == y.shape),
        by_name=len(matched) - len(by_role),
        by_role=len(by_role),
        naming=_name_examples(by_role),
        causes=causes,
        sharing=tuple(s for m in (a, b) for s in _sharing(m)),
    )


def _config_rows(a: Model, b: Model) -> tuple[ConfigRow, ...]:
    symbols_a = {s.name: s for s in a.symbols}
    symbols_b = {s.name: s for s in b.symbols}
    names = list(symbols_a) + [n for n in symbols_b if n not in symbols_a]
    rows = []
    for name in names:
        sa, sb = symbols_a.get(name), symbols_b.get(name)
        either = sa or sb
        meaning = either.meaning if either else name
        rows.append(
            ConfigRow(
                symbol=name,
                meaning=meaning,
                key_a=sa.key if sa else None,
                key_b=sb.key if sb else None,
                a=a.symbol_value(name) if sa else None,
                b=b.symbol_value(name) if sb else None,
            )
        )
    return tuple(rows)


def _part_rows(a: Model, b: Model) -> tuple[PartRow, ...]:
    sub_a, sub_b = part_subtotals(a.inventory), part_subtotals(b.inventory)
    shares_a = {s.part: s.fraction for s in shares(sub_a)}
    shares_b = {s.part: s.fraction for s in shares(sub_b)}
    titles = part_titles(a.card.family.language)  # the build's language, which both cards' families carry
    rows = []
    for part in Part:
        formula_a, symbols_a = part_form(a.inventory, part)
        formula_b, symbols_b = part_form(b.inventory, part)
        rows.append(
            PartRow(
                part=part,
                title=titles[part],
                a=sub_a[part],
                b=sub_b[part],
                share_a=shares_a[part],
                share_b=shares_b[part],
                formula_a=formula_a,
                formula_b=formula_b,
                symbols=symbols_a | symbols_b,
            )
        )
    return tuple(rows)


# A tensor's place, for matching across families: the kind of block, which copy of it, the
# module's label (query, feed-forward in, ...), the tensor's role (weight, bias, scale γ, ...),
# and how many earlier tensors share all of that (stacked FFNs, a decoder's second attention).
RoleKey = tuple[str, int, str, str, int]


def _role_keys(inventory: Inventory) -> dict[str, RoleKey]:
    ordinals: dict[tuple[str, tuple[int, ...]], int] = {}
    for block in inventory.architecture.blocks:
        for number, index in enumerate(block.instances(inventory.values)):
            ordinals[(block.key, index)] = block.start + number
    seen: dict[tuple[str, int, str, str], int] = {}
    keys = {}
    for tensor in inventory.tensors:
        base = (tensor.block.kind.value, ordinals[(tensor.block.key, tensor.index)], tensor.module.label, tensor.role)
        keys[tensor.name] = (*base, seen.get(base, 0))
        seen[base] = seen.get(base, 0) + 1
    return keys


Matched = list[tuple[Tensor, Tensor, bool]]


def _match(a: Inventory, b: Inventory) -> tuple[Matched, list[Tensor], list[Tensor]]:
    """Pairs of tensors (by name, then by role for the rest), and the tensors of each model left alone."""
    names_b = {t.name: t for t in b.tensors}
    matched: Matched = [(t, names_b[t.name], False) for t in a.tensors if t.name in names_b]
    taken_a = {x.name for x, _, _ in matched}
    left_a = [t for t in a.tensors if t.name not in taken_a]
    left_b = [t for t in b.tensors if t.name not in taken_a]
    keys_a, keys_b = _role_keys(a), _role_keys(b)
    roles_b = {keys_b[t.name]: t for t in left_b}
    by_role = [(t, roles_b[keys_a[t.name]], True) for t in left_a if keys_a[t.name] in roles_b]
    taken_b = {y.name for _, y, _ in by_role}
    only_a = [t for t in left_a if keys_a[t.name] not in roles_b]
    only_b = [t for t in left_b if t.name not in taken_b]
    return matched + by_role, only_a, only_b


def _ranges(values: Iterable[int]) -> str:
    """0–11, or 0–3, 6 when there are gaps."""
    ordered = sorted(set(values))
    runs: list[list[int]] = []
    for value in ordered:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _pattern(tensors: Sequence[Tensor]) -> str:
    """The name of a tensor with each layer index replaced by the range of the group's copies."""
    first = tensors[0]
    block = first.block
    if not block.repeat:
        return first.name
    rest = first.name[len(block.prefix.format(*first.index)) :]
    levels = [_ranges(t.index[level] for t in tensors) for level in range(len(block.repeat))]
    return block.prefix.format(*levels) + rest


def _stem(tensor: Tensor | None) -> tuple[str, str] | None:
    """A tensor's name without its layer index, and its block: what identical layers share."""
    if tensor is None:
        return None
    return (tensor.block.key, tensor.name[len(tensor.block.prefix.format(*tensor.index)) :])


def _fold(rows: Sequence[tuple[Tensor | None, Tensor | None, bool]]) -> tuple[TensorRow, ...]:
    groups: dict[tuple[object, ...], list[tuple[Tensor | None, Tensor | None, bool]]] = {}
    for x, y, role in rows:
        key = (_stem(x), _stem(y), x.shape if x else None, y.shape if y else None, role)
        groups.setdefault(key, []).append((x, y, role))
    result = []
    for members in groups.values():
        xs = [x for x, _, _ in members if x is not None]
        ys = [y for _, y, _ in members if y is not None]
        result.append(
            TensorRow(
                part=_part((xs or ys)[0]),
                name_a=_pattern(xs) if xs else None,
                name_b=_pattern(ys) if ys else None,
                shape_a=xs[0].shape if xs else None,
                shape_b=ys[0].shape if ys else None,
                copies=len(members),
                count_a=sum(t.count for t in xs),
                count_b=sum(t.count for t in ys),
                by_role=members[0][2],
                tensors_a=tuple(xs),
                tensors_b=tuple(ys),
            )
        )
    return tuple(result)


def _part(tensor: Tensor) -> Part:
    if tensor.part is None:
        raise ValueError(f"tensor {tensor.name} is declared without a part")
    return tensor.part


def _name_examples(by_role: Sequence[tuple[Tensor, Tensor]]) -> tuple[NameExample, ...]:
    """The first tensor matched by role in each part: enough to see how the two naming schemes differ."""
    examples: dict[Part, NameExample] = {}
    for x, y in by_role:
        if x.part is not None and x.part not in examples and x.name != y.name:
            examples[x.part] = NameExample(x.part, x.module.label, x.role, x.name, y.name)
    return tuple(examples[p] for p in Part if p in examples)


def _causes(
    parts: Sequence[PartRow],
    config: Sequence[ConfigRow],
    only_a: Sequence[Tensor],
    only_b: Sequence[Tensor],
    reshaped: Sequence[tuple[Tensor, Tensor, bool]],
) -> tuple[Cause, ...]:
    """The parts that carry at least a tenth of the change (at most three, largest first)."""
    moved = sum(abs(row.difference) for row in parts)
    if not moved:
        return ()
    leading = sorted((row for row in parts if 10 * abs(row.difference) >= moved), key=lambda r: -abs(r.difference))
    changed = [row for row in config if row.changed]

    def tally(tensors: Iterable[Tensor], part: Part) -> int:
        return sum(1 for t in tensors if t.part is part)

    return tuple(
        Cause(
            row=row,
            symbols=tuple(c for c in changed if c.symbol in row.symbols),
            added=tally(only_b, row.part),
            removed=tally(only_a, row.part),
            reshaped=tally((x for x, _, _ in reshaped), row.part),
        )
        for row in leading[:3]
    )


def _sharing(model: Model) -> list[Sharing]:
    values = model.inventory.values
    return [
        Sharing(model.card.title, block.copies().evaluate(values), block.repeat, block.applied, values[block.applied])
        for block in model.inventory.architecture.blocks
        if block.applied and block.kind is Kind.ENCODER
    ]
