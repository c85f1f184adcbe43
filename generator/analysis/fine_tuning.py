"""A model page's fine-tuning methods: each method's trainable count and memory, and LoRA worked.

Fine-tuning usually puts a classifier on an encoder, so a card of the bare encoder is
counted here with the family's sequence-classification class, at the card's number of
labels. Every figure comes from ``counting.methods``; this module only chooses what to show.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable
from dataclasses import dataclass
from functools import cached_property

from generator.analysis.calculator_compute import default_seq, longest_of
from generator.cards.card import Card
from generator.counting.architecture import Head, Layer
from generator.counting.compute import StepCannotRunError, UndeclaredActivationError, shows_step
from generator.counting.inventory import Inventory, count_parameters
from generator.counting.memo import ValueMemo
from generator.counting.methods import (
    Group,
    Method,
    Tuned,
    Tuning,
    TuningError,
    groups,
    indexless,
    modules_of,
    prompt_misfit,
    tune,
)
from generator.counting.step_refusals import StepNotDerivedError
from generator.counting.step_totals import StepTotals, parameter_memory
from generator.counting.tuned_step import tuned_compute, tuned_seq

# The methods in the order a page lists them, each with the settings it is shown at.
SHOWN = (
    Tuning(Method.FULL),
    Tuning(Method.HEAD),
    Tuning(Method.BITFIT),
    Tuning(Method.LORA),
    Tuning(Method.IA3),
    Tuning(Method.PROMPT_TUNING),
)
# The batch the section's training step is worked at, over s = min(P, 512) tokens (the grid's largest).
STEP_BATCH = 32
# The module keys of an attention's query and value projections (common.query_key_value): LoRA's
# usual pair, adapted on a page where peft has no default of its own for the family.
QUERY_VALUE = ("query", "value")


@dataclass(frozen=True)
class Row:
    """One method on one model: what it trains, or why it cannot run."""

    tuning: Tuning
    tuned: Tuned | None
    refusal: str = ""  # the method's own words for why not ("base", "targets", "hidden-size")
    step: StepTotals | None = None  # one training step under the method, where it is derived

    @property
    def id(self) -> str:
        return f"fine-tuning-{self.tuning.method.value}"

    @property
    def misfit(self) -> tuple[int, int] | None:
        """A prompt as wide as hidden_size beside token vectors of another width (``methods.prompt_misfit``)."""
        return prompt_misfit(self.tuned) if self.tuned is not None else None

    @property
    def memory(self) -> dict[str, int]:
        """Weights, and gradients and Adam's two moments for what trains, in fp32 and in bf16 mixed precision."""
        assert self.tuned is not None
        return parameter_memory(self.tuned.total, self.tuned.trainable)

    @property
    def optimizer(self) -> int:
        """What the trained parameters add to the weights in bf16 mixed precision: gradients, fp32
        master copies and Adam's two moments."""
        assert self.tuned is not None
        return self.memory["bf16_mixed"] - parameter_memory(self.tuned.total, 0)["bf16_mixed"]


@dataclass(frozen=True)
class Matched:
    """The modules one target name matches, by where they sit: ``encoder.layer.{i}.output.dense`` × 12."""

    target: str
    places: tuple[tuple[str, int], ...]  # a name with its layer index written {i}, and how many match it

    @property
    def count(self) -> int:
        return sum(n for _, n in self.places)


