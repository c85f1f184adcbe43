"""Fail when a module of the generator is over the size one person reads at a sitting.

`make check` runs this beside the import contract: a module that grows past LIMIT lines is a
concept that wants splitting, and the check says which one, before review has to.

    python tools/module_sizes.py [--limit N] [FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

LIMIT = 450


def oversized(folder: Path, limit: int) -> list[tuple[Path, int]]:
    """Every ``.py`` file below ``folder`` with more than ``limit`` lines, largest first."""
    sizes = ((path, len(path.read_text("utf-8").splitlines())) for path in sorted(folder.rglob("*.py")))
    return sorted(((path, lines) for path, lines in sizes if lines > limit), key=lambda item: -item[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=Path("generator"))
    parser.add_argument("--limit", type=int, default=LIMIT)
    args = parser.parse_args()
    found = oversized(args.folder, args.limit)
    for path, lines in found:
        print(f"{path}: {lines} lines, over the limit of {args.limit}: split it by concept", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
