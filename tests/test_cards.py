"""Cards: a good card loads with its defaults, config names and labels; bad cards give located, actionable
errors, all of them in one run (tests/test_bad_input.py names every kind of bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cards.card import load_card, load_cards
from generator.cards.config import load_schema
from generator.cards.problems import InputError
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters

GOOD = """
title: Good card
family: bert
head: base
config:
  hidden_size: 768
  num_attention_heads: 12
"""


def problems_of(path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_cards(path.parent)
    return [str(p) for p in caught.value.problems]


def test_good_card_loads_with_defaults(write_card) -> None:  # type: ignore[no-untyped-def]
    card = load_card(write_card(GOOD))
    assert card.id == "card"
    assert card.config["vocab_size"] == 30522  # BertConfig's default, from the schema file
    assert card.given_keys == {"hidden_size", "num_attention_heads"}


def test_wrong_type_unknown_key_and_bad_head_in_one_run(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card(
        """
        title: Broken
        family: bert
        head: clasification
        config:
          hidden_size: twelve
          num_hiden_layers: 12
        """
    )
    assert problems_of(path) == [
        "models/card.yaml:3:7: head: expected one of base, pretraining, masked-lm, sequence-classification, "
        "found the string 'clasification'; did you mean 'sequence-classification'?",
        "models/card.yaml:5:16: config.hidden_size: expected a whole number from 1 to 2,147,483,647 (hidden size), "
        "found the string 'twelve'",
        "models/card.yaml:6:3: config.num_hiden_layers: unknown key for BertConfig (transformers 5.23.0); "
        "did you mean 'num_hidden_layers'?",
    ]


@pytest.fixture(autouse=True)
def _relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "models/card.yaml:1:1: expected a card (a mapping of keys), found an empty file"),
        ("- a\n- b\n", "models/card.yaml:1:1: expected a card (a mapping of keys), found a list"),
        ("title: [oops\n", "models/card.yaml:2:1: YAML syntax: expected ',' or ']', but got '<stream end>'"),
        ("title: a\ntitle: b\n", "models/card.yaml:2:1: title: duplicate key; it was already given at line 1"),
        (
            "a: &x 1\nb: *x\n",
            "models/card.yaml:2:4: YAML syntax: anchors and aliases are not allowed in a card; write the value out",
        ),
        (
            "title: !!python/object/apply:os.system [ls]\n",
            "models/card.yaml:1:8: title: the YAML tag !!python/object/apply:os.system is not allowed in a card; write plain data",
        ),
        (
            "title: a\n\tfamily: bert\n",
            "models/card.yaml:2:1: YAML syntax: a tab character here; YAML indents and separates with spaces only, replace it with spaces",
        ),
    ],
)
def test_unreadable_files(write_card, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert expected in problems_of(write_card(text))


def test_invalid_utf8_names_the_byte(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card("title: ok\n")
    path.write_bytes(b"title: ok\nnotes: caf\xe9\n")
    assert problems_of(path) == ["models/card.yaml:2:11: expected UTF-8 text, found the byte 0xe9"]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "hidden_size: 770",
            "models/card.yaml:5:16: config.hidden_size: the hidden size (770) is not a multiple of the number of attention heads (12)",
        ),
        (
            "num_hidden_layers: -1",
            "config.num_hidden_layers: expected a whole number from 0 to 2,147,483,647 (encoder layers), found the integer -1",
        ),
        (
            "vocab_size: true",
            "config.vocab_size: expected a whole number from 0 to 2,147,483,647 (vocabulary size), found the boolean true",
        ),
        (
            "intermediate_size: 3072.0",
            "expected a whole number from 0 to 2,147,483,647 (feed-forward size), found the number 3072.0",
        ),
        ("max_position_embeddings: 99999999999", "found the integer 99999999999"),
        ("tie_word_embeddings: 1", "config.tie_word_embeddings: expected true or false, found the integer 1"),
        (
            "add_cross_attention: true",
            "config.add_cross_attention: add_cross_attention is true but is_decoder is false; transformers refuses this",
        ),
        (
            "num_labels: 3\n  id2label: {0: a, 1: b}",
            "config.num_labels: num_labels (3) disagrees with id2label (2 labels)",
        ),
    ],
)
def test_bad_config_values(write_card, config: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = write_card(f"title: t\nfamily: bert\nhead: base\nconfig:\n  {config}\n")
    found = problems_of(path)
    assert len(found) == 1
    assert expected in found[0]


def test_pasted_config_json_keys_are_accepted(write_card) -> None:  # type: ignore[no-untyped-def]
    card = load_card(
        write_card(
            """
            title: pasted
            family: bert
            head: base
            config:
              _name_or_path: bert-base-uncased
              architectures: [BertForMaskedLM]
              model_type: bert
              transformers_version: "5.23.0"
              torch_dtype: float32
              hidden_act: gelu
              classifier_dropout: null
              layer_norm_eps: 1.0e-12
            """
        )
    )
    assert card.config["hidden_act"] == "gelu"


def test_classification_head_without_labels_takes_the_config_class_default(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card("title: t\nfamily: bert\nhead: sequence-classification\n")
    card = load_card(path)
    # PretrainedConfig's default, as tools/reference.py recorded it from transformers.
    assert card.config["num_labels"] == load_schema(card.family).default_num_labels == 2
    assert "num_labels" not in card.given_keys


def test_labels_from_id2label(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card(
        "title: t\nfamily: bert\nhead: sequence-classification\nconfig:\n  id2label: {0: a, 1: b, 2: c}\n"
    )
    assert load_card(path).config["num_labels"] == 3


def test_top_level_problems(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card(
        """
        id: Bad/Id
        famly: bert
        head: base
        sources:
          - title: paper
            url: ftp://example.org/x
        claims:
          - figure: 110M
        """
    )
    assert problems_of(path) == [
        f"models/card.yaml:1:1: family: expected one of {', '.join(sorted(FAMILIES))}, found nothing (the key is missing)",
        "models/card.yaml:1:1: title: missing; expected text",
        "models/card.yaml:1:5: id: expected lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (no '..'), found the string 'Bad/Id'",
        "models/card.yaml:2:1: famly: unknown key; did you mean 'family'?",
        "models/card.yaml:6:10: sources[0].url: expected an http(s) URL, found the string 'ftp://example.org/x'",
        "models/card.yaml:8:5: claims[0].source: missing; expected text",
    ]


@pytest.mark.parametrize("bad_id", ["..", "a..b", "-x", "with space", "UPPER", "a/b", ".hidden"])
def test_ids_that_would_make_bad_paths(write_card, bad_id: str) -> None:  # type: ignore[no-untyped-def]
    path = write_card(f'id: "{bad_id}"\n' + GOOD)
    assert "id: expected lowercase letters" in problems_of(path)[0]


def test_duplicate_ids_across_cards(write_card) -> None:  # type: ignore[no-untyped-def]
    write_card(GOOD, "a.yaml")
    path = write_card("id: a\n" + GOOD, "b.yaml")
    assert problems_of(path) == ["models/b.yaml:1:5: id: the id 'a' is already used by models/a.yaml"]


def test_problems_from_every_card_are_reported(write_card) -> None:  # type: ignore[no-untyped-def]
    write_card("title: t\nfamily: bert\nhead: nope\n", "a.yaml")
    path = write_card("title: t\nfamily: bert\nhead: base\nconfig: {hidden_size: 0}\n", "b.yaml")
    found = problems_of(path)
    assert [line.split(":")[0] for line in found] == ["models/a.yaml", "models/b.yaml"]


def test_other_names_a_config_class_accepts(write_card) -> None:  # type: ignore[no-untyped-def]
    # DistilBertConfig.attribute_map: hidden_size is dim, num_attention_heads is n_heads.
    card = load_card(
        write_card("title: t\nfamily: distilbert\nhead: base\nconfig:\n  hidden_size: 384\n  num_attention_heads: 6\n")
    )
    assert (card.config["dim"], card.config["n_heads"]) == (384, 6)
    assert {"dim", "n_heads"} <= card.given_keys


def test_an_alias_that_disagrees_with_its_key(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card("title: t\nfamily: distilbert\nhead: base\nconfig:\n  dim: 768\n  hidden_size: 384\n")
    assert problems_of(path) == [
        "models/card.yaml:6:16: config.hidden_size: hidden_size (the integer 384) is another name for dim, which says the integer 768"
    ]


def test_a_config_without_a_single_parameter_is_refused(write_card) -> None:  # type: ignore[no-untyped-def]
    # DeBERTa-v2 builds a model 0 wide (tests/reference/sample/configs.json), but every tensor is empty.
    path = write_card(
        "title: t\nfamily: deberta-v2\nhead: base\nconfig:\n  hidden_size: 0\n  intermediate_size: 0\n"
        "  max_position_embeddings: 0\n"
    )
    assert problems_of(path) == [
        "models/card.yaml:5:3: config: this config gives a model without a single parameter "
        "(every tensor has a dimension of 0)"
    ]


def test_empty_dimensions_transformers_builds_are_counted(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card(
        "title: t\nfamily: bert\nhead: base\nconfig:\n  vocab_size: 10\n  hidden_size: 4\n  num_hidden_layers: 1\n"
        "  num_attention_heads: 2\n  intermediate_size: 0\n  max_position_embeddings: 0\n  type_vocab_size: 0\n"
    )
    inventory = count_parameters(load_card(path))
    # tokens 10·4 + LayerNorm 2·4; a layer: Q, K, V, output 4·(4·4 + 4), two LayerNorms 2·(2·4), the
    # feed-forward 4·0 + 0 and 0·4 + 4; the pooler 4·4 + 4.
    assert inventory.total == 10 * 4 + 2 * 4 + 4 * (4 * 4 + 4) + 2 * (2 * 4) + 0 + 4 + (4 * 4 + 4)
    assert inventory.tensor("embeddings.position_embeddings.weight").shape == (0, 4)


def test_a_single_label_problem_with_one_label_is_refused_where_the_labels_are_given(write_card) -> None:  # type: ignore[no-untyped-def]
    """PretrainedConfig refuses it whatever the family (tests/reference/sample/configs.json holds its
    verdict for each); the problem names the number of labels, the key a fix changes."""
    card = GOOD.replace("head: base", "head: sequence-classification")
    refused = card + "  problem_type: single_label_classification\n  num_labels: 1\n"
    assert problems_of(write_card(refused)) == [
        "models/card.yaml:8:15: config.num_labels: problem_type single_label_classification needs more than one "
        "label, found num_labels 1; transformers refuses it (use num_labels 2, or problem_type regression)"
    ]
    accepted = card + "  problem_type: single_label_classification\n  num_labels: 3\n"
    assert load_card(write_card(accepted)).config["problem_type"] == "single_label_classification"


@pytest.mark.parametrize("family", ["bert", "deberta-v2", "modernbert"])
def test_a_problem_type_transformers_does_not_name_is_refused(write_card, family: str) -> None:  # type: ignore[no-untyped-def]
    """PretrainedConfig declares three problem types; a typo builds a model whose classification loss
    raises, so no training step of it could be measured. Each of the three, and null, is taken."""
    card = GOOD.replace("head: base", "head: sequence-classification").replace("family: bert", f"family: {family}")
    assert problems_of(write_card(card + "  problem_type: multi_label\n")) == [
        "models/card.yaml:7:17: config.problem_type: problem_type must be regression, single_label_classification "
        "or multi_label_classification, or null; found 'multi_label', on which transformers' classification loss raises"
    ]
    for named in ("regression", "single_label_classification", "multi_label_classification", "null"):
        config = load_card(write_card(card + f"  problem_type: {named}\n")).config
        assert config["problem_type"] == (None if named == "null" else named)
