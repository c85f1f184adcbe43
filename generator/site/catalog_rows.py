"""The rows of the pages with a row for every model, written in Python.

At a thousand models a template's loop over them was most of such a page's time (each value
looked up, filtered and escaped through jinja's runtime); these write the same markup, byte
for byte, with the words the template gives them, so that no sentence lives here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from markupsafe import Markup, escape

from generator.counting.architecture import Kind
from generator.site.formats import binary, count, decimal, percent, reading
from generator.site.page import LANGUAGE
from generator.site.views import COMPARED_SYMBOLS, Summary, rounded


def _row_data(model: Summary, title: str) -> str:
    """What the table scripts sort and filter a model's row by (``row_data`` in _macros.html)."""
    return (
        f' data-family="{escape(model.card.family.name)}" data-total="{model.total}"'
        f' data-l="{model.symbol_value("L") or 0}" data-h="{model.symbol_value("H") or 0}" data-name="{title}"'
    )


def index_rows(
    models: Iterable[Summary], root: str, symbols: Iterable[tuple[str, str]], language: str = LANGUAGE
) -> Markup:
    """The home page's row for each model: its link, count, rounded count, family, head and ``symbols``.

    The rounded count is the total's reading where ``language`` has one (1.09 亿), else as papers print it."""
    root, names = escape(root), [name for name, _ in symbols]
    out = []
    for model in models:
        card, link = model.card, escape(model.id)
        title = escape(card.title)
        cells = [
            f'<tr id="{link}"{_row_data(model, title)}>',
            f'  <th scope="row"><a href="{root}models/{link}/index.html">{title}</a></th>',
            f'  <td class="n count">{model.total:,}</td>',
            f'  <td class="n">{reading(model.total, language) or rounded(model.total)}</td>',
            f"  <td>{escape(card.family.title)}</td>",
            f"  <td>{escape(card.head.value)}</td>",
        ]
        cells += [f'  <td class="n">{count(model.symbol_value(name))}</td>' for name in names]
        cells.append("</tr>")
        out.append("\n".join(cells))
    return Markup("\n".join(out))  # the template ends the last line


def compare_rows(models: Iterable[Summary], root: str, words: Mapping[str, str], language: str = LANGUAGE) -> Markup:
    """The comparison's row for each model: its link, total, embedding share, family, head, compared
    symbols, subtotals by component, and its training step's FLOPs per token and memory.

    ``words``: ``forward`` (before the forward's FLOPs), ``at`` (after a figure taken at s = P, with
    ``{seq}``), ``bytes`` (after a count of bytes), ``unmeasured`` (a step no class measures) and
    ``about`` (the total's reading, with ``%(reading)s``, for a ``language`` that has one: 约 1.09 亿)."""
    root = escape(root)
    forward, per_bytes = escape(words["forward"]), escape(words["bytes"])
    unmeasured = f'<td class="not-measured">{escape(words["unmeasured"])}</td>'
    out = []
    for model in models:
        card, step, link = model.card, model.comparison, escape(model.id)
        title = escape(card.title)
        data = _row_data(model, title)
        # Numbers need no escaping: digits, separators, units and signs, never a character HTML reserves.
        if step is not None:
            plain = decimal(step.training_per_token, "")
            data += f' data-flops="{plain}" data-memory="{step.training_memory}"'
        cells = [
            f'<tr id="{link}"{data}>',
            f'  <th scope="row"><a href="{root}models/{link}/index.html">{title}</a></th>',
            f'  <td class="n count"><strong>{model.total:,}</strong>{_about(model.total, words, language)}</td>',
            f'  <td class="n">{percent(model.embedding_share)}</td>',
            f"  <td>{escape(card.family.title)}</td>",
            f"  <td>{escape(card.head.value)}</td>",
        ]
        cells += [f'  <td class="n">{count(model.symbol_value(name))}</td>' for name, _ in COMPARED_SYMBOLS]
        cells += [f'  <td class="n">{count(model.subtotals[kind])}</td>' for kind in Kind]
        if step is not None:
            at = escape(words["at"].format(seq=step.seq)) if step.clamped else ""
            cells.append(
                f'  <td class="n flops" data-value="{plain}">{decimal(step.training_per_token)}'
                f'<br><span class="bytes">{forward} {decimal(step.forward_per_token)}{at}</span></td>'
            )
            cells.append(
                f'  <td class="n memory" data-value="{step.training_memory}">{binary(step.training_memory)}'
                f'<br><span class="bytes">{step.training_memory:,} {per_bytes}{at}</span></td>'
            )
        else:
            cells.append(f"  {unmeasured}{unmeasured}")
        cells.append("</tr>")
        out.append("\n".join(cells))
    return Markup("\n".join(out))  # the template ends the last line


