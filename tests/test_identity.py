"""No identity traps: what is cached or looked up is keyed by value, and workers get their work as an argument.

Equal blocks, families and architectures are interchangeable: a copy finds what the original
finds, and nothing mutable hides inside a frozen declaration.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import threading
import time

import pytest

from conftest import card_by_id
from generator.counting.architecture import Architecture, Family
from generator.counting.inventory import count_parameters
from generator.parallel import map_parallel


def test_an_equal_copy_of_a_block_finds_the_same_tensors() -> None:
    inventory = count_parameters(card_by_id("bert-base-uncased"))
    layer = next(b for b in inventory.architecture.blocks if b.key == "layer")
    twin = copy.deepcopy(layer)
    assert twin == layer and twin is not layer
    assert inventory.of_block(twin) == inventory.of_block(layer)
    assert len(inventory.of_block(twin)) == 12 * 16  # 12 layers of 16 tensors
    assert inventory.count_of(block="layer") == 12 * 7_087_872


def test_an_architecture_refuses_a_block_key_twice() -> None:
    blocks = count_parameters(card_by_id("bert-base-uncased")).architecture.blocks
    with pytest.raises(ValueError, match="BertModel declares a block key twice"):
        Architecture("BertModel", (blocks[0], blocks[0]))


def test_a_family_holds_only_its_declaration_and_its_copies_share_the_built_architectures() -> None:
    assert [f.name for f in dataclasses.fields(Family)] == [
        "name",
        "symbols",
        "declare",
        "heads",
        "title",
        "differences",
        "language",  # the content/ folder its words come from: a value, like the words themselves
        "own_config",
        "extra_config",
        "null_refused",
        "build_rules",
        "switches",
        "compute_symbols",  # declared, like the symbols: derived sizes only compute formulas read
        "positions_after",  # declared: the key whose value, plus 1, is a first token's position (RoBERTa)
        "step_rules",  # declared, like the build rules: configs transformers builds but cannot train
        "inexact_steps",  # declared, like the step rules: steps no one polynomial in b and s says
        "ground_truth",  # declared: what the reference tools build and run, never a count
        "peft",  # declared: the modules peft adapts by default, from peft's own table
    ]  # no cache: an architecture is cached by the builder, the head and the switches
    card = card_by_id("roberta-base")
    twin = dataclasses.replace(card.family)
    assert twin is not card.family
    assert twin.architecture(card.config, card.head) is card.family.architecture(dict(card.config), card.head)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked on Linux only")
def test_workers_receive_work_that_cannot_be_pickled() -> None:
    lock = threading.Lock()  # unpicklable: the work reaches the workers by fork, as an argument

    def work(i: int) -> tuple[int, int]:
        time.sleep(0.01)  # long enough that the build's own process cannot take every task
        with lock:
            return i * i, os.getpid()

    results = map_parallel(work, 40, 2)
    assert [square for square, _ in results] == [i * i for i in range(40)]
    assert len({pid for _, pid in results} - {os.getpid()}) == 1  # a worker did its share
