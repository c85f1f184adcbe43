"""A derivation block's lines in runs: the lines of one attention module, of the feed-forward, each run of
several with an anchor a lecture's notes can link to, and a heading."""

from __future__ import annotations

from dataclasses import dataclass

from generator.counting.architecture import Part, holder
from generator.counting.derivation import BlockDerivation, Line
from generator.counting.texts import attention_title, part_titles
from generator.site.views import Model


@dataclass(frozen=True)
class LineRun:
    """Consecutive lines of a block's derivation that belong to one part, and for attention to one attention
    module (the 2017 decoder's self-attention, then its encoder-decoder attention).

    A run of two or more attention or feed-forward lines gets its own anchor, ``d-<block>-<part>``
    (``d-layer-feed-forward`` covers feed-forward in and out), a later run of the same
    part in the block ``-2``, ``-3``, ... and a title from content/ (``title``: the attention's, or the part's).
    """

    anchor: str | None
    part: Part | None
    lines: tuple[Line, ...]
    title: str = ""  # only where there is an anchor: what the run's heading and the page's contents call it


# A run's key: its part, and for attention the module that holds it (``architecture.holder``).
RunKey = tuple[Part | None, str | None]


def line_runs(model: Model, block: BlockDerivation) -> tuple[LineRun, ...]:
    """A block's lines cut where the part or the attention module changes, each run of several lines with its
    anchor and title."""
    parts = model.tensor_parts
    keys: list[RunKey] = []
    for line, module in zip(block.lines, block.block.modules, strict=True):
        part = next((parts[n] for n in line.names if n in parts), None)
        keys.append((part, holder(module) if part is Part.ATTENTION else None))
    _take_in(keys, [holder(module) for module in block.block.modules])
    runs: list[tuple[RunKey, list[Line]]] = []
    for key, line in zip(keys, block.lines, strict=True):
        if runs and key[0] is not None and runs[-1][0] == key:
            runs[-1][1].append(line)
        else:
            runs.append((key, [line]))
    seen: dict[Part, int] = {}
    result = []
    for (part, attention), lines in runs:
        if part is None or part not in (Part.ATTENTION, Part.FEED_FORWARD) or len(lines) < 2:
            result.append(LineRun(None, part, tuple(lines)))
            continue
        seen[part] = seen.get(part, 0) + 1
        suffix = "" if seen[part] == 1 else f"-{seen[part]}"
        family = model.card.family
        title = part_titles(family.language)[part] if attention is None else attention_title(family, attention)
        result.append(LineRun(f"d-{block.block.key}-{part.value}{suffix}", part, tuple(lines), title))
    return tuple(result)


def _take_in(keys: list[RunKey], holders: list[str]) -> None:
    """Give an attention's run the lines its module registers between two of its attention lines (a LayerNorm
    registered before the output projection), so the run stays whole; a norm registered after the last
    attention line stays outside it."""
    for key in dict.fromkeys(k for k in keys if k[0] is Part.ATTENTION):
        first = keys.index(key)
        last = len(keys) - 1 - keys[::-1].index(key)
        if all(h == key[1] for h in holders[first : last + 1]):
            keys[first : last + 1] = [key] * (last + 1 - first)
