"""What the reference tools ask transformers about a family: its inputs, never its counts.

The tools in ``tools/`` build a family's classes with torch and record what they find. They
read this declaration for what to build and run: the configs the sampler draws, the labels
of a training step, the sequence lengths measured. What they record stays transformers' own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class Absent:
    """A value the sampler never writes: the key is left out, to the config class's default."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = Absent()

# A config key's values to draw: (ordinary values, sentinels), the sentinels drawn far more often.
Draws = Mapping[str, tuple[tuple[Any, ...], tuple[Any, ...]]]


@dataclass(frozen=True)
class Pinned:
    """A config drawn every time, whatever the seed gives: one that once showed a wrong count."""

    head: str
    config: Mapping[str, Any]


@dataclass(frozen=True)
class GroundTruth:
    """How the reference tools build and run one family's classes (see the module docstring)."""

    # The family's own keys and what to draw for each, beside the sizes every family draws.
    draws: Draws
    # The config's own names for the shared sizes ("hidden_size": "dim"), where they differ.
    size_keys: Mapping[str, str] = field(default_factory=dict)
    # Keys whose 0 and -1 transformers builds but the card check refuses: drawn less often.
    rare: tuple[str, ...] = ()
    # Configs drawn per head, when the sampler's default is too few for its sentinels' combinations.
    per_head: int | None = None
    # Keys the config class derives in __post_init__ when they are null (an embedding size that is the
    # hidden size then): their default is recorded as null, "derived", not as the default config's value.
    derived: tuple[str, ...] = ()
    # Token ids every small config sets: the config class's defaults index past a small vocabulary.
    token_ids: Mapping[str, int] = field(default_factory=dict)
    pinned: tuple[Pinned, ...] = ()
    # Probabilities the class reads with getattr, so that its config class declares no type for them.
    undeclared_probabilities: tuple[str, ...] = ()
    # The label a pre-training step gives besides the masked-LM labels, if the head takes one.
    sentence_label: str | None = None
    # The number of labels the sentence head reads its logits in; with another, no sentence label fits.
    sentence_label_pairs: int | None = None
    # Sequence lengths measured besides 1, 2, 3 and the longest, from the config: where a formula
    # could bend (a relative span's edge). Lengths past the longest are dropped.
    lengths: Callable[[Mapping[str, Any]], tuple[int, ...]] | None = None
    # Step rules whose error only a CPU raises (an index past a table): the meta device, which checks
    # no index, runs such a step, so the sample's verdict is taken from the rule, not from torch.
    meta_blind: tuple[str, ...] = ()
    # A step that reads one value of its data with .item(), which the meta device cannot: by head, what
    # that read gives for the step's inputs ("is any token global?" for a head given no mask).
    meta_items: Mapping[str, Any] = field(default_factory=dict)
    # Heads whose step reads its data further (nonzero() of a mask sizes a tensor): they run on a CPU, with
    # random weights, so the tools measure them on small cards only.
    cpu_heads: tuple[str, ...] = ()

    @property
    def layers_key(self) -> str:
        """The config key of the number of layers."""
        return self.size_keys.get("num_hidden_layers", "num_hidden_layers")
