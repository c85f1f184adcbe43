"""Page markup written in Python rather than in templates: formulas, permalinks, and the rows of a
model page's long tables (every tensor, each derivation step, each worked compute step, the grid).

A model page has hundreds of such rows; a template loop spends a dozen attribute look-ups,
escapes and macro calls on each, which made up most of a build. These functions write the
same markup, byte for byte, escaping names, labels and anchors once each (numbers need none),
and take their words from the content (``RowWords``). ``render.environment`` registers them
as filters.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable
from dataclasses import dataclass

from markupsafe import Markup, escape

from generator.analysis.checkpoint_names import Layout
from generator.counting.architecture import Block
from generator.counting.derivation import Line
from generator.counting.expr import Expr, to_mathml
from generator.counting.inventory import Tensor, TiedTensor
from generator.counting.step_totals import StepTotals
from generator.site.compute_view import ShownModule
from generator.site.content import Text
from generator.site.formats import binary
from generator.site.views import Model


@functools.lru_cache(maxsize=4096)
def formula(expr: Expr) -> Markup:
    """A formula as the pages show it: MathML in a span (written once per formula: most recur on many pages)."""
    return Markup(f'<span class="math">{to_mathml(expr)}</span>')


@dataclass(frozen=True)
class RowWords:
    """The words markup written in Python carries, from the content, escaped, with {placeholders} left to fill."""

    permalink: str  # a visible link to an element's own address, named for screen readers: {anchor}, {label}
    tied: str  # a tied slot's cell: {target} is the link to the tensor it reuses
    reuses: str  # a tied step's cell in the derivation: {targets}, joined by ``conjunction``
    conjunction: str
    saves: str  # a worked step's storage: {name}
    once: str  # after a storage the whole model keeps once
    no_variable: str  # a tensor no TensorFlow checkpoint of Google's holds
    tf_reuses: str  # a tensor whose checkpoint variable is another's: {variable}
    colon: str  # between a component's label and its first step (site.yaml ``punctuation``)
    layouts: tuple[tuple[Layout, str], ...]  # how a TensorFlow variable holds a tensor's numbers, in words

    @staticmethod
    def of(text: Text) -> RowWords:
        """The words of ``text`` (site.yaml ``rendering``), each read once per build, not once per row."""
        label = html.escape(text("permalink", label="{label}"))
        tied = html.escape(text("tied", target="{target}"), quote=False)
        reuses = html.escape(text("reuses", targets="{targets}"), quote=False)
        conjunction = html.escape(text("and"), quote=False)
        saves = html.escape(text("saves", name="{name}"), quote=False)
        once = html.escape(text("saved-once"), quote=False)
        no_variable = html.escape(text("no-variable"), quote=False)
        tf_reuses = html.escape(text("tf-reuses", variable="{variable}"), quote=False)
        colon = html.escape(text.root.section("punctuation")("colon"), quote=False)
        link = f'<a class="permalink" href="#{{anchor}}" aria-label="{label}">#</a>'
        layouts = tuple((layout, html.escape(text(f"layout-{layout.name.lower()}"), quote=False)) for layout in Layout)
        return RowWords(link, tied, reuses, conjunction, saves, once, no_variable, tf_reuses, colon, layouts)


def permalink(markup: str, anchor: str, label: str) -> Markup:
    """A permalink (``markup`` is RowWords.permalink), both values escaped."""
    return Markup(markup.format(anchor=escape(anchor), label=escape(label)))


def shape_text(shape: tuple[int, ...]) -> str:
    """A tensor's shape as the tables print it: [30,522, 768]."""
    return "[" + ", ".join(f"{d:,}" for d in shape) + "]"


def breakable(name: str) -> str:
    """An escaped name with a <wbr> after each dot and slash: a long tensor or checkpoint name breaks
    between its parts, not inside a word, where its column is narrower than the name."""
    return _with_breaks(html.escape(name))


