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
    *("formula", "switch", "setting", "heads", "size", "lacked"),
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
    *("family-title", "family-desc", "family-block", "family-one-copy", "family-applied"),
    *("variant-title", "variant-desc", "switch-on", "switch-off"),
    *("absent", "pair-title", "pair-side", "pair-desc"),  # a comparison's (diagram_pair)
    *("legend-reshaped", "legend-lacked", "legend-shared"),
)


def describe(diagram: Diagram, words: Text) -> str:
    """The figure in words: every block with its count and share, then what it shares and ties."""
    if diagram.symbolic:
        listed = words("separator").join(
            words("family-block", title=g.title, formula=g.subtotal_formula or g.formula) for g in diagram.groups
        )
        if diagram.setting is not None:
            return words("variant-desc", title=diagram.title, blocks=listed, **setting_words(diagram.setting, words))
        return words("family-desc", title=diagram.title, blocks=listed)
    blocks = []
    for group in diagram.groups:
        share = formats.percent(group.subtotal, diagram.total)
        key = "block-copies" if group.repeat and group.copies != 1 else "block"
        values = {"title": group.title, "count": formats.count(group.subtotal), "share": share}
        blocks.append(words(key, copies=formats.count(group.copies), **values))
    sentences = [words("desc", title=diagram.title, blocks=words("separator").join(blocks))]
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
