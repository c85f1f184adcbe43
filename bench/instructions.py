"""Count the instructions of a catalog build, here and at earlier commits: a figure the machine's load cannot move.

Wall times on this machine move by half from one hour to the next (bench/README.md), so a change of 10%
hides in the noise of the very runs meant to show it. Valgrind's callgrind counts the instructions the
build's process executes instead: the same count for the same code, inputs and interpreter, whatever else
the machine is doing. It is some 50 times slower than the build, so this is for comparing versions, not
for timing them.

    .venv/bin/python bench/instructions.py                      # the working tree
    .venv/bin/python bench/instructions.py --against 3e15db7    # and a commit (checked out for the run)
    .venv/bin/python bench/instructions.py --models DIR         # every tree builds DIR instead of its own models/

Each build runs as ``python -m generator build --jobs 1 --no-search`` (and ``--no-cache`` where the tree
has it) with the interpreter running this script: one process, so callgrind sees all of the project's
work; Pagefind, a program of its own, is left out. Imports and start-up are in the count. Every tree is
built once first without valgrind, so that its modules' and templates' bytecode is cached, as it is for
a user's second build. Needs ``valgrind`` (Debian's package).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
BUILT = re.compile(r"built (\d+) models")


def build_command(python: str, tree: Path, models: Path, out: Path) -> list[str]:
    """The build as this script runs it in ``tree``; ``--no-cache`` only where the tree's build knows it."""
    command = [python, "-m", "generator", "build", "--models", str(models), "--out", str(out), "--jobs", "1"]
    command.append("--no-search")
    flags = subprocess.run([python, "-m", "generator", "build", "--help"], cwd=tree, capture_output=True, text=True)
    if "--no-cache" in flags.stdout:
        command.append("--no-cache")
    return command


def count(python: str, tree: Path, models: Path, scratch: Path) -> tuple[int, int]:
    """(instructions, cards) of one build of ``models`` by the code in ``tree``."""
    out = scratch / "site"
    command = build_command(python, tree, models, out)
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment.setdefault("SOURCE_DATE_EPOCH", "0")
    warm = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True)
    if warm.returncode != 0:
        raise SystemExit(f"{tree}: the build failed:\n{warm.stderr or warm.stdout}")
    shutil.rmtree(out)
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    run = subprocess.run([*valgrind, *command], cwd=tree, env=environment, capture_output=True, text=True)
    shutil.rmtree(out, ignore_errors=True)
    found, built = COLLECTED.search(run.stderr), BUILT.search(run.stdout)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"{tree}: the build under valgrind failed:\n{run.stderr[-2000:]}")
    return int(found.group(1)), int(built.group(1)) if built else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", action="append", default=[], metavar="REV", help="a commit to count too")
    parser.add_argument("--models", type=Path, help="the cards every tree builds (default: each tree's own models/)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the builds")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="atlas-instructions-") as scratch_name:
        scratch = Path(scratch_name)
        trees = [("working tree", ROOT)]
        for rev in args.against:
            tree = scratch / f"tree-{len(trees)}"
            subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), rev], cwd=ROOT, check=True)
            trees.append((rev, tree))
        try:
            for name, tree in trees:
                models = args.models.resolve() if args.models else tree / "models"
                print(f"counting {name} …", file=sys.stderr)
                rows.append((name, *count(args.python, tree, models, scratch)))
        finally:
            for _, tree in trees[1:]:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    first = rows[0][1]
    print("| code | cards | instructions | against the working tree |")
    print("|---|--:|--:|--:|")
    for name, instructions, cards in rows:
        print(f"| {name} | {cards} | {instructions / 1e9:.3f} G | {instructions / first:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
