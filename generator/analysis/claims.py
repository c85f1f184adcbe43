"""Published figures reconciled with the exact count: why is a base model "110M"?

For each number of a card's claims this module lists the counts the figure could stand for,
all read from inventories of the same card: the model as counted, without its pooler or its
heads, with another head of the family, without the embeddings, the encoder layers alone (and,
when a claim names another vocabulary, all of these again counted with it). The first count
that equals the figure at the figure's own precision (rounded, or failing that rounded down) is
the explanation. A figure with trailing zeros ("110M") is read to the nearest unit first, and
only when no count gives it that way, with the zeros taken as not significant (the nearest 10M).
A figure that no count explains must carry its own one-line explanation; the test suite fails
for a catalog claim that has neither.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from generator.cards.card import Card, Claim
from generator.cards.published import SHARE_SCALE, FigurePart, Scope, percent, share_places
from generator.counting.architecture import Head, Kind
from generator.counting.inventory import Inventory, Totals, count_parameters, count_totals
from generator.counting.methods import Tuning, TuningError, tune


class Variant(enum.Enum):
    """Which count of the model a figure was matched with."""

    AS_COUNTED = "as counted"
    NO_POOLER = "without the pooler"
    NO_HEADS = "without the heads"
    NO_POOLER_NO_HEADS = "without the pooler and the heads"
    OTHER_HEAD = "with another head"
    NO_EMBEDDINGS = "embeddings excluded"
    ENCODER_ONLY = "encoder layers only"


class Fit(enum.Enum):
    """How the figure relates to the count it matched."""

    EXACT = "exact"
    ROUNDED = "rounding"
    ROUNDED_DOWN = "rounded down"


# How a head is named in a sentence: "with the pre-training heads (BertForPreTraining)".
HEAD_WORDS = {
    Head.BASE: "no head, the bare encoder",
    Head.PRETRAINING: "the pre-training heads",
    Head.MASKED_LM: "the masked-LM head",
    Head.SEQUENCE_CLASSIFICATION: "a classification head",
}


@dataclass(frozen=True)
class Candidate:
    """A count the figure might stand for."""

    variant: Variant
    count: int
    head: Head  # the head of the class this count was taken from
    class_name: str
    of: int = 0  # for a share: every parameter of the model the method trains a part of

    @property
    def head_words(self) -> str:
        return HEAD_WORDS[self.head]


@dataclass(frozen=True)
class PartCheck:
    """One number of a figure beside the card's count of the same scope."""

    part: FigurePart
    exact: int  # the card's own count of what the part covers
    match: Candidate | None
    fit: Fit | None
    precision: int  # the reading of the figure's precision that matched (the finest when none did)
    of: int = 0  # for a share: every parameter of the model, what ``exact`` is a part of

    @property
    def share_text(self) -> str:
        """The exact share, two places finer than the figure: 0.0813% beside "0.08%"."""
        return percent(self.exact, self.of, share_places(self.part.precision) + 2)

    @property
    def match_share_text(self) -> str:
        """The matched count's share of its own model, as finely as ``share_text``."""
        assert self.match is not None
        return percent(self.match.count, self.match.of, share_places(self.part.precision) + 2)

    @property
    def precision_text(self) -> str:
        """The precision that matched, in the figure's unit: 1M, 10M, 0.1M."""
        return self.part.text_of(self.precision)

    @property
    def coarse(self) -> bool:
        """Whether the figure matched only once its trailing zeros were taken as not significant."""
        return self.precision != self.part.precision

    @property
    def exact_rounded(self) -> str:
        """The card's own count at the figure's finest precision: 109,482,240 is "109M" (a share: 0.08%)."""
        if self.part.share:
            return percent(self.exact, self.of, share_places(self.part.precision))
        return self.part.rounded(self.exact, self.part.precision)

    @property
    def difference(self) -> int:
        """The published number minus the exact count (0 for a share, which is no count)."""
        return 0 if self.part.share else self.part.value - self.exact

    @property
    def relative(self) -> float:
        return self.difference / self.exact if self.exact else 0.0


