"""What the pages show of a model, gathered once from its inventory and derivation.

Templates receive these objects and only lay them out: every number here is read from the
inventory (a sum over its tensors), never computed again from the config.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from generator.analysis import address
from generator.analysis.checkpoint_names import TfName, has_tf_names, tf_name, tf_names_hypothetical
from generator.analysis.choices import load_choices
from generator.analysis.claims import ClaimCheck, ClassCount, check_claims, count_classes
from generator.analysis.fine_tuning import FineTuning, fine_tuning_of
from generator.cards.card import Card, natural_key
from generator.counting.architecture import Architecture, Block, Family, Head, Kind, Part, Symbol
from generator.counting.compute import Compute, measured, step_inexact, step_refusal
from generator.counting.derivation import Derivation, derive
from generator.counting.inventory import Inventory, Tensor, TiedTensor, count_parameters
from generator.counting.memo import IdentityMemo
from generator.counting.memory import Memory, memory_of
from generator.counting.parts import part_subtotals
from generator.site.comparison_step import ComparisonStep, compute_of, count_comparison_step
from generator.site.comparison_tuning import LoraCell, lora_cell

# Symbols every family uses in the same sense, in the order the index and comparison show them.
COMPARED_SYMBOLS = (
    ("L", "layers"),
    ("H", "hidden size"),
    ("A", "attention heads"),
    ("I", "feed-forward size"),
    ("E", "embedding size"),
    ("V", "vocabulary size"),
    ("P", "position table rows"),
)


@dataclass(frozen=True)
class TableGroup:
    """Rows of the per-tensor table for one block; a repeated block shows one layer, × L."""

    block: Block
    entries: tuple[Tensor | TiedTensor, ...]  # the rows shown (the first copy of a repeated block)
    rest: tuple[Tensor | TiedTensor, ...]  # the other copies, for the full list
    all_entries: tuple[Tensor | TiedTensor, ...]
    per_instance: int
    repeat: int
    subtotal: int


# The batch a model page's link to the calculator's training step asks for (sequences of min(P, 512)).
STEP_BATCH = 32


@dataclass(frozen=True)
class StepLink:
    """The calculator at one training step of a model: b, s and the query string that asks for them."""

    batch: int
    seq: int
    query: str


@dataclass(frozen=True)
class SummaryNumbers:
    """A summary's numbers without its card: what a worker process sends back to the build."""

    total: int
    subtotals: dict[Kind, int]
    parts: dict[Part, int]
    symbols: tuple[str, ...]
    trainable: int
    comparison: ComparisonStep | None  # worked out beside the model's page, so the pages about many models need not
    calculator_query: str  # likewise: the pages that link every model to the calculator need it of each
    lora: LoraCell  # likewise: the comparison's LoRA row, from the model page's fine-tuning analysis


