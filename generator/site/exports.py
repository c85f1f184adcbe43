"""Machine-readable views of an inventory: JSON and CSV, in ``named_parameters()`` order."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from generator.counting.inventory import Inventory, Tensor, TiedTensor


def to_json(inventory: Inventory) -> str:
    """The inventory as JSON: id, family, head, class, total, tensors and tied slots."""
    data = {
        "id": inventory.card.id,
        "family": inventory.card.family.name,
        "head": inventory.card.head.value,
        "class": inventory.class_name,
        "total": inventory.total,
        "tensors": [_tensor_json(t) for t in inventory.tensors],
        "tied": [_encode({"name": t.name, "tied_to": t.tied_to}) for t in inventory.tied],
    }
    return dump_json(data)


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


def dump_json(data: dict[str, Any]) -> str:
    """JSON with one key per line and one list item per line: small, diffable, greppable.

    List items are already JSON text.
    """
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"  {item}" for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {_encode(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def to_csv(inventory: Inventory) -> str:
    """One row per tensor; tied slots have a count of 0 and name what they reuse."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "shape", "count", "component", "tied_to"])
    for entry in inventory.entries:
        if isinstance(entry, TiedTensor):
            writer.writerow([entry.name, "", 0, entry.component, entry.tied_to])
        else:
            writer.writerow([entry.name, "x".join(map(str, entry.shape)), entry.count, entry.component, ""])
    return out.getvalue()
