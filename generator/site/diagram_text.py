"""The architecture figure's words: the texts it reads from site.yaml, checked, and the figure told in words.

The ``<desc>`` of every figure says what it draws, block by block, with its counts and shares, and
what it shares and ties; a family's figure says it in the config's symbols (``diagram.py`` draws).
"""

from __future__ import annotations

from generator.site import formats
from generator.site.content import Text
from generator.site.diagram_model import Diagram

# Every placeholder a text of the figure may use, each filled with its own name: to check the words.
PLACEHOLDERS = (
    *("title", "total", "copies", "symbols", "symbol", "times", "count", "share", "slot", "target", "blocks"),
    *("formula", "switch", "setting", "heads", "size", "lacked", "step", "value", "meaning"),
    *("before", "after", "adds", "steps", "skipped"),
)


def diagram_words(text: Text) -> Text:
    """The figure's words (site.yaml: diagram), every text read and its placeholders checked, whether or
    not this model's figure uses it: a text no model uses is then no unused text, and a bad one fails early."""
    words = text.section("diagram")
    for key in KEYS:
        words(key, block="block", **{name: name for name in PLACEHOLDERS})
    return words


KEYS = (
    *("title", "heading-total", "repeat", "applied", "applied-many", "copies", "count", "tied", "tie"),
    *("read-by", "block", "block-copies", "desc", "desc-shared", "desc-read-by", "desc-tie", "separator"),
    *("step-copies", "heads", "lacked-copies", "desc-lacked-copies"),
    *("desc-lacked", "desc-reshaped", "sentence-join"),
    *("family-title", "family-desc", "family-block", "family-one-copy", "family-each", "family-applied"),
    *("variant-title", "variant-desc", "switch-on", "switch-off"),
    *("absent", "pair-title", "pair-side", "pair-total", "pair-desc"),  # a comparison's (diagram_pair)
    *("legend-reshaped", "legend-lacked", "legend-shared", "legend-join"),
    *("width-symbol", "family-width-symbol", "desc-forward", "desc-registered", "desc-residual", "desc-residual-end"),
    *("desc-adds-input", "desc-adds-step", "desc-adds-sum", "desc-sum", "desc-sum-end", "sequence", "list"),
    # diagram_marks's
    *(
        "join-from-input",
        "join-from-input-short",
        "join-from-layer-input",
        "join-from-step",
        "join-from-sum",
        "join-residual",
        "join-sum",
    ),
)


def describe(diagram: Diagram, words: Text) -> str:
    """The figure in words: every block with its count and share, the order of its steps and where its sums
    join, then what it shares and ties."""
    flowed = _flow_sentences(diagram, words)
    if diagram.symbolic:
        listed = words("separator").join(
            words("family-block", title=g.title, formula=g.subtotal_formula or g.formula) for g in diagram.groups
        )
        if diagram.setting is not None:
            said = words("variant-desc", title=diagram.title, blocks=listed, **setting_words(diagram.setting, words))
        else:
            said = words("family-desc", title=diagram.title, blocks=listed)
        return words("sentence-join").join((said, *flowed))
    blocks = []
    for group in diagram.groups:
        share = formats.percent(group.subtotal, diagram.total)
        key = "block-copies" if group.repeat and group.copies != 1 else "block"
        values = {"title": group.title, "count": formats.count(group.subtotal), "share": share}
        blocks.append(words(key, copies=formats.count(group.copies), **values))
    sentences = [words("desc", title=diagram.title, blocks=words("separator").join(blocks)), *flowed]
    for group in diagram.groups:
        if group.read_by:
            sentences.append(words("desc-read-by", title=group.title, block=group.read_by))
        if group.applied is not None:
            symbol, times = group.applied
            sentences.append(words("desc-shared", title=group.title, symbol=symbol, times=formats.count(times)))
    holders = {name: row for group in diagram.groups for row in group.rows for name in row.names}
    for group in diagram.groups:
        for row in group.rows:
            for target in dict.fromkeys(row.tied):
                if target in holders:
                    sentences.append(words("desc-tie", slot=row.label, target=holders[target].label))
    for group in diagram.groups:
        if group.lacked_copies:
            lacked, copies = formats.count(group.lacked_copies), formats.count(group.copies)
            sentences.append(
                words("desc-lacked-copies", title=diagram.against, block=group.title, lacked=lacked, copies=copies)
            )
    for key, kind in (("desc-lacked", "lacked"), ("desc-reshaped", "reshaped")):
        steps = dict.fromkeys(row.label for group in diagram.groups for row in group.rows if getattr(row, kind))
        if steps:
            sentences.append(words(key, title=diagram.against, blocks=words("separator").join(steps)))
    return words("sentence-join").join(sentences)


def setting_words(setting: tuple[str, bool], words: Text) -> dict[str, str]:
    """A switch and its value as the figure's words name them: ``bottleneck`` and "off"."""
    name, on = setting
    return {"switch": name, "setting": words("switch-on" if on else "switch-off")}


def _flow_sentences(diagram: Diagram, words: Text) -> list[str]:
    """The order of each block's steps, forward or as registered, and where each of its sums joins."""
    sentences = []
    several = [g for g in diagram.groups if sum(not r.run for r in g.rows) > 1]
    for key, flowed in (("desc-forward", True), ("desc-registered", False)):
        titles = [g.title for g in several if g.flowed is flowed]
        if titles:
            sentences.append(words(key, blocks=words("separator").join(titles)))
    for group in diagram.groups:
        for joined in group.joins:
            end = "" if joined.after else "-end"
            if not joined.residual:
                steps = words("list").join(label for _, label in joined.adds)
                sentences.append(words(f"desc-sum{end}", block=group.title, steps=steps, after=joined.after))
                continue
            adds = words("separator").join(
                words(f"desc-adds-{kind}", block=group.title, step=label) for kind, label in joined.adds
            )
            skipped = words("sequence").join(joined.skipped)
            said = {"block": group.title, "before": joined.before, "after": joined.after, "skipped": skipped}
            sentences.append(words(f"desc-residual{end}", adds=adds, **said))
    return sentences