@dataclass(frozen=True)
class Summary:
    """What pages about many models need of each: its card and its totals, a few hundred bytes.

    A build keeps one of these per card; the per-tensor detail (``Model``) of a card lives
    only while its own page is written, so memory does not grow with the tensors of every
    card. A page that needs the detail of a few named cards asks ``model()`` for it.
    """

    card: Card
    architecture: Architecture
    values: dict[str, int]
    total: int
    subtotals: dict[Kind, int]
    parts: dict[Part, int]
    symbols: tuple[Symbol, ...]  # the family's symbols this model's derivation uses, the head count included
    trainable: int  # the parameters an optimizer updates (the total less frozen tables)
    comparison: ComparisonStep | None  # FLOPs per token and training memory at b = 32, s; None: not measured
    calculator_query: str  # the calculator's query string that reproduces this card (calculator/?family=...&head=...)
    lora: LoraCell | None  # the comparison's LoRA row (``comparison_tuning``); None in a Model, whose page has it all

    @staticmethod
    def of(card: Card, numbers: SummaryNumbers) -> Summary:
        """A card's summary from the numbers its model gave (the rest is read off the card again)."""
        symbols = tuple(s for s in card.family.symbols if s.name in numbers.symbols)
        architecture = card.family.architecture(card.config, card.head)
        return Summary(
            card,
            architecture,
            card.symbol_values(),
            numbers.total,
            numbers.subtotals,
            numbers.parts,
            symbols,
            numbers.trainable,
            numbers.comparison,
            numbers.calculator_query,
            numbers.lora,
        )

    @property
    def id(self) -> str:
        return self.card.id

    @property
    def class_name(self) -> str:
        return self.architecture.class_name

    @property
    def memory(self) -> Memory:
        """The parameters' bytes at fp32, fp16/bf16 and int8, and for training with Adam."""
        return memory_of(self.total, self.trainable)

    @property
    def embedding_share(self) -> Fraction:
        return Fraction(self.subtotals[Kind.EMBEDDINGS], self.total)

    def symbol_value(self, name: str) -> int | None:
        """The card's number for a symbol, or None when this model's count does not use it."""
        symbol = next((s for s in self.symbols if s.name == name), None)
        return None if symbol is None else self.values.get(name)

    @property
    def training_step(self) -> StepLink | None:
        """The calculator at a fine-tuning step of 32 sequences (a reader's question: "how much memory does
        fine-tuning this model take at batch 32 and 512 tokens?"); None where torch never measured the compute,
        or where transformers cannot run a step of this config (its page says why, in the compute section)."""
        if not measured(self.card.family) or step_refusal(self.card) is not None or step_inexact(self.card):
            return None
        seq, query = address.step_of(self.card.family, self.card.config, self.calculator_query, STEP_BATCH)
        return StepLink(STEP_BATCH, seq, query)

    def model(self) -> Model:
        """The card counted and derived again, tensor by tensor (once per process: see ``named_model``)."""
        return named_model(self.card)


@dataclass(frozen=True)
class Model(Summary):
    """One card, counted and derived: every tensor, every step, and the numbers of its summary."""

    inventory: Inventory
    derivation: Derivation
    groups: tuple[TableGroup, ...]
    compute: Compute | None  # a training step's polynomials in b and s (comparison_step.compute_of)

    def model(self) -> Model:
        return self

    def numbers(self) -> SummaryNumbers:
        used = tuple(s.name for s in self.symbols)
        lora = lora_cell(self.fine_tuning)  # the page's own analysis: LoRA is worked out once per card
        return SummaryNumbers(
            self.total, self.subtotals, self.parts, used, self.trainable, self.comparison, self.calculator_query, lora
        )

    @cached_property
    def step_refusal(self) -> str | None:
        """Why transformers cannot run a training step of this card, or None (``compute.step_refusal``)."""
        return step_refusal(self.card)

    @cached_property
    def step_inexact(self) -> str | None:
        """Why one polynomial cannot say this card's step, or None (``compute.step_inexact``)."""
        return step_inexact(self.card)

    @cached_property
    def fine_tuning(self) -> FineTuning | None:
        """What each fine-tuning method trains on this model (``analysis.fine_tuning``)."""
        return fine_tuning_of(self.card, self.inventory)

    @cached_property
    def claim_checks(self) -> tuple[ClaimCheck, ...]:
        """Each published figure beside the exact count, with why they differ (see claims.py)."""
        return check_claims(self.card, self.inventory)

    @cached_property
    def class_counts(self) -> tuple[ClassCount, ...]:
        """The same weights counted by the family's other classes and the card's other configs."""
        return count_classes(self.card, self.inventory)

    @property
    def tf_names(self) -> bool:
        """Whether the tensor tables can show Google's TensorFlow checkpoint names (choices.yaml: tensorflow-scopes)."""
        return has_tf_names(self.card)

    @property
    def step_symbols(self) -> tuple[Symbol, ...]:
        """The symbols only the training step's formulas use (a rotary head size d), for the page's table;
        their values are in ``values``."""
        used = self.compute.steps.symbols if self.compute is not None else frozenset()
        return tuple(s for s in self.card.family.compute_symbols if s.name in used)

    @property
    def tf_names_hypothetical(self) -> bool:
        """Whether the checkpoint names are what Google's code would write, for a model never trained."""
        return tf_names_hypothetical(self.card)

    @cached_property
    def tensor_parts(self) -> dict[str, Part | None]:
        """Each tensor's part by name, gathered once: every derivation block asks, twice (``line_runs``)."""
        return {t.name: t.part for t in self.inventory.tensors}

    def tf_name(self, entry: Tensor | TiedTensor) -> TfName | None:
        """The TensorFlow checkpoint variable of a tensor, where the family has one (checkpoint_names.py)."""
        return tf_name(self.card, entry.name, tied=isinstance(entry, TiedTensor))