@dataclass(frozen=True)
class ClaimCheck:
    """A claim, each of its numbers checked, and the vocabulary it was counted with."""

    claim: Claim
    parts: tuple[PartCheck, ...]
    vocabulary: tuple[int, int] | None  # (the claim's vocabulary, the card's) when they differ

    @property
    def readable(self) -> bool:
        """Whether the figure is written as numbers (110M, 14.5M, 10,152,448) that can be checked."""
        return bool(self.parts)

    @property
    def matched(self) -> bool:
        return self.readable and all(p.match is not None for p in self.parts)

    @property
    def explained(self) -> bool:
        """Every number matches a count, or the card says in one line why not."""
        return self.matched or bool(self.claim.explanation and self.claim.explanation.strip())

    @property
    def reason(self) -> str:
        """A short label for the explanation: rounding, pooler, heads, vocabulary, ..."""
        if not self.readable:
            return "not a figure in numbers"
        if not self.matched:
            return "not within rounding"
        kinds = []
        if self.vocabulary:
            kinds.append("a different vocabulary")
        for part in self.parts:
            assert part.match is not None and part.fit is not None
            label = part.fit.value if part.match.variant is Variant.AS_COUNTED else part.match.variant.value
            if part.match.variant is Variant.OTHER_HEAD:
                label = f"with {part.match.head_words}"
            if label not in kinds:
                kinds.append(label)
        return "; ".join(kinds)


def check_claims(card: Card, inventory: Inventory) -> tuple[ClaimCheck, ...]:
    """Reconcile every claim of a card with the counts of its inventory."""
    counted: dict[tuple[Head, int | None], Inventory | Totals] = {(card.head, None): inventory}

    def inventory_for(head: Head, vocab: int | None) -> Inventory | Totals:
        if (head, vocab) not in counted:
            config = dict(card.config)
            if vocab is not None:
                symbol = card.family.symbol_for("vocab_size")
                assert symbol is not None
                config[symbol.key] = vocab
            counted[(head, vocab)] = count_totals(dataclasses.replace(card, head=head, config=config))
        return counted[(head, vocab)]

    checks = []
    for claim in card.claims:
        own_vocab = card.config.get("vocab_size")
        vocab = claim.vocab_size if claim.vocab_size is not None and claim.vocab_size != own_vocab else None
        parts = []
        for part in claim.parts:
            if claim.trained is not None:
                tuned = tune(inventory, claim.trained)  # the card check refuses a method the model cannot take
                found = _first_fit(part, _trained(card, inventory, claim.trained))
                match, fit, precision = found or (None, None, part.precision)
                of = tuned.total if part.share else 0
                parts.append(PartCheck(part, tuned.trainable, match, fit, precision, of))
                continue
            exact = scoped(inventory, part.scope)
            found = _first_fit(part, _candidates(card, part.scope, functools.partial(inventory_for, vocab=vocab)))
            match, fit, precision = found if found else (None, None, part.precision)
            parts.append(PartCheck(part, exact, match, fit, precision))
        vocabulary = (vocab, int(own_vocab)) if vocab is not None and own_vocab is not None else None
        checks.append(ClaimCheck(claim, tuple(parts), vocabulary))
    return tuple(checks)


@dataclass(frozen=True)
class ClassCount:
    """The card's weights as one transformers class builds them, for figures published for another class."""

    class_name: str
    head: Head
    total: int
    pooler: int  # the pooler's share of the total (0 when the class has none)
    this_card: bool  # the class and config this card counts
    label: str | None = None  # for a card's `also_counted` entry: how a reader would write it
    why: str | None = None

    @property
    def head_words(self) -> str:
        return HEAD_WORDS[self.head]


def count_classes(card: Card, inventory: Inventory) -> tuple[ClassCount, ...]:
    """The card counted by every head of its family, then by each of its ``also_counted`` entries."""
    rows = []
    for head in card.family.heads:
        counted: Inventory | Totals = inventory
        if head is not card.head:
            counted = count_totals(dataclasses.replace(card, head=head))
        pooler = counted.count_of(kind=Kind.POOLER)
        rows.append(ClassCount(counted.class_name, head, counted.total, pooler, head is card.head))
    for other in card.also_counted:
        counted = count_totals(dataclasses.replace(card, head=other.head, config=other.config))
        pooler = counted.count_of(kind=Kind.POOLER)
        rows.append(ClassCount(counted.class_name, other.head, counted.total, pooler, False, other.label, other.why))
    return tuple(rows)


