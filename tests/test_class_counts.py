"""A published figure may count another class or config than the card's.

Each catalog card with published figures shows its weights as every class of its family builds
them, and as the configs its ``also_counted`` entries name; every one of those totals is checked
here against ``tests/reference/classes/<id>.json``, which transformers itself produced
(``tools/reference.py --classes-only``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import MODELS, REFERENCE, ROOT, reference_for
from generator.analysis.claims import ClassCount
from generator.cards.card import load_cards
from generator.site.render import Renderer, SiteOptions
from generator.site.views import Model, model_of

MODEL_LIST = [model_of(card) for card in load_cards(MODELS)]
BY_ID = {m.id: m for m in MODEL_LIST}
CLASS_FILES = sorted((REFERENCE / "classes").glob("*.json"))


def classes_reference(card_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / "classes" / f"{card_id}.json").read_text(encoding="utf-8"))
    return data


def row(model: Model, class_name: str) -> ClassCount:
    return next(r for r in model.class_counts if r.class_name == class_name and r.label is None)


def page(model: Model) -> str:
    return Renderer(SiteOptions(search=False)).model_files(model)[f"models/{model.id}/index.html"].decode()


def test_every_card_with_figures_has_a_class_reference() -> None:
    published = {m.id for m in MODEL_LIST if m.card.claims and m.card.family.name != "transformer"}
    assert {path.stem for path in CLASS_FILES} == published


@pytest.mark.parametrize("path", CLASS_FILES, ids=lambda p: p.stem)
def test_every_class_count_matches_transformers(path: Path) -> None:
    reference = json.loads(path.read_text(encoding="utf-8"))
    model = BY_ID[reference["id"]]
    by_head = {entry["head"]: entry for entry in reference["classes"]}
    rows = [r for r in model.class_counts if r.label is None]
    assert [r.head for r in rows] == list(model.card.family.heads)
    for r in rows:
        expected = by_head[r.head.value]
        assert (r.class_name, r.total, r.pooler) == (expected["class"], expected["total"], expected["pooler"])
    others = [r for r in model.class_counts if r.label is not None]
    found = [(r.label, r.head.value, r.class_name, r.total, r.pooler) for r in others]
    wanted = [(e["label"], e["head"], e["class"], e["total"], e["pooler"]) for e in reference["also_counted"]]
    assert found == wanted
    (own,) = [r for r in model.class_counts if r.this_card]
    assert own.total == reference_for(model.id)["total"]


def test_mobilebert_default_config_adds_a_pooler() -> None:
    """The Hub config's 24,581,888 and MobileBertModel(MobileBertConfig())'s 24,844,544 both appear, with why."""
    model = BY_ID["mobilebert-uncased"]
    reference = classes_reference("mobilebert-uncased")
    (default,) = reference["also_counted"]
    hidden = model.card.config["hidden_size"]
    assert model.card.config["classifier_activation"] is False and hidden == 512
    assert default["total"] - reference_for("mobilebert-uncased")["total"] == hidden**2 + hidden
    assert (reference_for("mobilebert-uncased")["total"], default["total"]) == (24_581_888, 24_844_544)
    assert default["pooler"] == hidden**2 + hidden and default["label"] == "MobileBertModel(MobileBertConfig())"
    # The label is literal: with the override, every key that shapes the model is MobileBertConfig's default.
    defaults = json.loads(
        (ROOT / "generator/counting/families/transformers/mobilebert.json").read_text(encoding="utf-8")
    )
    (other,) = model.card.also_counted
    differ = {k for k, v in defaults["defaults"].items() if other.config.get(k) != v}
    assert differ == {"architectures", "transformers_version", "true_hidden_size"}  # file stamps; derived when null
    assert other.config["true_hidden_size"] == other.config["intra_bottleneck_size"]
    html = page(model)
    assert "<code>MobileBertModel(MobileBertConfig())</code></th><td>MobileBertConfig&#39;s default turns" in html
    assert '<td class="n count">24,844,544</td>' in html and '<td class="n">24,581,888</td>' in html


def test_electra_small_names_the_bare_model_too() -> None:
    """The page counts ElectraForPreTraining (13,549,057, 14M) and names ElectraModel's 13,483,008 (13M)."""
    model = BY_ID["electra-small-discriminator"]
    by_class = {c["class"]: c["total"] for c in classes_reference("electra-small-discriminator")["classes"]}
    assert model.inventory.class_name == "ElectraForPreTraining" and model.total == by_class["ElectraForPreTraining"]
    assert row(model, "ElectraModel").total == by_class["ElectraModel"] == 13_483_008
    assert round(by_class["ElectraModel"] / 10**6) == 13 and round(model.total / 10**6) == 14
    (claim,) = model.claim_checks
    assert claim.parts[0].match is not None and claim.parts[0].match.class_name == "ElectraForPreTraining"
    html = page(model)
    assert (
        '<th scope="row"><code>ElectraModel</code></th><td>No head, the bare encoder</td><td class="n count">13,483,008</td>'
        in html
    )


def test_minilm_sentence_embeddings_skip_the_pooler() -> None:
    """sentence-transformers mean-pools; BertModel's 147,840-parameter pooler is never used: 22,565,376."""
    model = BY_ID["all-minilm-l6-v2"]
    reference = reference_for("all-minilm-l6-v2")
    pooler = sum(t["count"] for t in reference["tensors"] if t["name"].startswith("pooler."))
    hidden = model.card.config["hidden_size"]
    assert pooler == hidden**2 + hidden == 147_840
    own = row(model, "BertModel")
    assert own.this_card and own.pooler == pooler
    assert own.total - own.pooler == reference["total"] - pooler == 22_565_376
    assert "Pooling and normalization have no weights" not in model.card.notes.texts["en"]
    assert '<td class="n count">22,713,216</td><td class="n">22,565,376</td>' in page(model)