def _with_breaks(escaped: str) -> str:
    return escaped.replace(".", ".<wbr>").replace("/", "/<wbr>")


def tensor_rows(entries: Iterable[Tensor | TiedTensor], words: RowWords) -> Markup:
    """The rows of a tensor table: name with its permalink, shape, count and role.

    A model page has hundreds of these rows: a macro call for each made up a third of the build.
    (Writing a repeated layer's other copies from its first copy's rows, with the index replaced,
    was tried: finding which copies match cost more than the rows it saved.)
    """
    cells: dict[tuple[tuple[int, ...], int, str], str] = {}  # every copy of a layer repeats them
    return Markup("".join(_tensor_row(entry, words, cells) for entry in entries))


def _tensor_row(entry: Tensor | TiedTensor, words: RowWords, cells: dict[tuple[tuple[int, ...], int, str], str]) -> str:
    """One tensor's row; ``cells`` keeps the shape, count and role cells already written."""
    escaped = html.escape(entry.name)  # plain strings: a row has no use for Markup objects
    link = words.permalink.format(anchor="t-" + escaped, label=escaped)
    shown = _with_breaks(escaped)  # breakable(name), escaped once
    head = f'<th scope="row"><code>{shown}</code> {link}</th>'
    if isinstance(entry, TiedTensor):
        target = html.escape(entry.tied_to)
        tied = words.tied.format(target=f'<a href="#t-{target}"><code>{target}</code></a>')
        role = html.escape(entry.role)
        return f'<tr class="tied" id="t-{escaped}">{head}<td colspan="2">{tied}</td><td>{role}</td></tr>\n'
    key = (entry.shape, entry.count, entry.role)
    if key not in cells:
        cells[key] = (
            f'<td class="shape">{shape_text(entry.shape)}</td><td class="n count">{entry.count:,}</td>'
            f"<td>{html.escape(entry.role)}</td></tr>\n"
        )
    return f'<tr id="t-{escaped}">{head}{cells[key]}'


def derivation_rows(lines: Iterable[Line], block: Block, words: RowWords) -> Markup:
    """The rows of a derivation table's lines: label with permalink, the formula and the numbers, the count.

    Written in Python for the reason ``tensor_rows`` is (a page derives some thirty lines, each a
    dozen look-ups through jinja). A tied line names the tensors it reuses instead of a formula.
    """
    rows = []
    for line in lines:
        anchor = f"d-{block.key}-{line.key}"
        link = permalink(words.permalink, anchor, f"{block.title}{html.unescape(words.colon)}{line.label}")
        if line.tied:
            targets = words.conjunction.join(f"<code>{escape(target)}</code>" for _, target in line.tied)
            cells = f'  <td colspan="2">{words.reuses.format(targets=targets)}</td>\n'
        else:
            cells = f"  <td>{formula(line.symbolic)}</td>\n  <td>{formula(line.substituted)}</td>\n"
        rows.append(
            f'<tr id="{escape(anchor)}">\n  <th scope="row">{escape(line.label)} {link}</th>\n'
            f'{cells}  <td class="n count">{line.value:,}</td>\n</tr>\n'
        )
    return Markup("".join(rows))


def compute_rows(modules: Iterable[ShownModule], component: str, words: RowWords) -> Markup:
    """The worked modules and ops of one component of a model's compute section, a ``<tbody>`` each.

    Written in Python for the reason ``tensor_rows`` is: a page works some eighty of these rows,
    and the template's loops spent a quarter of the page on them.
    """
    return Markup(
        "".join(
            f'<tbody id="{escape(module.anchor)}">\n{_module_rows(module, component, words)}</tbody>\n'
            for module in modules
        )
    )


