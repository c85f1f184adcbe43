"""Memory: the bytes of the weights in each precision and of Adam's training state, and where pages show them."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from conftest import ALL_CARD_PATHS, MODELS, count_card, reference_for
from generator.counting.memory import memory_of
from generator.site.formats import binary


def test_memory_of_bert_base() -> None:
    memory = memory_of(load_card_total("bert-base-uncased"))
    assert memory.fp32.bytes == 437_928_960
    assert memory.half.bytes == 218_964_480
    assert memory.int8.bytes == 109_482_240
    assert memory.training.bytes == 1_751_715_840
    assert memory.training.bytes_per_parameter == 16
    assert binary(memory.fp32.bytes) == "417.6 MiB"  # 437,928,960 / 2²⁰
    assert binary(memory.training.bytes) == "1.63 GiB"  # 1,751,715,840 / 2³⁰


@pytest.mark.parametrize("card_id", ["transformer-base", "transformer-big", "transformer-seed-one-layer"])
def test_trainable_parameters_leave_out_the_frozen_sinusoids(card_id: str) -> None:
    reference = reference_for(card_id)  # tools/own_reference.py: requires_grad, as Models.py sets it
    inventory = count_card(MODELS / f"{card_id}.yaml")
    assert inventory.trainable == reference["trainable"]
    frozen = [t for t in inventory.tensors if not t.trainable]
    assert [t.name for t in frozen] == ["encoder.position_enc.weight", "decoder.position_enc.weight"]
    assert sum(t.count for t in frozen) == reference["total"] - reference["trainable"]


def test_transformers_classes_train_every_parameter() -> None:
    # transformers registers every parameter with requires_grad True (DistilBERT's sinusoidal table too,
    # in 5.23); only the 2017 Transformer's reference files record fewer trainable parameters.
    for path in ALL_CARD_PATHS:
        inventory = count_card(path)
        assert inventory.trainable == reference_for(inventory.card.id).get("trainable", inventory.total)


def test_adam_state_is_for_trained_parameters_only() -> None:
    reference = reference_for("transformer-base")
    total, trainable = reference["total"], reference["trainable"]
    memory = memory_of(total, trainable)
    # 16 bytes for each trained parameter; a frozen one keeps only its 2-byte fp16 copy.
    assert memory.training.bytes == 16 * trainable + 2 * (total - trainable)
    assert memory.training.bytes < 16 * total
    assert [f.parameters for f in memory.training_state] == [total, trainable, trainable, trainable, trainable]
    assert memory_of(total).training.bytes == 16 * total  # every parameter trained: the old 16 bytes hold


def test_memory_page_says_what_the_bytes_assume(site: Path) -> None:
    reference = reference_for("transformer-base")
    frozen = reference["total"] - reference["trainable"]
    page = (site / "models" / "transformer-base" / "index.html").read_text(encoding="utf-8")
    training = 16 * reference["trainable"] + 2 * frozen
    assert f"{frozen:,} are frozen" in page
    assert f"16 × {reference['trainable']:,} + 2 × {frozen:,} = {training:,} bytes" in page
    bert = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert "That assumes every parameter is trained" in bert and "are frozen" not in bert
    assert (
        "the second is a running mean of their squares, uncentred (no mean is subtracted), so it is not a variance"
        in bert
    )
    assert "Adam's variance" not in bert


def test_half_precision_figures_on_the_memory_section(site: Path) -> None:
    page = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    section = re.search(r'<p id="memory-precisions">(.*?)</p>', page, re.S)
    assert section is not None
    text = section.group(1)
    # Read off the formats themselves: struct packs IEEE half floats; bf16 is the top half of an fp32.
    fp16_largest = struct.unpack("<e", bytes.fromhex("ff7b"))[0]  # 0x7bff: exponent 11110, fraction all ones
    fp16_smallest = struct.unpack("<e", bytes.fromhex("0100"))[0]  # 0x0001: the smallest subnormal
    bf16_largest = struct.unpack("<f", bytes.fromhex("00007f7f"))[0]  # 0x7f7f0000
    assert fp16_largest == (2 - 2**-10) * 2**15 and f"nothing above {int(fp16_largest):,}" in text
    assert fp16_smallest == 2**-24 and round(fp16_smallest * 1e8) == 6
    assert "2<sup>−24</sup> (about 6 × 10<sup>−8</sup>)" in text
    assert f"{bf16_largest / 1e38:.1f}" == "3.4" and "about 3.4 × 10<sup>38</sup>" in text
    assert "5 exponent bits and 10 fraction bits" in text and "8 exponent bits" in text and "7 fraction bits" in text
    assert 1 + 5 + 10 == 1 + 8 + 7 == 16  # sign, exponent and fraction bits of both 2-byte formats
    assert "loss scaling" in text and "scale factors" in text


def load_card_total(card_id: str) -> int:
    return count_card(MODELS / f"{card_id}.yaml").total


def test_memory_on_model_and_compare_pages(site: Path) -> None:
    page = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert 'id="memory"' in page
    assert "437,928,960" in page and "417.6 MiB" in page and "1,751,715,840" in page and "1.63 GiB" in page
    compare = (site / "compare" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr id="memory-bert-base-uncased">(.*?)</tr>', compare, re.S)
    assert row and "437,928,960 bytes" in row.group(1) and "1,751,715,840 bytes" in row.group(1)
