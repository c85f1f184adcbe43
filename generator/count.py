"""``python -m generator count``: one card's parameters, and what a training step of it costs.

With ``--method`` it counts a fine-tuning method instead of full training: what trains, what
the method adds, and what the parameters then hold in memory with Adam.
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator.cards.problems import InputError, display_path, report

if TYPE_CHECKING:
    from generator.cards.card import Card
    from generator.counting.methods import Group, Tuned, Tuning
    from generator.counting.step_totals import StepTotals

# The command line's name for each setting a method can refuse.
OPTIONS = {
    "method": "--method",
    "rank": "--rank",
    "targets": "--targets",
    "feedforward": "--feedforward",
    "virtual_tokens": "--virtual-tokens",
}
# The options each method reads; any other given is refused rather than ignored.
READS = {"lora": ("rank", "targets"), "ia3": ("targets", "feedforward"), "prompt-tuning": ("virtual_tokens",)}


def count(args: argparse.Namespace) -> int:
    """Run ``count``; return the exit status."""
    from generator.analysis.calculator_compute import default_seq, longest_of
    from generator.cards.card import load_card

    tuning = _tuning(args)
    if tuning is None:
        return 1
    try:
        card = load_card(args.card)
    except InputError as error:
        return report(error, "nothing was counted")
    length = longest_of(card.family, card.config)
    seq = args.seq if args.seq is not None else default_seq(card.family, card.config)
    if length is not None and length > 0 and seq > length:  # no token fits a shorter table: no step, below
        after, where = card.family.positions_after, display_path(args.card)
        rows = f"{length:,} for {where} (max_position_embeddings, {card.config.get('max_position_embeddings'):,}, "
        if after is None:
            most = f"max_position_embeddings ({length:,}) of {where}"
        elif isinstance(after, int):
            most = rows + f"less {after + 1}: the positions are numbered from {after + 1})"
        else:
            most = rows + f"less {after} + 1: the positions are numbered from {after} + 1)"
        print(f"error: --seq: expected at most {most}, found {seq:,}", file=sys.stderr)
        return 1
    if tuning.method.value == "prompt-tuning" and length is not None and seq + tuning.virtual_tokens > length:
        fits = length - tuning.virtual_tokens  # the virtual tokens take positions too
        if args.seq is not None or fits < 1:
            n = tuning.virtual_tokens
            took = f"the {n:,} virtual tokens take {n:,} of its {length:,} positions"
            print(f"error: --seq: expected at most {max(fits, 0):,}, since {took}, found {seq:,}", file=sys.stderr)
            return 1
        seq = fits
    if tuning.method.value != "full":
        return _count_method(card, tuning, args.batch, seq, json_output=args.json)
    return _count_full(card, args.batch, seq, json_output=args.json)


def _tuning(args: argparse.Namespace) -> Tuning | None:
    """The method the options ask for, or None after saying which option does not apply to it."""
    from generator.counting.methods import Method, Tuning

    reads = READS.get(args.method, ())
    for option in OPTIONS:
        if option != "method" and getattr(args, option) is not None and option not in reads:
            users = [method for method, options in READS.items() if option in options]
            found = f"--method {args.method}"
            expected = f"only with --method {' or '.join(users)}"
            print(f"error: {OPTIONS[option]}: expected {expected}, found {found}", file=sys.stderr)
            return None
    given = {option: getattr(args, option) for option in reads if getattr(args, option) is not None}
    return Tuning(Method(args.method), **given)


def _count_full(card: Card, batch: int, seq: int, *, json_output: bool) -> int:
    """``count`` for full training: the step's FLOPs, activations and memory where the site shows them."""
    from generator.counting.compute import UndeclaredActivationError, count_compute
    from generator.site.formats import decimal

    # The parameters stand in every case; a step's totals only where the site shows them too.
    why = no_step(card)
    if why is not None:
        return _count_without_step(card, batch, seq, why, json_output=json_output)
    try:
        compute = count_compute(card)
    except UndeclaredActivationError as error:
        return _count_without_step(card, batch, seq, f"config.{error}", json_output=json_output)
    totals = compute.at(batch, seq)
    record = totals.to_json(card, card.family.architecture(card.config, card.head).class_name)
    if json_output:
        print(json.dumps({**record, "method": "full", "trainable": totals.trainable}))
        return 0
    tokens = totals.tokens
    print(f"{card.id}: {record['class']}, {totals.parameters:,} parameters")
    print(f"batch {totals.batch:,} × sequence {totals.seq:,} = {tokens:,} tokens")
    for name, flops in (("forward", totals.forward), ("backward", totals.backward)):
        # Exact, as the comparison writes it: 191,065,165,824 over 16,384 tokens is 11,661,692.25 a token.
        print(f"{name} FLOPs: {flops:,} ({decimal(Fraction(flops, tokens))} per token)")
    _print_memory(totals, "", "weights, gradients, two moments and activations")
    return 0


