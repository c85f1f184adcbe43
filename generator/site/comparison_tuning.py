"""Fine-tuning on the comparison: LoRA on every model, and each method's memory in training on a few.

Every figure is ``analysis.fine_tuning``'s, which asks ``counting.methods.tune``. A model's LoRA
cell is its own page's LoRA row, worked out beside that page (``Model.numbers``) and carried in
its summary. ``method_chart`` draws the few models' bars.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.analysis.fine_tuning import SHOWN, FineTuning
from generator.counting.memory import memory_of
from generator.counting.methods import Method, Tuning
from generator.counting.step_totals import StepTotals

LORA = next(t for t in SHOWN if t.method is Method.LORA)  # the rank a page shows LoRA at


@dataclass(frozen=True)
class LoraCell:
    """One model's LoRA row, as its page has it: the targets and what trains, or why LoRA cannot run."""

    rank: int
    targets: tuple[str, ...]  # what peft matched against, its defaults filled in; () where refused
    own: bool  # the card's own setting rather than the family's default
    refusal: str = ""  # the method's word for why not ("targets"), "unbuilt" without a transformers class
    trainable: int = 0
    total: int = 0  # the wrapped model's: its own parameters and the adapters
    memory: Mapping[str, int] = field(default_factory=dict)  # parameter_memory, "fp32" and "bf16_mixed"
    full: Mapping[str, int] = field(default_factory=dict)  # the same under full fine-tuning
    # A step's training memory in bf16 mixed precision at (32, min(P, 512)): LoRA's and full fine-tuning's,
    # both the page's ``Row.step``; None where either step is not derived.
    step: tuple[int, int] | None = None


def lora_cell(analysis: FineTuning | None) -> LoraCell:
    """A model page's LoRA row (``analysis``: its fine-tuning section, None without a transformers class)."""
    if analysis is None:
        return LoraCell(LORA.rank, (), own=False, refusal="unbuilt")
    row = analysis.lora
    if row.tuned is None:
        return LoraCell(row.tuning.rank, (), analysis.own_lora, row.refusal)
    tuned, full = row.tuned, analysis.full.step
    step = None
    if row.step is not None and full is not None:
        step = (row.step.training_memory["bf16_mixed"], full.training_memory["bf16_mixed"])
    return LoraCell(
        row.tuning.rank,
        tuned.targets,
        analysis.own_lora,
        "",
        tuned.trainable,
        tuned.total,
        row.memory,
        analysis.full.memory,
        step,
    )


@dataclass(frozen=True)
class MethodBar:
    """One method on one model: a training step's memory with Adam in bf16 mixed precision, by part."""

    tuning: Tuning
    trainable: int
    total: int
    parts: tuple[int, int, int, int]  # bytes: weights, gradients, Adam's states, bf16 activations (PARTS)
    refusal: str = ""  # the method's word for why it cannot run; the parts are then 0
    step: StepTotals | None = None  # the page's step under the method; without one the activations are 0

    @property
    def bytes(self) -> int:
        return sum(self.parts)


def method_bar(tuning: Tuning, trainable: int, total: int, step: StepTotals | None = None) -> MethodBar:
    """The parts of a method's memory: ``memory.memory_of``'s training state, then the step's bf16 activations."""
    weights, gradients, *states = memory_of(total, trainable).training_state  # TRAINING_STATE's order
    activations = step.activations["bf16"] if step is not None else 0
    parts = (weights.bytes, gradients.bytes, sum(s.bytes for s in states), activations)
    return MethodBar(tuning, trainable, total, parts, step=step)