def _module_rows(module: ShownModule, component: str, words: RowWords) -> str:
    """One module's rows: each product, then each storage saved; the first names it and holds its permalink."""
    label = sentence(module.label)
    link = permalink(words.permalink, module.anchor, f"{component}{html.unescape(words.colon)}{module.label}")
    rows = []
    for number, x in enumerate(module.products):
        own = x.name == module.label
        head = f"{escape(label)}{'' if own else words.colon}" if number == 0 else ""
        name = "" if own else escape(x.name)
        tail = f" {link}" if number == 0 else ""
        line = x.line
        forward = "–" if x.backward_only else f"{line.value:,}"  # the forward does not run it
        rows.append(
            f'<tr><th scope="row">{head}{name}{tail}</th><td>{formula(line.symbolic)}</td>'
            f'<td>{formula(line.substituted)}</td><td class="n count">{forward}</td>'
            f'<td class="n">{x.backward_flops:,} (× {x.backward})</td><td></td></tr>\n'
        )
    for number, k in enumerate(module.saved):
        first = number == 0 and not module.products
        head = f"{escape(label)}{words.colon}" if first else ""
        once = f" {words.once}" if k.once else ""
        tail = f" {link}" if first else ""
        saved = k.elements
        rows.append(
            f'<tr><th scope="row">{head}{words.saves.format(name=escape(k.name))}{once}{tail}</th>'
            f"<td>{formula(saved.symbolic)}</td><td>{formula(saved.substituted)}</td>"
            f'<td class="n count">{saved.value:,}</td><td></td>'
            f'<td class="n">{k.bytes["fp32"]:,} / {k.bytes["bf16"]:,}</td></tr>\n'
        )
    return "".join(rows)


def grid_rows(grid: Iterable[StepTotals]) -> Markup:
    """The compute section's rows of batch sizes and lengths: each (b, s) with its memory and FLOPs."""
    rows = []
    for g in grid:
        memory = g.training_memory
        flops = g.forward + g.backward
        rows.append(
            f'<tr id="c-grid-b{g.batch}-s{g.seq}"><th scope="row"><var>b</var> = {g.batch}, <var>s</var> = {g.seq}</th>'
            f'<td class="n count" data-value="{memory["bf16_mixed"]}">{escape(binary(memory["bf16_mixed"]))}</td>'
            f'<td class="n" data-value="{memory["fp32"]}">{escape(binary(memory["fp32"]))}</td>'
            f'<td class="n" data-value="{g.activations["bf16"]}">{g.activations["bf16"]:,}</td>'
            f'<td class="n" data-value="{flops}">{flops:,}</td></tr>\n'
        )
    return Markup("".join(rows))


def sentence(text: str) -> str:
    """A text with its first letter capitalized (the rest as written)."""
    return text[:1].upper() + text[1:]


def tf_name_rows(model: Model, words: RowWords) -> Markup:
    """The rows of the checkpoint-names table: each shown tensor beside its TensorFlow variable.

    Written in Python for the reason ``tensor_rows`` is: such a page names some thirty variables.
    """
    rows, layouts = [], dict(words.layouts)
    for group in model.groups:
        for entry in group.entries:
            name = escape(entry.name)
            found = model.tf_name(entry)
            if found is None:
                cells = f'  <td colspan="4">{words.no_variable}</td>\n'
            elif found.layout is Layout.NONE or not isinstance(entry, Tensor):  # tied: tf_name gives it NONE
                reused = words.tf_reuses.format(variable=f"<code>{breakable(found.variable)}</code>")
                cells = f'  <td colspan="2">{reused}</td><td>—</td><td>{layouts[found.layout]}</td>\n'
            else:
                cells = (
                    f"  <td><code>{breakable(found.variable)}</code></td>\n"
                    f'  <td class="shape">{shape_text(found.shape(entry.shape))}</td>\n'
                    f'  <td class="shape">{shape_text(entry.shape)}</td>\n'
                    f"  <td>{layouts[found.layout]}</td>\n"
                )
            head = f'  <th scope="row"><code>{breakable(entry.name)}</code></th>\n'
            rows.append(f'<tr id="tf-{name}">\n{head}{cells}</tr>\n')
    return Markup("".join(rows))