@dataclass(frozen=True)
class FineTuning:
    """What a model page shows of fine-tuning methods: numbers and names only, the same in every edition."""

    own: Tuning | None  # how the card says the model is fine-tuned, if it does
    inventory: Inventory  # of the class the methods are counted on (a classifier for a bare encoder)
    classifier_added: bool  # the card is a bare encoder, and a classifier was put on it
    lora_defaults: bool  # peft has LoRA targets of its own for the family (else the query and value are used)

    @property
    def own_lora(self) -> bool:
        """Whether the LoRA row is the card's own setting rather than peft's defaults."""
        return self.own is not None and self.own.method is Method.LORA

    @cached_property
    def rows(self) -> tuple[Row, ...]:
        return tuple(self._row(t) for t in SHOWN)

    @cached_property
    def seq(self) -> int:
        """The tokens of the section's training step: min(P, 512), as the training step above."""
        return default_seq(self.inventory.card.family, self.inventory.card.config)

    @property
    def step_batch(self) -> int:
        return STEP_BATCH

    def seq_of(self, tuning: Tuning) -> int:
        """A method's tokens: for prompt tuning, fewer where its virtual tokens would not fit the positions besides."""
        longest = longest_of(self.inventory.card.family, self.inventory.card.config)
        if tuning.method is not Method.PROMPT_TUNING or longest is None:
            return self.seq
        return max(0, min(self.seq, longest - tuning.virtual_tokens))

    @property
    def derived(self) -> bool:
        """Whether the step under a method is worked out: the full step is, and the family's data flow declared
        (a prompt too wide for the token vectors has no step either way)."""
        return any(r.step is not None for r in self.rows if r.tuning.method is not Method.FULL)

    @property
    def full(self) -> Row:
        return self.rows[0]

    @cached_property
    def lora(self) -> Row:
        return next(r for r in self.rows if r.tuning.method is Method.LORA)

    @cached_property
    def lora_groups(self) -> tuple[Group, ...]:
        return tuple(groups(self.lora.tuned)) if self.lora.tuned is not None else ()

    @cached_property
    def shared(self) -> int | None:
        """How many layer steps apply each stored layer, where the adapted layers are shared (else None)."""
        lora = self.lora.tuned
        for block in self.inventory.architecture.blocks:
            if (
                block.applied is not None
                and lora is not None
                and any(name.startswith(block.prefix.split("{")[0]) for name in lora.adapted)
            ):
                return self.inventory.values[block.applied]
        return None

    @cached_property
    def saved_layers(self) -> tuple[tuple[str, int, int, bool, int], ...]:
        """Each Linear of the modules LoRA's classifier trains whole: its name, in, out, whether it has a bias,
        and its count."""
        lora = self.lora.tuned
        if lora is None:
            return ()
        modules = modules_of(self.inventory)
        found = []
        for name, layer in modules.layers.items():
            if layer is Layer.LINEAR and any(name == s or name.startswith(f"{s}.") for s in lora.saved):
                out, n_in = modules.shape_of(name)
                bias = modules.tensors.get(f"{name}.bias")
                found.append((name, n_in, out, bias is not None, out * n_in + (bias.count if bias is not None else 0)))
        return tuple(found)

    @cached_property
    def matches(self) -> tuple[Matched, ...]:
        """What each Linear layer's last name matches, as peft reads a target: all modules that end so."""
        modules = modules_of(self.inventory)
        linears = [name for name, layer in modules.layers.items() if layer is Layer.LINEAR]
        found = []
        for target in dict.fromkeys(name.rpartition(".")[2] for name in linears):
            places: dict[str, int] = {}
            for name in modules.matching((target,)):
                place = _indexless(name)
                places[place] = places.get(place, 0) + 1
            found.append(Matched(target, tuple(places.items())))
        return tuple(found)

    def _row(self, tuning: Tuning) -> Row:
        own = self.own
        if own is not None and own.method is tuning.method:  # the card says how it is fine-tuned: that setting
            tuning = own
        elif tuning.method is Method.LORA and not self.lora_defaults:
            tuning = dataclasses.replace(tuning, targets=_query_value(self.inventory))
        try:
            tuned = tune(self.inventory, tuning)
        except TuningError as error:
            return Row(tuning, None, error.what)
        return Row(tuning, tuned, step=self._step(tuned))

    def _step(self, tuned: Tuned) -> StepTotals | None:
        """One step under the method at (32, s), or None where no step is shown."""
        seq = self.seq_of(tuned.tuning)
        if seq < 1 or not shows_step(self.inventory.card) or prompt_misfit(tuned) is not None:
            return None
        try:
            return tuned_compute(self.inventory.card, tuned).at(STEP_BATCH, tuned_seq(tuned, seq))
        except (StepNotDerivedError, StepCannotRunError, UndeclaredActivationError):
            return None


def _query_value(inventory: Inventory) -> tuple[str, ...]:
    """The last names of the modules the family declares as its query and value projections."""
    names: dict[str, str] = {}
    for tensor in inventory.tensors:
        if tensor.module.key in QUERY_VALUE and tensor.block.repeat:
            names.setdefault(tensor.module.key, tensor.name.rpartition(".")[0].rpartition(".")[2])
    return tuple(names[key] for key in QUERY_VALUE if key in names)


# A page's section holds numbers and names only, decided by the card's setting (``_setting``): the card's
# editions (two card objects) and cards of one shape share one, worked out once. Bounded, as views' shapes are.
SECTIONS_MEMO = 16
_sections: ValueMemo[Hashable, FineTuning] = ValueMemo(SECTIONS_MEMO)
# A module's name with its layer indices as {i}: the same names recur on every card of a family.
_indexless = functools.lru_cache(maxsize=4096)(indexless)


def fine_tuning_of(card: Card, inventory: Inventory | None = None) -> FineTuning | None:
    """The fine-tuning section of a card's page; None for a model no transformers class builds (peft wraps those).

    ``inventory`` is the card's own, counted already: a card with a head is counted as it is."""
    if card.family.ground_truth is None:
        return None
    setting = _setting(card)
    found = _sections.get(setting)
    if found is not None:
        return found
    classifier = card.head is Head.BASE and Head.SEQUENCE_CLASSIFICATION in card.family.heads
    if classifier:
        counted = count_parameters(dataclasses.replace(card, head=Head.SEQUENCE_CLASSIFICATION))
    else:
        counted = inventory if inventory is not None else count_parameters(card)
    section = FineTuning(card.fine_tuning, counted, classifier, card.family.peft.lora is not None)
    return _sections.keep(setting, section)


def _setting(card: Card) -> Hashable:
    """All that decides a card's section: its family's name (its counts are the same in every language),
    head, config (as text: a config holds dicts) and own setting."""
    return card.family.name, card.head, repr(sorted(card.config.items())), card.fine_tuning