class Details(Mapping[str, Model]):
    """Models by id, each counted again when first asked for: for pages about a few named cards."""

    def __init__(self, models: Iterable[Summary]) -> None:
        self._summaries = {m.id: m for m in models}
        self._models: dict[str, Model] = {}

    def __getitem__(self, card_id: str) -> Model:
        if card_id not in self._models:
            self._models[card_id] = self._summaries[card_id].model()
        return self._models[card_id]

    def __contains__(self, card_id: object) -> bool:  # without counting the card, as Mapping's own would
        return card_id in self._summaries

    def __iter__(self) -> Iterator[str]:
        return iter(self._summaries)

    def __len__(self) -> int:
        return len(self._summaries)


# The cards the pages about a few named models count again (each comparison's two, the errata's, the
# exercises'), remembered by card object: one card may be in a dozen comparisons. Counted before the workers fork
# (the related pages ask for them first), a card is counted once per build, not once per page.
NAMED_MEMO = 128
_named: IdentityMemo[Card, Model] = IdentityMemo(NAMED_MEMO)


def named_model(card: Card) -> Model:
    """``model_of(card)``, remembered for the next page that names the same card object."""
    found = _named.get(card)
    return found if found is not None else _named.keep(card, model_of(card))


def named_or_counted(card: Card) -> Model:
    """The card's Model as ``named_model`` remembered it, or counted now and not remembered (a model page's card: most
    cards are named by no other page, and a build of 10,000 must not keep them all)."""
    found = _named.get(card)
    return found if found is not None else model_of(card)


# Cards of one shape: the same family, head and config, all that counting reads of a card. Hub-style
# catalogs repeat shapes (copies of one base model fine-tuned with one head and one set of labels are one),
# and so do the benchmark's cards: such a card is counted once per process, and its pages' rows are
# written once (the row filters and the compute section keep what they made from the very same objects,
# see render.py). Bounded: the cards come in id order, so the few shapes a family's cards cycle through
# are still remembered when they come round again.
SHAPES_MEMO = 16
_shaped: IdentityMemo[Family, Model] = IdentityMemo(SHAPES_MEMO)


def _shape(card: Card) -> tuple[Head, str]:
    """What, besides the family object, decides everything ``model_of`` counts: the head and the config
    (as text: a config holds dicts; two equal texts are two equal configs)."""
    return card.head, repr(sorted(card.config.items()))


def model_of(card: Card) -> Model:
    """One card's Model: counted, derived and grouped for its page (what a worker does per card), or
    another card's of the same shape (``_shape``) with this card in it."""
    shape = _shape(card)
    found = _shaped.get(card.family, *shape)
    if found is None:
        return _shaped.keep(card.family, _counted(card), *shape)
    return dataclasses.replace(found, card=card, inventory=dataclasses.replace(found.inventory, card=card))


def _counted(card: Card) -> Model:
    inventory = count_parameters(card)
    derivation = derive(inventory)
    groups = tuple(_group(inventory, block) for block in inventory.architecture.blocks)
    subtotals = {kind: inventory.count_of(kind=kind) for kind in Kind}
    compute = compute_of(card)  # counted once for the page, its JSON and the summary
    return Model(
        card,
        inventory.architecture,
        inventory.values if compute is None else {**inventory.values, **compute.values},  # and d, say
        inventory.total,
        subtotals,
        part_subtotals(inventory),
        _used_symbols(card, derivation, compute),
        inventory.trainable,
        count_comparison_step(card, compute),
        address.query(card.family, card.head, card.config),
        None,
        inventory,
        derivation,
        groups,
        compute,
    )


def _used_symbols(card: Card, derivation: Derivation, compute: Compute | None) -> tuple[Symbol, ...]:
    """The family's symbols that the page's formulas use: the parameters' derivation, and the training
    step's (a family with a fused projection counts no heads in its parameters, but its attention scores
    are b·A·s² numbers)."""
    used = derivation.formula.symbols()
    used |= {s.split.heads_symbol for b in derivation.blocks for s in b.lines if s.split}
    used |= {b.block.applied for b in derivation.blocks if b.block.applied}
    if compute is not None:
        used |= compute.steps.symbols
    return tuple(s for s in card.family.symbols if s.name in used)


