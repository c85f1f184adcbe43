"""Write the names of the modules each transformers class holds without parameters of its own.

A dropout, an activation or a rotary table is a module, and peft matches a target against its
name like any other's; then it refuses the whole target list, since it adapts none of them. The
families declare the modules that hold parameters, and the containers above them follow from
their names; these leaves do not. This tool asks transformers for them, for every catalog card and
every config of the sampler that transformers builds, and writes, per family and head, each name
with its layer indices written ``{i}``:
``generator/counting/families/transformers/parameterless.json``. Run it with the ``reference``
extra (normally through ``make reference``).
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import transformers
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from reference import build_config, implemented, model_of  # noqa: E402

OUT = ROOT / "generator" / "counting" / "families" / "transformers" / "parameterless.json"


def leaves(family: str, head: str, config: dict) -> set[str]:
    """The names of a class's modules that have no children and hold no parameter, indices as {i}."""
    model = model_of(head, build_config(family, config))
    found = set()
    for name, module in model.named_modules():
        if (
            name
            and not any(True for _ in module.children())
            and not any(True for _ in module.parameters(recurse=False))
        ):
            found.add(re.sub(r"(^|\.)\d+(?=\.|$)", r"\1{i}", name))
    return found


def main() -> int:
    warnings.simplefilter("ignore")
    transformers.logging.set_verbosity_error()
    names: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted((ROOT / "models").glob("*.yaml")):
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        if implemented(card["family"]):
            names[card["family"]][card["head"]] |= leaves(card["family"], card["head"], card.get("config") or {})
    sample = json.loads((ROOT / "tests" / "reference" / "sample" / "configs.json").read_text(encoding="utf-8"))
    for entry in sample["configs"]:
        if entry["accepted"]:
            names[entry["family"]][entry["head"]] |= leaves(entry["family"], entry["head"], entry["config"])
    data = {
        "transformers": transformers.__version__,
        "families": {f: {h: sorted(n) for h, n in sorted(heads.items())} for f, heads in sorted(names.items())},
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