def scoped(inventory: Inventory | Totals, scope: Scope) -> int:
    """What a scope counts in one inventory."""
    embeddings = inventory.count_of(kind=Kind.EMBEDDINGS)
    if scope is Scope.TOTAL:
        return inventory.total
    if scope is Scope.BACKBONE:
        return inventory.total - embeddings
    if scope is Scope.EMBEDDINGS:
        return embeddings
    if scope is Scope.ENCODER:
        return inventory.count_of(kind=Kind.ENCODER)
    return inventory.count_of(kind=Kind.HEAD)


def fits(count: int, part: FigurePart, precision: int | None = None, of: int = 0) -> Fit | None:
    """Whether a count, written at a precision (the part's finest by default), gives the part's number.

    For a share, ``of`` is the whole the count is a part of, and count/of is read in percent.
    The comparison is in integers, so a share on the edge of rounding is read exactly.
    """
    if part.exact:
        return Fit.EXACT if count == part.value else None
    step = precision or part.precision
    scale = SHARE_SCALE if part.share else 1
    whole = of if part.share else 1
    count, value = count * scale, part.value * whole  # count/of against value/SHARE_SCALE, both sides × of·scale
    step *= whole
    if 2 * value - step <= 2 * count < 2 * value + step:
        return Fit.ROUNDED
    if value <= count < value + step:
        return Fit.ROUNDED_DOWN
    return None


def _first_fit(part: FigurePart, candidates: Iterator[Candidate]) -> tuple[Candidate, Fit, int] | None:
    """The first candidate that gives the figure, trying the finest reading of its precision first."""
    listed = list(candidates)
    for precision in part.precisions:
        for candidate in listed:
            fit = fits(candidate.count, part, precision, candidate.of)
            if fit is not None:
                return candidate, fit, precision
    return None


def _trained(card: Card, inventory: Inventory, tuning: Tuning) -> Iterator[Candidate]:
    """What a method trains on the card's class, then on each of the family's other classes (a classifier's
    run also trains the classifier)."""
    own = tune(inventory, tuning)
    yield Candidate(Variant.AS_COUNTED, own.trainable, card.head, inventory.class_name, own.total)
    for head in card.family.heads:
        if head is not card.head:
            other = count_parameters(dataclasses.replace(card, head=head))
            try:
                tuned = tune(other, tuning)
            except TuningError:  # the method needs a head this class lacks, or its targets are elsewhere
                continue
            yield Candidate(Variant.OTHER_HEAD, tuned.trainable, head, other.class_name, tuned.total)


def _candidates(card: Card, scope: Scope, inventory_for: Callable[[Head], Inventory | Totals]) -> Iterator[Candidate]:
    """The counts a number of this scope could stand for, the likeliest first."""
    own = inventory_for(card.head)
    pooler, heads = own.count_of(kind=Kind.POOLER), own.count_of(kind=Kind.HEAD)
    value = scoped(own, scope)
    yield Candidate(Variant.AS_COUNTED, value, card.head, own.class_name)
    if scope not in (Scope.TOTAL, Scope.BACKBONE):
        return
    if pooler:
        yield Candidate(Variant.NO_POOLER, value - pooler, card.head, own.class_name)
    if heads:
        yield Candidate(Variant.NO_HEADS, value - heads, card.head, own.class_name)
    if pooler and heads:
        yield Candidate(Variant.NO_POOLER_NO_HEADS, value - pooler - heads, card.head, own.class_name)
    for head in card.family.heads:
        if head is not card.head:
            other = inventory_for(head)
            yield Candidate(Variant.OTHER_HEAD, scoped(other, scope), head, other.class_name)
    if scope is Scope.TOTAL:
        yield Candidate(Variant.NO_EMBEDDINGS, scoped(own, Scope.BACKBONE), card.head, own.class_name)
        yield Candidate(Variant.ENCODER_ONLY, scoped(own, Scope.ENCODER), card.head, own.class_name)
