"""`python -m generator import`: a transformers config.json becomes a card that counts exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REFERENCE, reference_for
from generator.build.pipeline import build
from generator.cards.card import load_card
from generator.cards.importer import import_config, key_locations
from generator.cards.problems import InputError, Location
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.site.render import SiteOptions

CONFIG_JSON = sorted((REFERENCE / "config-json").glob("*.json"))
# Real config.json files of fine-tuned classifiers from public repositories (see their README.md);
# tools/reference.py builds the class each one names and writes tests/reference/fine-tuned/.
FINE_TUNED = sorted((Path(__file__).resolve().parent / "fine-tuned-configs").glob("*.json"))


def fine_tuned_reference(source: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / "fine-tuned" / source.name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("source", CONFIG_JSON, ids=lambda p: p.stem)
def test_imported_config_counts_like_transformers(source: Path, tmp_path: Path) -> None:
    reference = reference_for(source.stem)
    result = import_config(source, "imported", reference["head"], tmp_path)
    assert result.dropped == ()  # a config.json written by transformers itself has no unknown keys
    inventory = count_parameters(load_card(result.path))
    assert inventory.class_name == reference["class"]
    assert [(t.name, list(t.shape), t.count) for t in inventory.tensors] == [
        (t["name"], t["shape"], t["count"]) for t in reference["tensors"]
    ]
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]


def test_every_family_has_an_imported_config() -> None:
    families = {json.loads(p.read_text(encoding="utf-8"))["model_type"] for p in CONFIG_JSON}
    assert families == {name for name, family in FAMILIES.items() if family.own_config is None}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_legacy_keys_are_left_out_and_listed(tmp_path: Path) -> None:
    config = json.loads((REFERENCE / "config-json" / "bert-base-uncased.json").read_text(encoding="utf-8"))
    config |= {"gradient_checkpointing": False, "position_embedding_type": "absolute"}
    del config["architectures"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    result = run("import", "config.json", "--id", "old-bert", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "head: base (the file has no architectures)\nwrote models/old-bert.yaml\n"
    assert result.stderr == (
        "warning: left out 2 key(s) that config.json carries but the config class does not know: "
        "gradient_checkpointing, position_embedding_type\n"
    )
    card = load_card(tmp_path / "models" / "old-bert.yaml")
    assert "gradient_checkpointing" not in card.given_keys
    assert count_parameters(card).total == 109_482_240


def test_unsupported_model_type_lists_the_supported_ones(tmp_path: Path) -> None:
    (tmp_path / "gpt2.json").write_text('{"model_type": "gpt2", "n_layer": 12}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_config(tmp_path / "gpt2.json", "gpt2", "base", tmp_path / "models")
    supported = ", ".join(sorted(FAMILIES))
    assert str(caught.value).endswith(
        f"model_type: expected a model_type this site counts ({supported}), found the string 'gpt2'"
    )
    assert not (tmp_path / "models").exists()


def test_existing_card_needs_force(tmp_path: Path) -> None:
    source = REFERENCE / "config-json" / "bert-base-uncased.json"
    models = tmp_path / "models"
    import_config(source, "mine", "base", models)
    (models / "mine.yaml").write_text("title: hand-edited\n", encoding="utf-8")
    with pytest.raises(InputError, match="already exists; pass --force to overwrite it"):
        import_config(source, "mine", "base", models)
    assert (models / "mine.yaml").read_text(encoding="utf-8") == "title: hand-edited\n"
    import_config(source, "mine", "masked-lm", models, force=True)
    assert load_card(models / "mine.yaml").head.value == "masked-lm"


def test_a_card_that_cannot_be_written_is_a_located_problem_not_a_traceback(tmp_path: Path) -> None:
    source = REFERENCE / "config-json" / "bert-base-uncased.json"
    a_file = tmp_path / "a-file"
    a_file.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"a-file:1:1: --models: expected a folder the card can be written into"):
        import_config(source, "mine", "base", a_file)  # --models names a file
    (tmp_path / "models" / "mine.yaml").mkdir(parents=True)  # a folder where the card would go
    with pytest.raises(InputError, match="writing it failed: Is a directory"):
        import_config(source, "mine", "base", tmp_path / "models", force=True)
    (tmp_path / "models" / "gone.yaml").symlink_to(tmp_path / "nowhere")  # a broken link is a file there too
    with pytest.raises(InputError, match="already exists; pass --force to overwrite it"):
        import_config(source, "gone", "base", tmp_path / "models")


def test_invalid_json_is_located(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{\n  "model_type": "bert",\n  "hidden_size": \n}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_config(tmp_path / "broken.json", "x", "base", tmp_path)
    assert str(caught.value).endswith("broken.json:4:1: JSON syntax: Expecting value")


def test_imported_card_is_validated_before_writing(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('{"model_type": "bert", "hidden_size": 770}', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"the hidden size \(770\) is not a multiple of the number of attention heads \(12\)"
    ):
        import_config(tmp_path / "c.json", "odd", "base", tmp_path / "models")
    assert not (tmp_path / "models" / "odd.yaml").exists()


@pytest.mark.parametrize("source", FINE_TUNED, ids=lambda p: p.stem)
def test_fine_tuned_config_imports_into_the_class_it_names(source: Path, tmp_path: Path) -> None:
    reference = fine_tuned_reference(source)
    result = import_config(source, "fine-tuned", None, tmp_path)
    card = load_card(result.path)
    assert card.head.value == reference["head"]
    assert card.config["num_labels"] == reference["num_labels"]
    inventory = count_parameters(card)
    assert inventory.class_name == reference["class"]
    assert [(t.name, list(t.shape), t.count) for t in inventory.tensors] == [
        (t["name"], t["shape"], t["count"]) for t in reference["tensors"]
    ]
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]
    assert inventory.total == reference["total"]


def test_fine_tuned_configs_cover_many_labels_old_versions_and_old_keys() -> None:
    configs = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in FINE_TUNED}
    assert max(len(c["id2label"]) for c in configs.values()) == 151
    assert any(c["transformers_version"].startswith("4.27.") for c in configs.values())  # 4.27.x: March 2023
    assert {c["model_type"] for c in configs.values()} == {"bert", "distilbert", "roberta"}


@pytest.mark.parametrize(
    ("stem", "old_keys"),
    [
        ("tweet-emotions-bert", {"gradient_checkpointing"}),
        ("sst2-distilbert", {"output_past", "finetuning_task", "tie_weights_"}),
        ("car-commands-mbert", {"pooler_type", "pooler_fc_size", "directionality"}),
    ],
)
def test_keys_transformers_5_no_longer_reads_are_dropped(stem: str, old_keys: set[str], tmp_path: Path) -> None:
    result = import_config(Path(__file__).parent / "fine-tuned-configs" / f"{stem}.json", "old", None, tmp_path)
    assert old_keys <= set(result.dropped)
    assert not old_keys & load_card(result.path).given_keys


def test_cli_says_which_head_it_inferred_and_why(tmp_path: Path) -> None:
    source = Path(__file__).parent / "fine-tuned-configs" / "clinc150-intents-distilbert.json"
    labels = fine_tuned_reference(source)["num_labels"]
    result = run("import", str(source), "--id", "intents", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"head: sequence-classification (architectures names DistilBertForSequenceClassification; "
        f"id2label has {labels} labels)\nwrote models/intents.yaml\n"
    )


NAMING_A_CLASS = [p for p in CONFIG_JSON if json.loads(p.read_text(encoding="utf-8")).get("architectures")]


@pytest.mark.parametrize("source", NAMING_A_CLASS, ids=lambda p: p.stem)
def test_inferred_head_counts_the_class_architectures_names(source: Path, tmp_path: Path) -> None:
    named = json.loads(source.read_text(encoding="utf-8"))["architectures"][0]
    result = import_config(source, "inferred", None, tmp_path)
    assert count_parameters(load_card(result.path)).class_name == named
    assert result.choice.reason == f"architectures names {named}"
    assert result.choice.warning is None


def line_of(source: Path, key: str) -> int:
    """The line of a top-level key in a file json.dumps(indent=2) wrote (its column is then 3)."""
    rows = source.read_text(encoding="utf-8").splitlines()
    return next(n for n, row in enumerate(rows, 1) if row.startswith(f'  "{key}":'))


def write_config(tmp_path: Path, **keys: object) -> Path:
    config = json.loads((REFERENCE / "config-json" / "bert-base-uncased.json").read_text(encoding="utf-8"))
    config.update(keys)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in config.items() if v is not None}, indent=2), encoding="utf-8")
    return path


def test_explicit_head_wins_with_a_warning(tmp_path: Path) -> None:
    source = write_config(tmp_path)  # architectures: BertForMaskedLM
    result = import_config(source, "mine", "pretraining", tmp_path / "models")
    assert load_card(result.path).head.value == "pretraining"
    assert result.choice.warning == (
        f"{source}:{line_of(source, 'architectures')}:3: architectures: names BertForMaskedLM, the masked-lm head; "
        "the card counts the pretraining head, as --head asks"
    )


def test_explicit_head_that_agrees_gives_no_warning(tmp_path: Path) -> None:
    result = import_config(write_config(tmp_path), "mine", "masked-lm", tmp_path / "models")
    assert result.choice.warning is None


def test_model_class_and_no_architectures_mean_base(tmp_path: Path) -> None:
    result = import_config(write_config(tmp_path, architectures=["BertModel"]), "a", None, tmp_path / "m")
    assert (result.choice.head.value, result.choice.reason) == ("base", "architectures names BertModel")
    result = import_config(write_config(tmp_path, architectures=[]), "b", None, tmp_path / "m")
    assert (result.choice.head.value, result.choice.reason) == ("base", "the file has no architectures")


@pytest.mark.parametrize("named", ["BertLMHeadModel", "BertForNextSentencePrediction"])
def test_a_head_class_is_never_taken_for_the_base_model(named: str, tmp_path: Path) -> None:
    result = import_config(write_config(tmp_path, architectures=[named]), "lm", None, tmp_path / "models")
    assert result.choice.head.value == "base"
    assert result.choice.warning is not None and f"{named} is a head this site does not count" in result.choice.warning


def test_a_head_the_site_does_not_count_falls_back_to_base_with_a_warning(tmp_path: Path) -> None:
    source = write_config(tmp_path, architectures=["BertForTokenClassification"])
    result = import_config(source, "tokens", None, tmp_path / "models")
    assert load_card(result.path).head.value == "base"
    assert result.choice.warning == (
        f"{source}:{line_of(source, 'architectures')}:3: architectures: BertForTokenClassification is a head "
        "this site does not count; the card counts the bert encoder it sits on (base); pass --head to count "
        "another head (base, pretraining, masked-lm, sequence-classification)"
    )


def test_num_labels_wins_over_the_default_and_is_said(tmp_path: Path) -> None:
    source = write_config(tmp_path, architectures=["BertForSequenceClassification"], num_labels=7, id2label=None)
    result = import_config(source, "seven", None, tmp_path / "models")
    assert result.choice.reason == "architectures names BertForSequenceClassification; num_labels is 7"
    # BERT-Base's classifier: 768 x 7 weights and 7 biases over BertModel's 109,482,240.
    assert count_parameters(load_card(result.path)).total == 109_482_240 + 768 * 7 + 7


def test_classifier_without_labels_gets_the_default_of_two_and_says_so(tmp_path: Path) -> None:
    source = write_config(tmp_path, architectures=["BertForSequenceClassification"], id2label=None, label2id=None)
    result = import_config(source, "c", None, tmp_path / "models")
    assert result.choice.reason == (
        "architectures names BertForSequenceClassification; "
        "neither num_labels nor id2label, so transformers' default of 2 labels"
    )
    # transformers built BertForSequenceClassification on this config with its default labels.
    classes = json.loads((REFERENCE / "classes" / "bert-base-uncased.json").read_text(encoding="utf-8"))["classes"]
    built = next(c for c in classes if c["class"] == "BertForSequenceClassification")
    assert count_parameters(load_card(result.path)).total == built["total"]


def test_head_the_family_lacks_is_refused_at_architectures(tmp_path: Path) -> None:
    config = json.loads((REFERENCE / "config-json" / "roberta-base.json").read_text(encoding="utf-8"))
    config["architectures"] = ["RobertaForPreTraining"]
    source = tmp_path / "config.json"
    source.write_text(json.dumps(config, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_config(source, "r", None, tmp_path / "models")
    assert str(caught.value) == (
        f"{source}:{line_of(source, 'architectures')}:3: architectures: names RobertaForPreTraining, but the roberta family has no pretraining head; "
        "pass --head (base, masked-lm, sequence-classification)"
    )


def test_problems_found_by_the_card_check_name_the_config_json_key(tmp_path: Path) -> None:
    source = write_config(tmp_path, hidden_size=770)
    with pytest.raises(InputError) as caught:
        import_config(source, "odd", None, tmp_path / "models")
    assert str(caught.value) == (
        f"{source}:{line_of(source, 'hidden_size')}:3: hidden_size: the hidden size (770) is not a multiple of the number of attention heads (12)"
    )


def test_too_many_layers_is_reported_at_the_config_json_key(tmp_path: Path) -> None:
    source = write_config(tmp_path, num_hidden_layers=100_000, architectures=None)
    with pytest.raises(InputError) as caught:
        import_config(source, "deep", None, tmp_path / "models")
    where = f"{source}:{line_of(source, 'num_hidden_layers')}:3"
    assert str(caught.value).startswith(f"{where}: num_hidden_layers: this config gives ")
    assert ".yaml" not in str(caught.value)


def test_key_locations_finds_top_level_keys_only() -> None:
    text = '{\n  "a": {"b": 1},\n  "c" : [1, {"d": 2}],\n\t"e": "x"\n}'
    found = key_locations(Path("f.json"), text)
    assert found == {
        "a": Location(Path("f.json"), 2, 3),
        "c": Location(Path("f.json"), 3, 3),
        "e": Location(Path("f.json"), 4, 2),
    }


def test_imported_fine_tuned_cards_build_into_pages_with_the_reference_totals(tmp_path: Path) -> None:
    models = tmp_path / "models"
    for source in FINE_TUNED:
        import_config(source, source.stem, None, models)
    build(models, tmp_path / "site", SiteOptions(search=False))
    for source in FINE_TUNED:
        page = (tmp_path / "site" / "models" / source.stem / "index.html").read_text(encoding="utf-8")
        assert f"{fine_tuned_reference(source)['total']:,} parameters" in page


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
KEYS = st.sampled_from(
    ["architectures", "num_labels", "id2label", "hidden_size", "num_hidden_layers", "vocab_size", "model_type"]
)
CLASSES = st.sampled_from(
    ["BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification", "BertForQA", ""]
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    changes=st.dictionaries(KEYS, JSON_VALUES | st.lists(CLASSES, max_size=2), max_size=3),
    head=st.none() | st.sampled_from(["base", "pretraining", "masked-lm", "sequence-classification", "mlm"]),
)
def test_any_config_json_gives_a_card_or_located_problems(
    changes: dict[str, Any], head: str | None, tmp_path: Path
) -> None:
    config = json.loads((REFERENCE / "config-json" / "test-bert-classifier-5.json").read_text(encoding="utf-8"))
    source = tmp_path / "config.json"
    source.write_text(json.dumps(config | changes, indent=2), encoding="utf-8")
    try:
        result = import_config(source, "any", head, tmp_path / "models", force=True)
    except InputError as error:
        for problem in error.problems:
            assert problem.location.path == source  # the user's file, never the scratch card
        return
    assert count_parameters(load_card(result.path)).total > 0
