"""Which training steps the site works: those transformers can run, and whose figures one polynomial says.

A family declares both as rules (``Family.step_rules``, ``Family.inexact_steps``); a card whose
config breaks one gets no step figure, and its page gives the rule's words.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.counting.conditions import HEAD
from generator.counting.inventory import Counted
from generator.counting.switches import Rule


class StepCannotRunError(ValueError):
    """transformers builds the card's model, but a training step of it raises (its family's step rules)."""


class StepNotDerivedError(ValueError):
    """A step under a method this model's declaration cannot say: its data flow is not declared."""


class StepNotExactError(StepCannotRunError):
    """torch runs the card's step, but one polynomial cannot say its figures (``step_inexact``)."""


def step_refusal(card: Counted) -> str | None:
    """Why transformers cannot run a training step of this card (the first of its family's step rules
    that fails, as its message), or None when it can."""
    return _first_failure(card, card.family.step_rules)


def step_inexact(card: Counted) -> str | None:
    """Why one polynomial cannot say this card's step (its family's ``inexact_steps``), or None."""
    return _first_failure(card, card.family.inexact_steps)


def _first_failure(card: Counted, rules: Iterable[Rule]) -> str | None:
    checked = {**card.config, HEAD: card.head.value}
    failures = (rule(checked) for rule in rules)
    return next((failure[0] for failure in failures if failure is not None), None)
