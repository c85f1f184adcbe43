"""The architecture figure's order and sums, checked against each block's declared data flow.

For every catalog card, sampled configs of every family and every family's own figures: a block that
declares its flow draws its steps in an order the data can run in, so its norms in forward order, and
draws exactly its declared sums of two or more activations, each after all it adds and before all that
reads it, each skip leaving after what it carries is written. A block without a flow keeps its
registration order and draws no sum. The SVG holds one ⊕ per sum and one skip per branch.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_diagram import CATALOG, sampled_cards

from generator.analysis.tensor_patterns import defaults, pattern_name
from generator.counting.architecture import Block, Head, Module, Part
from generator.counting.families import FAMILIES, families, family_in
from generator.site import content
from generator.site.diagram import Diagram, Group, diagram_of, diagram_svg, diagram_words, step_anchor
from generator.site.diagram_flow import is_declared
from generator.site.pages import families as families_page
from generator.site.pages.families import tensor_anchor
from generator.site.soft_space import SOFT_SPACE
from generator.site.views import model_of

WORDS = diagram_words(content.load("site"))


def upstream(block: Block) -> Callable[[str], set[str]]:
    """The activations each name is computed from in the block, itself included, through every item and join."""
    reads = {item.writes: item.reads for item in (*block.modules, *block.ops, *block.joins) if item.writes}
    found: dict[str, set[str]] = {}

    def of(name: str) -> set[str]:
        if name not in found:
            found[name] = {name}.union(*(of(read) for read in reads.get(name, ())))
        return found[name]

    return of


def check_block(block: Block, group: Group, anchor: Callable[[Module], str]) -> None:
    """A block's drawn steps and sums against its declared flow."""
    where = (block.key, group.anchor)
    by_anchor = {anchor(m): m for m in block.modules}
    steps = [(n, by_anchor[r.anchor]) for n, r in enumerate(group.rows) if r.anchor in by_anchor and not r.run]
    assert sorted(m.key for _, m in steps) == sorted(m.key for m in block.modules), where
    summed = [j for j in block.joins if len(j.reads) > 1]
    if not is_declared(block):
        assert [m.key for _, m in steps] == [m.key for m in block.modules] and group.joins == (), where
        assert not group.flowed, where
        return
    assert group.flowed, where
    of = upstream(block)
    # No drawn step reads what a step drawn below it writes: the order is one the data can run in.
    for i, (_, first) in enumerate(steps):
        for _, later in steps[i + 1 :]:
            assert not later.writes or not any(later.writes in of(r) for r in first.reads), (
                where,
                first.key,
                later.key,
            )
    norms = [m for _, m in steps if m.part is Part.NORMS]
    for i, first in enumerate(norms):  # the norms in forward order, said on its own
        assert not any(n.writes in of(r) for n in norms[i + 1 :] for r in first.reads), (where, first.key)
    # Exactly the declared sums, each between what it adds and what reads it.
    assert sorted(j.writes for j in group.joins) == sorted(j.writes for j in summed), where
    joins = {j.writes: j for j in summed}
    for joined in group.joins:
        join = joins[joined.writes]
        inputs = set().union(*(of(r) for r in join.reads))
        for row, module in steps:
            if module.writes and module.writes in inputs:
                assert row < joined.gap, (where, joined.writes, module.key)
            if any(joined.writes in of(r) for r in module.reads):
                assert row >= joined.gap, (where, joined.writes, module.key)
        assert len(joined.branches) in (len(join.reads) - 1, len(join.reads)), (where, joined.writes)
        for gap, _ in joined.branches:  # a skip leaves at or above its ⊕
            assert gap <= joined.gap, (where, joined.writes)


def check_svg(diagram: Diagram) -> None:
    """One ⊕ a sum and one skip a branch, in each layout."""
    for width in (360, 600):
        svg = diagram_svg(diagram, WORDS, width=width)
        joins = [j for g in diagram.groups for j in g.joins]
        assert svg.count('<g class="join">') == len(joins), diagram.title
        assert len(re.findall(r'class="skip-line"', svg)) == sum(len(j.branches) for j in joins), diagram.title


def check_model(card_id: str, diagram: Diagram, blocks: tuple[Block, ...]) -> None:
    by_key = {f"d-{b.key}": b for b in blocks}
    for group in diagram.groups:
        block = by_key[group.anchor]
        check_block(block, group, lambda m, b=block: step_anchor(b.key, m.key))  # type: ignore[misc]
    check_svg(diagram)


@pytest.mark.slow  # every catalog card's figure: some 5 s
def test_every_catalog_cards_figure_draws_its_declared_sums_in_forward_order() -> None:
    for card in CATALOG:
        model = model_of(card)
        check_model(card.id, diagram_of(model), card.family.architecture(card.config, card.head).blocks)