# Why ``count`` gives no step figure: the same cases in which a model page says "Not measured".
NOT_MEASURED = "no transformers class builds this model, so no step of it was measured against torch"
STEP_RAISES = "transformers builds this model, but a step of it raises: "
NOT_EXACT = "a step of this model runs, but its figures are not one polynomial in b and s: "
# A method's step where the family's data flow is not declared: its parameters are exact, its FLOPs and
# activations not given.
METHOD_STEP = "the FLOPs and activations of a step that trains only part of this model are not derived yet"


def no_step(card: Card) -> str | None:
    """Why a card's step is not shown, here and on its page, or None where it is."""
    from generator.counting.compute import measured, step_inexact, step_refusal

    if not measured(card.family):
        return NOT_MEASURED
    refusal = step_refusal(card)
    if refusal is not None:
        return STEP_RAISES + refusal
    inexact = step_inexact(card)
    return None if inexact is None else NOT_EXACT + inexact


def _count_without_step(card: Card, batch: int, seq: int, why: str, *, json_output: bool) -> int:
    """``count`` for a card with no training step to show: its parameters, and why there is no step."""
    from generator.counting.inventory import count_totals
    from generator.counting.step_totals import card_record

    parameters = count_totals(card).total
    class_name = card.family.architecture(card.config, card.head).class_name
    if json_output:
        none = {"flops": None, "activations": None, "training_memory": None}
        record = {**card_record(card, class_name, parameters), "batch": batch, "seq": seq, **none}
        print(json.dumps({**record, "method": "full", "trainable": parameters, "no_step": why}))
        return 0
    print(f"{card.id}: {class_name}, {parameters:,} parameters")
    print(f"no training step: {why}")
    return 0


def _count_method(card: Card, tuning: Tuning, batch: int, seq: int, *, json_output: bool) -> int:
    """``count --method``: what the method trains and adds, and what the parameters hold in memory."""
    from generator.counting.inventory import count_parameters
    from generator.counting.methods import TuningError, groups, prompt_misfit, tune

    if card.family.ground_truth is None:  # the methods follow peft and transformers' base_model_prefix
        unbuilt = "the methods are defined on transformers classes, and no transformers class builds this model"
        print(
            f"error: --method: expected a model transformers builds, found {card.family.name}: {unbuilt}",
            file=sys.stderr,
        )
        return 1
    inventory = count_parameters(card)
    try:
        tuned = tune(inventory, tuning)
    except TuningError as error:
        print(f"error: {OPTIONS[error.what]}: {error} ({display_path(card.path)})", file=sys.stderr)
        return 1
    record = method_record(tuned)
    why, totals = _method_step(card, tuned, batch, seq)
    if totals is not None:
        record |= {
            "flops": {"forward": totals.forward, "backward": totals.backward},
            "activations": dict(totals.activations),
            "training_memory": totals.training_memory,
        }
    if json_output:
        print(json.dumps({**record, "batch": batch, "seq": seq} | ({"no_step": why} if why is not None else {})))
        return 0
    print(f"{card.id}: {inventory.class_name}, {inventory.total:,} parameters")
    share = 100 * tuned.trainable / tuned.total if tuned.total else 0
    print(f"{tuning.method.value}: {tuned.trainable:,} trainable of {tuned.total:,} ({share:.2f}%)")
    if tuned.added:
        print(
            f"added by the method (its own tensors, and a copy of each module it trains whole): {tuned.added_count:,}"
        )
    if tuned.adapted:
        print(f"targets {', '.join(tuned.targets)} adapt {len(tuned.adapted)} modules:")
        for group in groups(tuned):
            first, last = group.modules[0], group.modules[-1]
            names = first if first == last else f"{first} … {last}"
            copies = len(group.modules)
            print(f"  {group.target}: {copies} × {group.each:,} = {group.added:,} ({_shape(group)}: {names})")
    if tuned.saved:
        print(f"trained whole, as a copy beside the frozen original: {', '.join(tuned.saved)}")
    misfit = prompt_misfit(tuned)
    if misfit is not None:
        prompt, width = misfit
        print(f"warning: the prompt is {prompt:,} wide (hidden_size), the token vectors {width:,}: a first step fails")
    print("parameters in training with Adam (weights; gradients and two moments for what trains):")
    for name, size in record["parameter_memory"].items():
        print(f"  {name.replace('_', ' ')}: {size:,} bytes ({size / 2**30:.2f} GiB)")
    if totals is None:
        print(f"no step figures: {why}")
        return 0
    positions = f" (the model runs {totals.seq:,} positions)" if totals.seq != seq else ""
    print(f"batch {batch:,} × sequence {seq:,}{positions}, the step under {tuning.method.value}:")
    for name, flops in (("forward", totals.forward), ("backward", totals.backward)):
        print(f"  {name} FLOPs: {flops:,}")
    _print_memory(totals, "  ", "weights, gradients and moments of what trains, activations")
    return 0


