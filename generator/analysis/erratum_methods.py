"""The published mistakes of the errata page, as data: what each method counts instead of the exact steps.

A mistake names its erratum (``errata/#<id>``) and says what the published method counts for
the part of the model it gets wrong: ``theirs``, a polynomial in the config's symbols, in place
of the exact steps listed in ``replaces`` (each repeated as its block is); with nothing in
``replaces``, ``theirs`` is the method's whole total. Its total on a config is therefore

    exact total − the replaced steps, as counted + theirs, evaluated

which ``evaluate`` computes from a derivation here, and the calculator in the browser from the
same data (``export``) with the steps it has just counted. A mistake applies to a config when
every symbol of ``theirs`` has a value and every replaced step exists: a family without a segment
table has no T, so a method written with T says nothing about it.

The errata page (``generator/site/pages/errata.py``) builds its rows from these polynomials, so
the formula a reader's number is traced to is the one the page works through.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.cards.card import Card
from generator.counting.derivation import Derivation, derive
from generator.counting.inventory import Inventory, count_parameters
from generator.counting.poly import Poly

V, P, T, H, I, L, A = (Poly.symbol(s) for s in "VPTHILA")
ZERO = Poly()

# Steps of the common encoder's derivation (generator/counting/families/common.py), by block key and
# step key: the module's stable key, the same in every language.
ATTENTION = ("layer", ("query", "key", "value", "attention-output"))
FEED_FORWARD = ("layer", ("feed-forward-in", "feed-forward-out"))
FEED_FORWARD_IN = ("layer", ("feed-forward-in",))
LAYER_NORMS = ("layer", ("attention-layernorm", "output-layernorm"))
EMBEDDING_NORM = ("embeddings", ("embedding-layernorm",))
TOKEN_TABLE = ("embeddings", ("token-embeddings",))
POOLER = ("pooler", ())  # () is the whole block

# The published methods' own pieces, which the errata page sets beside the exact steps.
PER_HEAD_ATTENTION = 3 * A * H * H + A * H * H  # Q, K, V and W_O as H × H per head (assignment, question 1)
PER_HEAD_LAYER = PER_HEAD_ATTENTION + 2 * H * I
TEXTBOOK_LAYER = 3 * H * H + H * H + 2 * H * I + 2 * H  # no bias, one LayerNorm's worth per layer
LAYER_WITHOUT_INTERMEDIATE_BIAS = 4 * H * H + 2 * H * I + 9 * H  # the large model's table in the source's issue 656
ROUND_VOCABULARY = 30_000  # "V = 30,000": the textbook's and the Q&A thread's base model


@dataclass(frozen=True)
class ErratumMethod:
    """A published method: what it counts (``theirs``) in place of some exact steps, or of all of them."""

    erratum: str  # the erratum's id on the errata page
    theirs: Poly
    replaces: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (block key, step keys; () = the block)

    def to_json(self) -> dict[str, object]:
        return {
            "erratum": self.erratum,
            "theirs": [[coeff, [[s, e] for s, e in mono]] for mono, coeff in self.theirs.terms],
            "replaces": [[key, list(steps)] for key, steps in self.replaces],
        }


# Each method under the name of its erratum's builder (generator/site/pages/errata.py), as (theirs,
# replaces); the erratum's id is that name, dashed, as the errata page makes it.
_METHODS: dict[str, tuple[Poly, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    "per_head_projections": ((V + P + T) * H + L * PER_HEAD_LAYER, ()),
    "keras_bert_attention": (L * A * (3 * H * H + 3 * H), (ATTENTION,)),  # the question: per head, no W_O
    "lha_product": (L * H * A, ()),
    "textbook_formula": ((V + P + T) * H + L * TEXTBOOK_LAYER + H * H, ()),
    "layernorm_half": (L * 2 * H, (LAYER_NORMS, EMBEDDING_NORM)),
    "mean_and_variance": (2 * (2 * L + 1), (LAYER_NORMS, EMBEDDING_NORM)),
    "vocabulary_30000": (Poly.constant(ROUND_VOCABULARY) * H, (TOKEN_TABLE,)),
    "feed_forward_8h2": (L * (8 * H * H + 2 * H), (FEED_FORWARD,)),
    "intermediate_bias": (L * H * I, (FEED_FORWARD_IN,)),  # the weight alone, its bias of I left out
    "pooler_and_heads": (ZERO, (POOLER,)),  # the encoder without its pooler
}
ERRATUM_METHODS = tuple(
    ErratumMethod(name.replace("_", "-"), theirs, replaces) for name, (theirs, replaces) in _METHODS.items()
)


def method_of(erratum: str) -> ErratumMethod:
    """The published method of an erratum (the errata page's, as the calculator and the exercises' check read it)."""
    return next(m for m in ERRATUM_METHODS if m.erratum == erratum)


def _replaced(derivation: Derivation, replaces: Sequence[tuple[str, tuple[str, ...]]]) -> int | None:
    """The exact count of the replaced steps, each times its block's repeat; None when one is missing."""
    total = 0
    for key, steps_keys in replaces:
        block = next((b for b in derivation.blocks if b.block.key == key), None)
        if block is None:
            return None
        steps = [s for s in block.lines if not steps_keys or s.key in steps_keys]
        if len(steps) != (len(steps_keys) or len(block.lines)):
            return None
        total += block.repeat * sum(s.value for s in steps)
    return total


def evaluate(mistake: ErratumMethod, derivation: Derivation, values: Mapping[str, int]) -> int | None:
    """The mistake's total on one counted config, or None when it does not apply to it."""
    if not mistake.theirs.symbols() <= set(values):
        return None
    replaced = _replaced(derivation, mistake.replaces)
    if replaced is None:
        return None
    if not mistake.replaces:
        return mistake.theirs.evaluate(values)
    return derivation.total - replaced + mistake.theirs.evaluate(values)


@dataclass(frozen=True)
class Candidate:
    """A number a published mistake gives on one config, and the erratum that explains it."""

    erratum: str
    value: int
    printed: bool = False  # the figure as the source printed it, slips and all, not the method recomputed


def candidates(inventory: Inventory) -> list[Candidate]:
    """What each published mistake gives on this counted config, without those that give the exact count."""
    derivation = derive(inventory)
    found = []
    for mistake in ERRATUM_METHODS:
        value = evaluate(mistake, derivation, inventory.values)
        if value is not None:
            found.append(Candidate(mistake.erratum, value))
    # "The pooler or the heads, silently in or out": the same config as another head builds it.
    card = inventory.card
    assert isinstance(card, Card)
    for head in card.family.heads:
        if head is not card.head:
            found.append(Candidate("pooler-and-heads", count_parameters(dataclasses.replace(card, head=head)).total))
    # "A shared tensor counted once per name": every tied name added up as if it held a tensor of its own.
    if inventory.tied:
        again = sum(inventory.tensor(entry.tied_to).count for entry in inventory.tied)
        found.append(Candidate("tied-twice", inventory.total + again))
    return [c for c in found if c.value != inventory.total]


def export() -> list[dict[str, object]]:
    """Every mistake as the calculator reads it."""
    return [m.to_json() for m in ERRATUM_METHODS]