def _group(inventory: Inventory, block: Block) -> TableGroup:
    all_entries, first = inventory.of_block(block), block.first  # a property: read once, not once a tensor
    shown = tuple(e for e in all_entries if e.index == first)
    rest = tuple(e for e in all_entries if e.index != first)
    per_instance = sum(e.count for e in shown if isinstance(e, Tensor))
    repeat = block.copies().evaluate(inventory.values)
    subtotal = inventory.count_of(block=block.key)
    return TableGroup(block, shown, rest, all_entries, per_instance, repeat, subtotal)


@dataclass(frozen=True)
class FamilyGroup:
    """The models of one family, smallest first: a group of rows in the index and the comparison."""

    family: Family
    models: tuple[Summary, ...]


@dataclass(frozen=True)
class StartGroup:
    """One list of the home page's first section: a group of families, and the models it shows."""

    key: str  # the group's name, which keys its words (site.yaml: catalog, start-groups)
    models: tuple[Summary, ...]


@dataclass(frozen=True)
class Catalog:
    """Every model in the sections the index shows: the variants by family, the families apart, the exercises."""

    variants: tuple[FamilyGroup, ...]  # the reference family first, then the others by title
    apart: tuple[FamilyGroup, ...]  # the families shown in sections of their own (content/choices.yaml)
    exercises: tuple[FamilyGroup, ...]
    start: tuple[StartGroup, ...] = ()  # the models most readers come for, listed above the table

    @property
    def groups(self) -> tuple[FamilyGroup, ...]:
        return self.variants + self.apart + self.exercises

    @property
    def example(self) -> str:
        """A card's id to show as an example: the first model listed first, else the first of all, else none."""
        first = tuple(m for group in self.start or self.groups for m in group.models)
        return first[0].id if first else ""

    @staticmethod
    def count(groups: tuple[FamilyGroup, ...]) -> int:
        """How many models one of the sections holds (``catalog.count(catalog.variants)``)."""
        return sum(len(group.models) for group in groups)


# The prefix of the textbook questions' cards (models/exercise-*.yaml).
EXERCISE_PREFIX = "exercise-"
# The models the index lists first, in groups, in this order (content/choices.yaml). Cards a build lacks are left out.
START_GROUPS = load_choices().start_groups
START_HERE = load_choices().start_here


def catalog(models: Iterable[Summary]) -> Catalog:
    """The models grouped by family and ordered by total, the exercises and the families set apart on their own."""
    every = list(models)
    apart_families = load_choices().apart_families
    exercises = [m for m in every if m.id.startswith(EXERCISE_PREFIX)]
    others = [m for m in every if not m.id.startswith(EXERCISE_PREFIX)]
    apart = [m for m in others if m.card.family.name in apart_families]
    variants = [m for m in others if m.card.family.name not in apart_families]
    by_id = {m.id: m for m in variants}
    start = tuple(StartGroup(key, tuple(by_id[i] for i in ids if i in by_id)) for key, ids in START_GROUPS)
    start = tuple(group for group in start if group.models)
    return Catalog(_by_family(variants), _by_family(apart), _by_family(exercises), start)


def _by_family(models: Iterable[Summary]) -> tuple[FamilyGroup, ...]:
    families: dict[str, list[Summary]] = {}
    for model in models:
        families.setdefault(model.card.family.name, []).append(model)
    first = load_choices().reference_family
    order = sorted(families, key=lambda name: (name != first, families[name][0].card.family.title.lower()))
    return tuple(
        FamilyGroup(
            families[name][0].card.family,
            tuple(sorted(families[name], key=lambda m: (m.total, natural_key(m.id)))),
        )
        for name in order
    )


def rounded(count: int) -> str:
    """A count the way papers print it: 109.5M, 4.4M, 1.07B, 590.6K."""
    for scale, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "K")):
        if count >= scale:
            value = count / scale
            digits = 2 if suffix == "B" else 1
            return f"{value:.{digits}f}{suffix}"
    return str(count)
