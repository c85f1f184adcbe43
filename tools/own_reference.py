"""Reference files for a family that transformers does not implement: the 2018 encoder-decoder.

Such a family declares its own config keys (``Family.own_config``). The one the catalog has
counts the encoder-decoder of attention-is-all-you-need-pytorch (``Models.py``, ``SubLayers.py``).
Its ground truth is the one real listing of that model the project has: a one-layer model printed
in a GitHub discussion (``shared/seeds/001_*.txt``). This script

1. parses that listing (47 named rows and the reported total);
2. rebuilds the model's module tree in PyTorch, module for module as ``Models.py`` and
   ``SubLayers.py`` register them, and checks that its ``named_parameters`` reproduce the
   listing row for row and that its deduplicated total equals the reported total;
3. only then writes ``tests/reference/<id>.json`` for every card of a family with its own config.

Which families and which card the listing prints come from the registry (``OwnConfig``).
Run it with the ``reference`` extra installed (``make reference`` does).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import torch
import yaml
from torch import nn

from reference import FAMILIES, inventory, write_json

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "attention-is-all-you-need-pytorch"  # the one implementation this script rebuilds
ROW = re.compile(r"weight name:\s*(\S+)\s*\|\s*size:\s*\|\s*\[([\d, ]+)\]\s*\|\s*count:\s*\|\s*(\d+)")
TOTAL = re.compile(r"# parameters:\s*(\d+)")


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head: int, d_model: int, d_k: int, d_v: int) -> None:
        super().__init__()
        self.w_qs = nn.Linear(d_model, n_head * d_k)
        self.w_ks = nn.Linear(d_model, n_head * d_k)
        self.w_vs = nn.Linear(d_model, n_head * d_v)
        self.layer_norm = nn.LayerNorm(d_model)
        self.fc = nn.Linear(n_head * d_v, d_model)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_in: int, d_hid: int) -> None:
        super().__init__()
        self.w_1 = nn.Conv1d(d_in, d_hid, 1)
        self.w_2 = nn.Conv1d(d_hid, d_in, 1)
        self.layer_norm = nn.LayerNorm(d_in)


class EncoderLayer(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        self.slf_attn = MultiHeadAttention(c["n_head"], c["d_model"], c["d_k"], c["d_v"])
        self.pos_ffn = PositionwiseFeedForward(c["d_model"], c["d_inner"])


class DecoderLayer(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        self.slf_attn = MultiHeadAttention(c["n_head"], c["d_model"], c["d_k"], c["d_v"])
        self.enc_attn = MultiHeadAttention(c["n_head"], c["d_model"], c["d_k"], c["d_v"])
        self.pos_ffn = PositionwiseFeedForward(c["d_model"], c["d_inner"])


class Stack(nn.Module):
    def __init__(self, c: dict[str, Any], vocab: int, words: str, layer: type[nn.Module]) -> None:
        super().__init__()
        self.add_module(words, nn.Embedding(vocab, c["d_word_vec"], padding_idx=0))
        # A frozen sinusoid table: a parameter that nothing trains, as in the original.
        self.position_enc = nn.Embedding(c["len_max_seq"] + 1, c["d_word_vec"], padding_idx=0)
        self.position_enc.weight.requires_grad_(False)
        self.layer_stack = nn.ModuleList([layer(c) for _ in range(c["n_layers"])])


class EncoderDecoder(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        self.encoder = Stack(c, c["n_src_vocab"], "src_word_emb", EncoderLayer)
        self.decoder = Stack(c, c["n_tgt_vocab"], "tgt_word_emb", DecoderLayer)
        self.tgt_word_prj = nn.Linear(c["d_model"], c["n_tgt_vocab"], bias=False)
        if c["tgt_emb_prj_weight_sharing"]:
            self.tgt_word_prj.weight = self.decoder.tgt_word_emb.weight
        if c["emb_src_tgt_weight_sharing"]:
            self.encoder.src_word_emb.weight = self.decoder.tgt_word_emb.weight


DEFAULTS = {"d_word_vec": 512, "d_model": 512, "d_inner": 2048, "n_layers": 6, "n_head": 8, "d_k": 64, "d_v": 64}
DEFAULTS |= {"tgt_emb_prj_weight_sharing": True, "emb_src_tgt_weight_sharing": True}


def parse_listing(text: str) -> tuple[list[tuple[str, list[int], int]], int]:
    """The listing's rows (name, shape, count) and its reported total."""
    rows = [(m[1], [int(d) for d in m[2].split(",")], int(m[3])) for m in ROW.finditer(text)]
    total = TOTAL.search(text)
    if not rows or total is None:
        raise SystemExit("the seed listing was not found")
    return rows, int(total[1])


def check_against_listing(listing: Path, card: dict[str, Any]) -> None:
    """Fail unless the rebuilt model prints exactly the listing's rows and total."""
    rows, reported = parse_listing(listing.read_text(encoding="utf-8"))
    with torch.device("meta"):
        model = EncoderDecoder(DEFAULTS | card["config"])
    printed = [(n, list(p.shape), p.numel()) for n, p in model.named_parameters(remove_duplicate=False)]
    # The listing prints the shared table under all three names, as remove_duplicate=False does.
    if printed != rows:
        raise SystemExit("the rebuilt model does not reproduce the seed listing")
    if sum(p.numel() for p in model.parameters()) != reported:
        raise SystemExit("the rebuilt model's total differs from the listing's reported total")
    print(
        f"seed listing reproduced: {len(rows)} rows, {sum(r[2] for r in rows):,} listed, {reported:,} stored",
        file=sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--listing", type=Path, default=None, help="the seed listing (default: ../shared/seeds/001_*.txt)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "reference")
    args = parser.parse_args(argv)
    listing = args.listing or next((ROOT.parent / "shared" / "seeds").glob("001_*.txt"))

    own = {name: family.own_config for name, family in FAMILIES.items() if family.own_config is not None}
    cards = []
    for path in sorted((ROOT / "models").glob("*.yaml")) + sorted((ROOT / "tests" / "cards").glob("*.yaml")):
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        if card.get("family") in own:
            cards.append((card.get("id", path.stem), card))
    for name, config in own.items():
        if not config.source.startswith(SOURCE):
            raise SystemExit(f"{name}: {config.source} has no rebuild here, only {SOURCE}")
        if config.listed_card is not None:
            check_against_listing(listing, dict(cards)[config.listed_card])
    for card_id, card in cards:
        with torch.device("meta"):
            model = EncoderDecoder(DEFAULTS | card["config"])
        config_class = own[card["family"]].config_class
        data = {"id": card_id, "family": card["family"], "head": card["head"], **inventory(model)}
        data["class"] = config_class
        # Models.py freezes the sinusoid tables (requires_grad False): what an optimizer would update.
        data["trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        data["versions"] = {"torch": torch.__version__, "implementation": "attention-is-all-you-need-pytorch (2018)"}
        write_json(args.out / f"{card_id}.json", data)
        print(f"{card_id}: {data['total']:,}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