def test_deberta_v3_base_backbone_figure_is_ambiguous() -> None:
    """86M is DebertaV2ForMaskedLM without its embeddings, or the bare model's 184M − 98M rounded first."""
    model = BY_ID["deberta-v3-base"]
    by_class = {c["class"]: c["total"] for c in classes_reference("deberta-v3-base")["classes"]}
    check = next(c for c in model.claim_checks if c.claim.figure == "86M backbone + 98M embedding")
    backbone, embedding = check.parts
    embeddings = embedding.exact
    assert round(embeddings / 10**6) == 98
    assert round((by_class["DebertaV2ForMaskedLM"] - embeddings) / 10**6) == 86  # with the masked-LM head
    assert round(by_class["DebertaV2Model"] / 10**6) - round(embeddings / 10**6) == 184 - 98 == 86
    assert backbone.exact == by_class["DebertaV2Model"] - embeddings and round(backbone.exact / 10**6) == 85
    assert check.claim.explanation is not None and "two ways" in check.claim.explanation


def test_tinybert_figure_is_the_model_with_pretraining_heads() -> None:
    """14.5M is BertForPreTraining to the nearest 0.1M; the bare BertModel of the card is 14.4M."""
    model = BY_ID["tinybert-general-4l-312d"]
    by_class = {c["class"]: c["total"] for c in classes_reference("tinybert-general-4l-312d")["classes"]}
    (part,) = next(c for c in model.claim_checks if c.claim.figure == "14.5M").parts
    assert part.match is not None and part.match.count == by_class["BertForPreTraining"]
    assert round(by_class["BertForPreTraining"] / 10**5) == 145 and round(by_class["BertModel"] / 10**5) == 144
    assert part.exact == by_class["BertModel"] and part.exact_rounded == "14.4M"


def test_roberta_figures_fit_the_checkpoints_masked_lm_class_too() -> None:
    """fairseq's checkpoints have a masked-LM head and no pooler; both classes round to the README's figure."""
    for card_id, millions in (("roberta-base", 125), ("roberta-large", 355)):
        by_class = {c["class"]: c["total"] for c in classes_reference(card_id)["classes"]}
        assert round(by_class["RobertaModel"] / 10**6) == round(by_class["RobertaForMaskedLM"] / 10**6) == millions
        assert row(BY_ID[card_id], "RobertaForMaskedLM").total == by_class["RobertaForMaskedLM"]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            "  - label: x\n    why: y\n    head: decoder\n",
            "models/card.yaml:7:11: also_counted[0].head: expected one of base, pretraining, masked-lm, "
            "sequence-classification, found the string 'decoder'",
        ),
        (
            "  - label: x\n    why: y\n    config:\n      hidden_sise: 8\n",
            "models/card.yaml:8:7: config.hidden_sise: unknown key for BertConfig (transformers 5.23.0); "
            "give keys under their own names",
        ),
        (
            "  - label: x\n    why: y\n    config:\n      hidden_size: 770\n",
            "models/card.yaml:8:20: config.hidden_size: the hidden size (770) is not a multiple of the number of "
            "attention heads (12)",
        ),
        ("  - label: x\n", "models/card.yaml:5:5: also_counted[0].why: missing; expected text"),
        ("  - label: x\n    why: y\n    colour: z\n", "models/card.yaml:7:5: also_counted[0].colour: unknown key"),
        (
            "  - 7\n",
            "models/card.yaml:5:5: also_counted[0]: expected a mapping with label, head, config, why, found the integer 7",
        ),
        (
            "  - label: x\n    why: y\n    config:\n      id2label: {0: a}\n",
            "models/card.yaml:8:17: config.id2label: give num_labels instead of id2label here, found a mapping",
        ),
        ("  pooler\n", "models/card.yaml:5:3: also_counted: expected a list, found the string 'pooler'"),
        (
            "  - label: x\n    why: y\n    config: 3\n",
            "models/card.yaml:7:13: also_counted[0].config: expected a mapping of config.json keys, found the integer 3",
        ),
    ],
)
def test_bad_also_counted_entries_are_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, expected: str
) -> None:
    from generator.cards.problems import InputError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "card.yaml").write_text("title: t\nfamily: bert\nhead: base\nalso_counted:\n" + entry)
    with pytest.raises(InputError) as caught:
        load_cards(tmp_path / "models")
    assert expected in [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("card_id", "bare", "masked_lm"),
    [("modernbert-base", 149, 150), ("modernbert-large", 395, 396), ("distilbert-base-uncased", 66, 67)],
)
def test_figures_of_the_bare_encoder_not_the_checkpoints_masked_lm_class(
    card_id: str, bare: int, masked_lm: int
) -> None:
    """The published figure is the bare model's count to the nearest million; the checkpoint's class rounds higher."""
    classes = classes_reference(card_id)["classes"]
    totals = {c["head"]: c["total"] for c in classes}
    assert (round(totals["base"] / 10**6), round(totals["masked-lm"] / 10**6)) == (bare, masked_lm)
    (claim, *_) = BY_ID[card_id].claim_checks
    assert claim.claim.figure == f"{bare}M" and claim.parts[0].exact == totals["base"]
    assert f"{masked_lm}M" in BY_ID[card_id].card.notes.texts["en"]
