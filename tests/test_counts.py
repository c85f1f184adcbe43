"""Exact figures and the invariants that tie the derivation to the inventory."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from conftest import ALL_CARD_PATHS, TEST_CARDS, card_by_id, count_card, reference_for
from generator.counting import inventory
from generator.counting.architecture import Head, Kind
from generator.counting.derivation import block_form, derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters, count_totals


@pytest.mark.parametrize(
    ("card_id", "class_name", "total"),
    [
        ("bert-base-uncased", "BertModel", 109_482_240),
        ("bert-base-uncased-pretraining", "BertForPreTraining", 110_106_428),
        ("bert-large-uncased", "BertModel", 335_141_888),
        ("bert-base-cased", "BertModel", 108_310_272),
        ("bert-base-multilingual-cased", "BertModel", 177_853_440),
    ],
)
def test_published_models(card_id: str, class_name: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert inventory.class_name == class_name
    assert inventory.total == total


def test_bert_base_component_subtotals() -> None:
    inventory = count_parameters(card_by_id("bert-base-uncased"))
    assert inventory.count_of(kind=Kind.EMBEDDINGS) == 23_837_184
    assert inventory.count_of(kind=Kind.ENCODER) == 12 * 7_087_872 == 85_054_464
    assert inventory.count_of(kind=Kind.POOLER) == 590_592
    assert inventory.count_of(kind=Kind.HEAD) == 0


def test_bert_model_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("bert-base-uncased")))
    assert to_text(derivation.closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"
    assert to_text(derivation.substituted) == (
        "(30,522 + 512 + 2 + 2) · 768 + 12 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072) + 768² + 768"
    )
    assert derivation.total == 109_482_240


def test_pretraining_closed_form_adds_the_heads() -> None:
    derivation = derive(count_parameters(card_by_id("bert-base-uncased-pretraining")))
    # pooler H² + H, MLM head H² + 3H + V (the decoder weight is tied), NSP head 2H + 2.
    assert to_text(derivation.closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + 2H² + V + 6H + 2"
    head_steps = {s.label: s.value for b in derivation.blocks if b.block.kind is Kind.HEAD for s in b.lines}
    assert head_steps == {
        "output bias": 30_522,
        "transform dense": 590_592,
        "transform LayerNorm": 1_536,
        "decoder (tied)": 0,
        "next-sentence classifier": 1_538,
    }


def test_encoder_layer_steps() -> None:
    derivation = derive(count_parameters(card_by_id("bert-base-uncased")))
    layer = next(b for b in derivation.blocks if b.block.kind is Kind.ENCODER)
    rows = [(s.label, to_text(s.symbolic), to_text(s.substituted), s.value) for s in layer.lines]
    assert rows == [
        ("query", "H × H + H", "768 × 768 + 768", 590_592),
        ("key", "H × H + H", "768 × 768 + 768", 590_592),
        ("value", "H × H + H", "768 × 768 + 768", 590_592),
        ("attention output", "H × H + H", "768 × 768 + 768", 590_592),
        ("attention LayerNorm", "H + H", "768 + 768", 1_536),
        ("feed-forward in", "I × H + I", "3,072 × 768 + 3,072", 2_362_368),
        ("feed-forward out", "H × I + H", "768 × 3,072 + 768", 2_360_064),
        ("output LayerNorm", "H + H", "768 + 768", 1_536),
    ]
    assert to_text(layer.expression) == "4H² + 2HI + 9H + I"
    assert (layer.value, layer.repeat, layer.subtotal) == (7_087_872, 12, 85_054_464)
    query = layer.lines[0].split
    assert query is not None and (query.heads, query.head_size) == (12, 64)


def test_a_model_without_layers_shows_what_one_layer_would_hold() -> None:
    inventory = count_card(TEST_CARDS / "test-bert-no-layers.yaml")
    assert inventory.total == reference_for("test-bert-no-layers")["total"]
    layer = next(b for b in derive(inventory).blocks if b.block.kind is Kind.ENCODER)
    H, I = 32, 48  # the card's hidden and feed-forward sizes
    assert (layer.repeat, layer.subtotal) == (0, 0)
    assert layer.value == 4 * H * H + 2 * H * I + 9 * H + I == 7_504
    assert [s.names for s in layer.lines] == [()] * 8  # no tensor to name: transformers builds none


@pytest.mark.parametrize("path", ALL_CARD_PATHS, ids=lambda p: p.stem)
def test_derivation_is_a_view_of_the_inventory(path) -> None:  # type: ignore[no-untyped-def]
    inventory = count_card(path)
    derivation = derive(inventory)
    assert derivation.total == inventory.total == sum(t.count for t in inventory.tensors)
    assert derivation.formula.evaluate(inventory.values) == inventory.total
    assert sum(b.subtotal for b in derivation.blocks) == inventory.total
    for block in derivation.blocks:
        assert block.formula.evaluate(inventory.values) == block.value
        assert block.value * block.repeat == block.subtotal
        for step in block.lines:
            assert step.formula.evaluate(inventory.values) == step.value
    assert sum(inventory.count_of(kind=kind) for kind in Kind) == inventory.total
    assert len({t.name for t in inventory.entries}) == len(inventory.entries)


@pytest.mark.parametrize("path", ALL_CARD_PATHS, ids=lambda p: p.stem)
def test_totals_without_tensors_are_the_inventory_added_up(path) -> None:  # type: ignore[no-untyped-def]
    card = count_card(path).card
    for head in card.family.heads:  # the claims count other heads this way
        other = dataclasses.replace(card, head=head)
        inventory, totals = count_parameters(other), count_totals(other)
        assert totals.class_name == inventory.class_name
        assert totals.by_kind == {kind: inventory.count_of(kind=kind) for kind in Kind}
        assert totals.total == inventory.total > 0


def test_derivation_reads_its_own_tensors_when_an_equal_block_was_derived_first() -> None:
    # Another card's equal, but distinct, block may have had its form worked out first (forms were
    # cached by value; they are kept by the block's identity now). The steps must add up this inventory's tensors.
    inventory = count_parameters(card_by_id("bert-base-uncased-pretraining"))
    order = tuple(s.name for s in inventory.card.family.symbols)
    for block in inventory.architecture.blocks:
        twin = copy.deepcopy(block)
        assert twin == block and twin is not block
        block_form(twin, order)
    derivation = derive(inventory)
    embeddings = derivation.blocks[0]
    assert embeddings.block is inventory.architecture.blocks[0]
    assert [(s.label, s.value) for s in embeddings.lines] == [
        ("token embeddings", 30_522 * 768),
        ("position embeddings", 512 * 768),
        ("segment embeddings", 2 * 768),
        ("embedding LayerNorm", 2 * 768),
    ]
    for block in derivation.blocks:
        for step in block.lines:
            assert step.value == step.formula.evaluate(inventory.values)
            assert step.names or step.tied


@pytest.mark.parametrize("heads", [1, 2, 3, 4, 6, 8, 12, 16, 24, 48, 768])
def test_number_of_heads_does_not_change_the_count(heads: int) -> None:
    card = card_by_id("bert-base-uncased")
    changed = dataclasses.replace(card, config={**card.config, "num_attention_heads": heads})
    assert count_parameters(changed).total == 109_482_240


def test_tied_decoder_is_listed_and_counted_once() -> None:
    inventory = count_parameters(card_by_id("bert-base-uncased-pretraining"))
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"),
        ("cls.predictions.decoder.bias", "cls.predictions.bias"),
    ]
    names = [t.name for t in inventory.tensors]
    assert names.count("bert.embeddings.word_embeddings.weight") == 1
    assert "cls.predictions.decoder.weight" not in names


def test_a_cards_numbers_are_put_into_a_declarations_blocks_once_whoever_asks() -> None:
    """The published figures' check and the classes' table both count the card by its family's other
    heads: each head's blocks get the card's numbers once (``inventory._EVALUATED``, by the blocks'
    identity and the numbers), and what is kept gives the counts a fresh evaluation gives."""
    card = dataclasses.replace(card_by_id("bert-base-uncased"), head=Head.MASKED_LM)
    numbers = tuple(card.symbol_values().items())
    counted = count_totals(card)
    blocks = card.family.architecture(card.config, card.head).blocks
    assert all(inventory._EVALUATED.get(block, numbers) is not None for block in blocks)
    assert inventory._EVALUATED.get(blocks[0], (*numbers[:-1], ("X", 1))) is None  # other numbers: not found
    inventory._EVALUATED.clear()
    assert count_totals(card) == counted
    assert counted.total == count_parameters(card).total


def test_a_counted_tensor_is_the_tensor_its_class_would_make() -> None:
    """count_parameters fills each Tensor's fields itself, without the dataclass's __init__ (see there):
    every field is set, and the tensor equals the one the constructor makes of the same values."""
    assert not hasattr(inventory.Tensor, "__post_init__")  # nothing the constructor would check is skipped
    names = [field.name for field in dataclasses.fields(inventory.Tensor)]
    for tensor in count_card(TEST_CARDS / "test-bert-classifier-5.yaml").tensors:
        assert list(vars(tensor)) == names
        assert inventory.Tensor(**vars(tensor)) == tensor
