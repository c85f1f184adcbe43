"""A family page's figure and its variants: one per switch setting that changes the blocks or steps drawn.

Each variant is checked against what the family declares with that one switch set against its default:
its blocks, its steps, their formulas and their tensor names. A switch that changes neither blocks nor
steps draws no variant. Every link of every figure on the page lands on an id of the page.
"""

from __future__ import annotations

import pytest

from generator.analysis.tensor_patterns import defaults, pattern_name
from generator.counting.architecture import Architecture, Family, Head, Tie
from generator.counting.derivation import block_form
from generator.counting.expr import to_text
from generator.counting.families import FAMILIES, families
from generator.site import content
from generator.site.diagram import Diagram, diagram_svg, diagram_words, in_run_order
from generator.site.pages import families as families_page


def _head(family: Family) -> Head:
    return Head.BASE if Head.BASE in family.heads else family.heads[0]


def _flipped(family: Family, switch: str) -> Architecture:
    """What the family declares for its figure's head with ``switch`` set against its default."""
    on = dict(family.decide(defaults(family)))
    return family.declared({**on, switch: not on[switch]}, _head(family))


def _steps(architecture: Architecture) -> list[tuple[str, list[str]]]:
    return [(block.key, [m.key for m in block.modules]) for block in architecture.blocks]


def _check_drawn(family: Family, diagram: Diagram, architecture: Architecture) -> None:
    """The figure has the architecture's blocks in run order, and each block its steps, formulas and tensor names."""
    order = tuple(s.name for s in family.symbols)
    blocks = in_run_order(architecture.blocks)
    assert [g.anchor for g in diagram.groups] == [f"tensors-{b.key}" for b in blocks]
    for group, block in zip(diagram.groups, blocks, strict=True):
        form = block_form(block, order)
        assert group.formula == to_text(form.expression)
        rows = [(r.anchor, r.label, r.formula, bool(r.tied)) for r in group.rows]
        registered = [
            (
                "t-" + pattern_name(block, module, module.params[0]).replace("{", "%7B").replace("}", "%7D"),
                module.label,
                "" if line.formula.is_zero() else to_text(line.symbolic),
                all(isinstance(p, Tie) for p in module.params),
            )
            for module, line in zip(block.modules, form.lines, strict=True)
        ]
        # In forward order where the block declares its flow (test_diagram_flow checks the order), else as registered.
        assert sorted(rows) == sorted(registered) if group.flowed else rows == registered


def _only(architecture: Architecture, other: Architecture) -> list[str]:
    """The titles of the blocks, and labels of the steps of shared blocks, that ``other`` does not declare."""
    theirs = dict(_steps(other))
    blocks = {b.key: b for b in architecture.blocks}
    found = []
    for key in (b.key for b in in_run_order(architecture.blocks)):
        block = blocks[key]
        if key not in theirs:
            found.append(block.title)
        else:
            found += [m.label for m in block.modules if m.key not in theirs[key]]
    return found


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_variant_draws_what_the_family_declares_with_its_switch_set_the_other_way(name: str) -> None:
    family = families("en")[name]
    default = family.architecture(defaults(family), _head(family))
    _check_drawn(family, families_page.family_diagram(family), default)
    variants = {v.switch: v for v in families_page.switch_variants(family)}
    on = family.decide(defaults(family))
    for switch in family.switches:
        flipped = _flipped(family, switch.name)
        if _steps(flipped) == _steps(default):  # the same blocks and steps: nothing new to draw
            assert switch.name not in variants, (name, switch.name)
            continue
        variant = variants[switch.name]
        assert (variant.on, variant.diagram.setting) == (not on[switch.name], (switch.name, not on[switch.name]))
        _check_drawn(family, variant.diagram, flipped)
        setting = {**on, switch.name: variant.on}
        named = [  # the switches that draw no variant of their own but change this one's steps
            other.name
            for other in family.switches
            if other.name not in variants
            and _steps(family.declared({**setting, other.name: not setting[other.name]}, _head(family)))
            != _steps(flipped)
        ]
        assert list(variant.also) == named, (name, switch.name)
        assert (_only(flipped, default), _only(default, flipped)) == (list(variant.added), list(variant.dropped))
    assert list(variants) == [s.name for s in family.switches if s.name in variants]  # in declaration order


def test_mobilebert_draws_its_layers_with_and_without_the_bottleneck() -> None:
    family = families("en")["mobilebert"]
    variants = {v.ident: v.diagram for v in families_page.switch_variants(family)}
    assert list(variants) == [
        "trigram-off",
        "bottleneck-off",
        "shared_bottleneck-off",
        "layer_norm-on",
        "stacked_ffn-off",
        "pooler_dense-off",
    ]

    def layer(diagram: Diagram) -> list[str]:
        (found,) = [g for g in diagram.groups if g.anchor == "tensors-layer"]
        return [row.label for row in found.rows]

    with_bottleneck = layer(families_page.family_diagram(family))
    assert "bottleneck in (H to B)" in with_bottleneck and "bottleneck out (B to H)" in with_bottleneck
    assert not [label for label in layer(variants["bottleneck-off"]) if "bottleneck" in label]
    (off,) = [v for v in families_page.switch_variants(family) if v.switch == "bottleneck"]
    assert off.added == () and off.dropped == (
        "bottleneck out (B to H)",
        "bottleneck out NoNorm",
        "bottleneck in (H to B)",
        "bottleneck in NoNorm",
        "query-key bottleneck (H to B)",
        "query-key bottleneck NoNorm",
    )


def test_deberta_v2_draws_its_relative_table_with_relative_attention_on() -> None:
    """Its config class leaves relative attention off, and every published checkpoint turns it on."""
    family = families("en")["deberta-v2"]
    default = families_page.family_diagram(family)
    assert "tensors-relative" not in [g.anchor for g in default.groups]
    (relative,) = [v for v in families_page.switch_variants(family) if v.switch == "relative"]
    assert relative.on is True and relative.also == ("c2p", "p2c")  # their projections need relative attention
    anchors = [g.anchor for g in relative.diagram.groups]
    assert anchors.index("tensors-relative") + 1 == anchors.index("tensors-layer")  # read by every layer
    svg = diagram_svg(relative.diagram, diagram_words(content.load("site")), ident="diagram-relative-on")
    assert '<title id="diagram-relative-on-title">' in svg and svg.count('class="reads"') == 1
    assert "with the switch relative on and every other switch at its default" in svg


def test_a_family_whose_switches_change_only_counts_draws_no_variant() -> None:
    """EuroBERT's switches add or drop biases and norms' weights: the same steps, other formulas."""
    family = families("en")["eurobert"]
    assert family.switches and families_page.switch_variants(family) == ()
