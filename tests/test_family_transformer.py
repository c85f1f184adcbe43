"""The 2017 encoder-decoder: the seed listing's total, tied tables, and heads that do count."""

from __future__ import annotations

import dataclasses

from conftest import card_by_id
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


def test_seed_listing_total_and_its_shared_table() -> None:
    inventory = count_parameters(card_by_id("transformer-seed-one-layer"))
    assert inventory.total == 10_152_448
    table = inventory.tensor("encoder.src_word_emb.weight")
    assert (table.shape, table.count) == ((5395, 512), 2_762_240)
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("decoder.tgt_word_emb.weight", "encoder.src_word_emb.weight"),
        ("tgt_word_prj.weight", "encoder.src_word_emb.weight"),
    ]
    # Printing every name, as the seed listing does, counts the shared table three times.
    assert len(inventory.entries) == 47
    assert inventory.total + 2 * table.count == 15_676_928


def test_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("transformer-seed-one-layer")))
    assert to_text(derivation.closed_form) == (
        "(V + S + 1)H + L(2HAK + 2HAM + 2HI + 2AK + AM + 6H + I) + (S + 1)H + L(4HAK + 4HAM + 2HI + 4AK + 2AM + 9H + I)"
    )


def test_untied_tables_count_three_times() -> None:
    card = card_by_id("transformer-seed-one-layer")
    config = {**card.config, "tgt_emb_prj_weight_sharing": False, "emb_src_tgt_weight_sharing": False}
    inventory = count_parameters(dataclasses.replace(card, config=config))
    assert inventory.total == 15_676_928
    assert inventory.tied == ()


def test_heads_change_the_count_when_head_size_is_fixed() -> None:
    card = card_by_id("transformer-base")
    doubled = dataclasses.replace(card, config={**card.config, "n_head": 16})
    # Each of the 6 + 12 attention blocks widens from A·K = 512 to 1,024: query, key and value gain
    # 512 × 512 weights and 512 biases each, the output projection 512 × 512 weights.
    assert count_parameters(doubled).total - count_parameters(card).total == 18 * (4 * 512 * 512 + 3 * 512)


def test_paper_configurations() -> None:
    assert count_parameters(card_by_id("transformer-base")).total == 63_136_768
    assert count_parameters(card_by_id("transformer-big")).total == 214_353_920
