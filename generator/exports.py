"""Machine-readable views of an inventory: JSON and CSV, in ``named_parameters()`` order."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from generator.inventory import Inventory, TiedTensor


def to_json(inventory: Inventory) -> str:
    """The inventory as JSON: id, family, head, class, total, tensors and tied slots."""
    data = {
        "id": inventory.card.id,
        "family": inventory.card.family.name,
        "head": inventory.card.head.value,
        "class": inventory.class_name,
        "total": inventory.total,
        "tensors": [
            {"name": t.name, "shape": list(t.shape), "count": t.count, "component": t.component}
            for t in inventory.tensors
        ],
        "tied": [{"name": t.name, "tied_to": t.tied_to} for t in inventory.tied],
    }
    return dump_json(data)


# One encoder for every item: json.dumps with options builds a new encoder on each call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def dump_json(data: dict[str, Any]) -> str:
    """JSON with one key per line and one list item per line: small, diffable, greppable."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"  {_encode(item)}" for item in value)
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