def _about(total: int, words: Mapping[str, str], language: str) -> str:
    """The total's reading under it, in the page's words; nothing for a language that has none."""
    said = reading(total, language)
    return f'<br><span class="bytes">{escape(words["about"] % {"reading": said})}</span>' if said else ""


def memory_rows(models: Iterable[Summary], root: str, words: Mapping[str, str]) -> Markup:
    """The row of the parameters' memory for each model: its link (to its memory section), its count,
    the bytes at each precision and for training with Adam. ``words``: ``bytes`` (after a count of bytes)."""
    root, per_bytes = escape(root), escape(words["bytes"])
    out = []
    for model in models:
        memory, link = model.memory, escape(model.id)
        cells = [
            f'<tr id="memory-{link}">',
            f'  <th scope="row"><a href="{root}models/{link}/index.html#memory">{escape(model.card.title)}</a></th>',
            f'  <td class="n count">{model.total:,}</td>',
            "".join(  # the template's loop left these cells on one line, unindented, with the next after them
                f'<td class="n">{binary(f.bytes)}<br><span class="bytes">{f.bytes:,} {per_bytes}</span></td>'
                for f in memory.weights
            )
            + f'  <td class="n">{binary(memory.training.bytes)}<br>'
            f'<span class="bytes">{memory.training.bytes:,} {per_bytes}</span></td>',
            "</tr>",
        ]
        out.append("\n".join(cells))
    return Markup("\n".join(out))  # the template ends the last line


def lora_rows(models: Iterable[Summary], root: str, words: Mapping[str, str]) -> Markup:
    """The row of LoRA for each model, as its page's fine-tuning section has it: its link (to that section), what
    trains and its share, the targets, then LoRA's beside full fine-tuning's: the parameters' memory with Adam
    and a step's training memory, both in bf16 mixed precision, and the second's ratio.

    ``words``: ``bytes`` (after a count of bytes); ``list`` (between two targets); ``own`` (after the targets
    of a card's own setting, with ``%(rank)s``); ``unstepped`` (where the steps are not derived); a refused
    row's sentence, markup with ``%(family)s``, by the refusal's word (``targets``, ``unbuilt``; ``other`` for
    any other)."""
    root, per_bytes = escape(root), escape(words["bytes"])

    def size(value: int) -> str:
        exact = f'<span class="bytes">{value:,} {per_bytes}</span>'
        return f'<td class="n" data-value="{value}">{binary(value)}<br>{exact}</td>'

    out = []
    for model in models:
        lora, link, title = model.lora, escape(model.id), escape(model.card.title)
        assert lora is not None  # a summary's, from Model.numbers
        anchor = "fine-tuning" if lora.refusal == "unbuilt" else "fine-tuning-lora"  # no method rows without peft
        cells = [
            f'<tr id="lora-{link}">',
            f'  <th scope="row"><a href="{root}models/{link}/index.html#{anchor}">{title}</a></th>',
        ]
        if lora.refusal:
            said = Markup(words.get(lora.refusal, words["other"])) % {"family": model.card.family.title}
            cells.append(f'  <td colspan="8" class="refusal">{said}</td>')
        else:
            targets = str(words["list"]).join(f"<code>{escape(t)}</code>" for t in lora.targets)
            own = f" {escape(words['own'] % {'rank': lora.rank})}" if lora.own else ""
            cells += [  # the count beside the name: on a phone only the first columns fit
                f'  <td class="n count" data-value="{lora.trainable}">{lora.trainable:,}</td>',
                f'  <td class="n">{percent(lora.trainable, lora.total)}</td>',
                f"  <td>{targets}{own}</td>",
                "  " + "".join(size(v) for v in (lora.memory["bf16_mixed"], lora.full["bf16_mixed"])),
            ]
            if lora.step is None:
                cells.append(f'  <td colspan="3" class="refusal">{escape(words["unstepped"])}</td>')
            else:
                cells += ["  " + "".join(size(v) for v in lora.step), f'  <td class="n">{percent(*lora.step)}</td>']
        cells.append("</tr>")
        out.append("\n".join(cells))
    return Markup("\n".join(out))  # the template ends the last line
