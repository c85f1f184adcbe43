"""Machine-readable views of an inventory: JSON and CSV, in ``named_parameters()`` order."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from generator.counting.compute import Compute
from generator.counting.inventory import Inventory, Tensor, TiedTensor
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Poly

# What a model's files hold after its id, family and head, remembered for the same tensors (and compute): a shape's,
# shared by the cards of that shape (views.model_of), is written once.
_MEMO = 16
_json_bodies: IdentityMemo[tuple[Tensor | TiedTensor, ...], tuple[Compute | None, str]] = IdentityMemo(_MEMO)
_csv_texts: IdentityMemo[tuple[Tensor | TiedTensor, ...], str] = IdentityMemo(_MEMO)


def to_json(inventory: Inventory, compute: Compute | None) -> str:
    """The inventory as JSON: id, family, head, class, total, tensors and tied slots, and the compute
    (``comparison_step.compute_of``: counted once for a model's page and its JSON; null where there is none)."""
    card = {"id": inventory.card.id, "family": inventory.card.family.name, "head": inventory.card.head.value}
    found = _json_bodies.get(inventory.entries)
    if found is None or found[0] is not compute:
        data = {
            "class": inventory.class_name,
            "total": inventory.total,
            "tensors": [_tensor_json(t) for t in inventory.tensors],
            "tied": [_encode({"name": t.name, "tied_to": t.tied_to}) for t in inventory.tied],
        }
        body = [*_json_lines(data), _compute_line(None if compute is None else compute_json(compute))]
        found = _json_bodies.keep(inventory.entries, (compute, ",\n".join(body)))
    return "{\n" + ",\n".join([*_json_lines(card), found[1]]) + "\n}\n"


def compute_json(compute: Compute) -> dict[str, Any]:
    """Each figure of a training step as a polynomial in b and s with the card's numbers put in.

    ``training_memory_*`` and ``activations_*`` hold for every b and s but 1; at b = 1 add the
    ``batch_one_*`` of the same precision (fp32 for fp32, bf16 for bf16 mixed), and at s = 1 take
    off its ``seq_one_*``.
    """
    # Adam's weights, gradients and moments do not depend on b and s: the training memory less
    # the activations at any point is that constant (StepTotals.training_memory holds the rule).
    totals = compute.at(2, 1)
    states = {name: totals.training_memory[name] - totals.activations[p] for name, p in MEMORY.items()}
    polys = {
        "forward": compute.forward,
        "backward": compute.backward,
        **{f"activations_{p}": compute.activations(p) for p in PRECISIONS},
        **{f"batch_one_{p}": compute.saved_bytes(p).batch_one for p in PRECISIONS},
        **{f"seq_one_{p}": compute.saved_bytes(p).seq_one for p in PRECISIONS},
        **{f"training_memory_{n}": compute.activations(p) + states[n] for n, p in MEMORY.items()},
    }
    found: dict[str, Any] = {name: _terms(compute.in_batch(poly), compute) for name, poly in polys.items()}
    if compute.per_step:  # a step symbol's value, in the calculator's condition language (step_symbols.py)
        found["step_symbols"] = {name: value.to_json() for name, value in compute.per_step}
    return found


PRECISIONS = ("fp32", "bf16")
MEMORY = {"fp32": "fp32", "bf16_mixed": "bf16"}  # each training memory and the activations' precision in it


def _terms(poly: Poly, compute: Compute) -> list[dict[str, int]]:
    """A polynomial in b and s as terms with both exponents written out, constant first.

    A step symbol's exponent (a padded length's) is written too, only where it is not 0."""
    stepped = {name for name, _ in compute.per_step}
    terms = []
    for mono, coefficient in poly.terms:
        powers = dict(mono)
        if set(powers) - {"b", "s"} - stepped:
            raise ValueError(f"a figure still holds a config symbol after the card's numbers: {sorted(powers)}")
        term = {"b": powers.get("b", 0), "s": powers.get("s", 0)}
        term.update((name, powers[name]) for name in sorted(stepped) if name in powers)
        terms.append({**term, "coefficient": coefficient})
    return sorted(terms, key=lambda t: tuple(t.values()))


# One encoder for every value: json.dumps with options builds a new encoder on each call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def _tensor_json(tensor: Tensor) -> str:
    """One tensor's object, written as the encoder writes it but without building a dict first
    (a card has hundreds of tensors): {"name": ..., "shape": [...], "count": ..., "component": ...}."""
    shape = ", ".join(map(str, tensor.shape))
    return (
        f'{{"name": {_encode(tensor.name)}, "shape": [{shape}], "count": {tensor.count}, '
        f'"component": {_encode(tensor.component)}}}'
    )


def dump_json(data: dict[str, Any], *, compute: dict[str, list[dict[str, int]]] | None = None) -> str:
    """JSON with one key per line and one list item per line: small, diffable, greppable.

    List items are already JSON text; ``compute`` comes last, one figure a line (null: not measured).
    """
    return "{\n" + ",\n".join([*_json_lines(data), _compute_line(compute)]) + "\n}\n"


def _json_lines(data: dict[str, Any]) -> list[str]:
    """``dump_json``'s line for each key of ``data``."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"  {item}" for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {_encode(value)}")
    return lines


def _compute_line(compute: dict[str, list[dict[str, int]]] | None) -> str:
    """``dump_json``'s last line: the compute, one figure a line (null: not measured)."""
    if compute is None:
        return ' "compute": null'
    body = ",\n".join(f"  {json.dumps(name)}: {_encode(terms)}" for name, terms in compute.items())
    return f' "compute": {{\n{body}\n }}'


def to_csv(inventory: Inventory) -> str:
    """One row per tensor; tied slots have a count of 0 and name what they reuse.

    Written as ``csv.writer`` writes it (minimal quoting, "\n" ends a line), but a row at a time with
    f-strings: the writer took a third of a model's exports. The text is kept only when each line holds
    exactly its four commas and nothing holds a quote or a carriage return, so that no field needed
    quoting (none that a transformers class names does); else the writer writes every row.
    """
    found = _csv_texts.get(inventory.entries)
    return found if found is not None else _csv_texts.keep(inventory.entries, _csv(inventory.entries))


def _csv(entries: tuple[Tensor | TiedTensor, ...]) -> str:
    lines = [f"{CSV_HEADER}\n"]
    for entry in entries:
        if isinstance(entry, TiedTensor):
            lines.append(f"{entry.name},,0,{entry.component},{entry.tied_to}\n")
        else:
            lines.append(f"{entry.name},{'x'.join(map(str, entry.shape))},{entry.count},{entry.component},\n")
    text = "".join(lines)
    rows = len(lines)
    if text.count(",") == 4 * rows and text.count("\n") == rows and '"' not in text and "\r" not in text:
        return text
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER.split(","))
    for entry in entries:
        if isinstance(entry, TiedTensor):
            writer.writerow([entry.name, "", 0, entry.component, entry.tied_to])
        else:
            writer.writerow([entry.name, "x".join(map(str, entry.shape)), entry.count, entry.component, ""])
    return out.getvalue()


CSV_HEADER = "name,shape,count,component,tied_to"