@pytest.mark.slow  # the sampled configs' figures, without their pages
def test_every_sampled_configs_figure_draws_its_declared_sums_in_forward_order(tmp_path: Path) -> None:
    cards = sampled_cards(tmp_path)
    assert {c.family.name for c in cards} == {n for n, f in FAMILIES.items() if f.ground_truth is not None}
    for card in cards:
        check_model(card.id, diagram_of(model_of(card)), card.family.architecture(card.config, card.head).blocks)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_familys_figures_draw_their_declared_sums_in_forward_order(name: str) -> None:
    family = families("en")[name]
    head = Head.BASE if Head.BASE in family.heads else family.heads[0]
    drawn = [(families_page.family_diagram(family), family.architecture(defaults(family), head))]
    on = dict(family.decide(defaults(family)))
    drawn += [(v.diagram, family.declared({**on, v.switch: v.on}, head)) for v in families_page.switch_variants(family)]
    for diagram, architecture in drawn:
        by_key = {f"tensors-{b.key}": b for b in architecture.blocks}
        for group in diagram.groups:
            block = by_key[group.anchor]
            check_block(block, group, lambda m, b=block: tensor_anchor(pattern_name(b, m, m.params[0])))  # type: ignore[misc]
        check_svg(diagram)


def rows_of(card_id: str, key: str) -> list[str]:
    """A card's block as drawn: each step's label, a sum as "+"."""
    diagram = diagram_of(model_of(next(c for c in CATALOG if c.id == card_id)))
    (group,) = [g for g in diagram.groups if g.anchor == f"d-{key}"]
    drawn = [r.label for r in group.rows]
    for joined in reversed(group.joins):
        drawn.insert(joined.gap, "+")
    return drawn


def test_bert_sums_then_normalizes_and_albert_runs_its_output_layernorm_last() -> None:
    post_norm = [
        *("self-attention", "query", "key", "value", "attention output", "+", "attention LayerNorm"),
        *("feed-forward", "feed-forward in", "feed-forward out", "+", "output LayerNorm"),
    ]
    assert rows_of("bert-base-uncased", "layer") == post_norm
    assert rows_of("albert-base-v2", "layer") == post_norm  # registered first, run last
    tables = ["token embeddings", "position embeddings", "segment embeddings", "+", "embedding LayerNorm"]
    assert rows_of("bert-base-uncased", "embeddings") == tables


def test_a_pre_norm_layer_normalizes_first_and_its_second_skip_leaves_after_the_first_sum() -> None:
    assert rows_of("xlm-roberta-xl", "layer") == [
        *("LayerNorm before attention", "self-attention", "query", "key", "value", "attention output", "+"),
        *("LayerNorm before the feed-forward network", "feed-forward", "feed-forward in", "feed-forward out", "+"),
    ]
    diagram = diagram_of(model_of(next(c for c in CATALOG if c.id == "xlm-roberta-xl")))
    (layer,) = [g for g in diagram.groups if g.anchor == "d-layer"]
    first, second = layer.joins
    assert first.branches == ((0, 0),) and first.adds == (("input", ""),)  # the layer's input, past its norm
    assert second.branches == ((first.gap, 1),) and second.adds == (("sum", ""),)  # right below the first ⊕
    svg = diagram_svg(diagram, WORDS)
    assert "the sum adds back the encoder layer&#x27;s input, which skips the LayerNorm before attention" in svg


def test_bert_says_where_its_residuals_join_in_both_editions() -> None:
    card = next(c for c in CATALOG if c.id == "bert-base-uncased")
    svg = diagram_svg(diagram_of(model_of(card)), WORDS)
    assert (
        "In the encoder layer, a residual joins after the self-attention: the sum adds back the encoder layer&#x27;s"
        " input, which skips the self-attention. The attention LayerNorm follows it." in svg
    )
    assert ">residual from attention LayerNorm</text>" in svg and ">sum of the 3 outputs above</text>" in svg
    assert ">residual from the layer&#x27;s input</text>" in svg
    chinese = dataclasses.replace(card, family=family_in(card.family.name, "zh"), language="zh")
    svg = diagram_svg(diagram_of(model_of(chinese)), diagram_words(content.load("site", "zh")))
    # The soft spaces beside a value are resolved when the page is tidied; here they are still marks.
    said = svg.replace(SOFT_SPACE, "")
    assert (
        "在编码器层中，残差连接在自注意力之后汇入：编码器层的输入绕过自注意力，在这里加回。之后是注意力之后的层归一化。"
        in said
    )
    assert ">残差连接：加上注意力之后的层归一化的输出</text>" in said