def _print_memory(totals: StepTotals, indent: str, held: str) -> None:
    """A step's activations, then its training memory with Adam (what it holds: ``held``)."""
    for name, size in totals.activations.items():
        print(f"{indent}activations, {name}: {size:,} bytes ({size / 2**30:.2f} GiB)")
    print(f"training memory with Adam ({held}; a lower bound):")
    for name, size in totals.training_memory.items():
        print(f"  {name.replace('_', ' ')}: {size:,} bytes ({size / 2**30:.2f} GiB)")


def _method_step(card: Card, tuned: Tuned, batch: int, seq: int) -> tuple[str | None, StepTotals | None]:
    """The step under a method at (batch, seq), or why there is none."""
    from generator.counting.compute import StepCannotRunError, UndeclaredActivationError
    from generator.counting.step_refusals import StepNotDerivedError
    from generator.counting.tuned_step import tuned_compute, tuned_seq

    why = no_step(card)
    if why is not None:
        return why, None
    try:
        compute = tuned_compute(card, tuned)
    except StepNotDerivedError as error:
        return f"{METHOD_STEP}: {error}", None
    except StepCannotRunError as error:
        return STEP_RAISES + str(error), None
    except UndeclaredActivationError as error:
        return f"config.{error}", None
    try:
        return None, compute.at(batch, tuned_seq(tuned, seq))
    except StepNotDerivedError as error:  # derived at other points only (views torch keeps at b = 1 or s = 1)
        return str(error), None


def _shape(group: Group) -> str:
    """A layer as a reader pictures it: a Linear from its input's width to its output's, a table's rows and width."""
    from generator.counting.architecture import Layer

    if group.layer is Layer.LINEAR:
        out, n_in = group.shape
        return f"Linear {n_in:,} → {out:,}"
    return f"{group.layer.value} " + " × ".join(f"{n:,}" for n in group.shape)


def method_record(tuned: Tuned) -> dict[str, Any]:
    """The ``--json`` record of a method: the card, the method's settings, and integers."""
    from generator.counting.step_totals import card_record, parameter_memory

    inventory, tuning = tuned.inventory, tuned.tuning
    record: dict[str, Any] = {
        **card_record(inventory.card, inventory.class_name, inventory.total),
        "method": tuning.method.value,
    }
    if tuning.method.value == "lora":
        record["rank"] = tuning.rank
    if tuned.targets:
        record["targets"] = list(tuned.targets)
    if tuning.method.value == "prompt-tuning":
        record["virtual_tokens"] = tuning.virtual_tokens
    return {
        **record,
        "trainable": tuned.trainable,
        "added": tuned.added_count,
        "adapted": list(tuned.adapted),
        "saved_modules": list(tuned.saved),
        "parameter_memory": parameter_memory(tuned.total, tuned.trainable),
        "flops": None,
        "activations": None,
        "training_memory": None,
    }
