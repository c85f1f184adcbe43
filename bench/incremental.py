"""Time a rebuild after one card is edited against a full build, on generated cards (target: 25% at most).

For each of ``--no-search`` and a default build (with the search index): the full build from
scratch without the cache (``--no-cache``, a fresh output directory each run), the first build
with an empty cache, the rebuild when nothing changed, and the rebuild after one card is edited
(a different card each run, its layer count changed, so its total and every page that shows it
change). Best of ``--repeat`` runs each. Then the same edits as ``serve`` rebuilds them, by its builder
kept from one build to the next (``serve_edits``: no interpreter to start). After the last edit, the
incrementally built site is compared byte for byte with a full build from scratch; the run fails if
they differ.

    .venv/bin/python bench/incremental.py                 # 1,000 cards, best of 3
    .venv/bin/python bench/incremental.py --cards 200 --repeat 1
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from pathlib import Path

from run import BENCH_DIR, Series, card_texts, file_cost, fmt_s, loadavg, measure, retire, scratch, write_cards

from generator.build.serve import Builder


def snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def edit(card: Path, run: int) -> None:
    """Change a card's layer count (its depth key is the first ``*layers:`` line), a new value each run."""
    text = card.read_text(encoding="utf-8")
    line = re.compile(r"^(  \w*layers\w*): (\d+)$", re.MULTILINE)
    changed = line.sub(lambda m: f"{m.group(1)}: {int(m.group(2)) + run + 1}", text, count=1)
    assert changed != text, f"{card} has no layer count to edit"
    card.write_text(changed, encoding="utf-8")


def serve_edits(
    python: str, cwd: Path, models: Path, out: Path, flags: list[str], cards: list[Path], repeat: int
) -> float | None:
    """The best wall time of a rebuild after one card is edited, as ``serve`` runs it: by its builder, a
    child kept from one build to the next (generator/build/serve.py), after a first build that warms it.
    None if the generator has no such builder (an older one, with ``--root``)."""
    builder = Builder(models, out, *flags, "--quiet", python=python, cwd=cwd)
    try:
        if builder.build(fresh=True) is None:
            return None
        best = float("inf")
        for run in range(repeat):
            edit(cards[(run * 97 + 50) % len(cards)], run)
            start = time.perf_counter()
            if builder.build(fresh=False) != 0:
                raise RuntimeError("a rebuild in serve's builder failed")
            best = min(best, time.perf_counter() - start)
        return best
    finally:
        builder.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=BENCH_DIR.parent, help="project to measure (default: this one)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the builds")
    parser.add_argument("--cards", type=int, default=1000, help="generated cards (default: 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each build; the best is reported")
    parser.add_argument("--scratch", type=Path, help="folder for cards, sites, cache (default: system temp)")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    build = [args.python, "-m", "generator", "build"]
    print(f"load average at the start: {loadavg()}")
    with scratch(args.scratch, "atlas-incremental-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"builds write below {tmp.parent}, where making a file took {file_cost(tmp):.0f} µs at the start")
        models = write_cards(card_texts(root), args.cards, tmp / "models")
        cards = sorted(models.glob("*.yaml"))
        rows = []
        for search in ([], ["--no-search"]):
            what = "default build (search index)" if not search else "--no-search"
            cache, out, fresh = tmp / "cache", tmp / "site", tmp / "fresh"
            common = [*build, "--models", str(models), *search]
            full, cold, same, edited = (Series(label) for label in ("full", "cold", "same", "edited"))
            for _ in range(args.repeat):
                retire(fresh)
                full.runs.append(measure([*common, "--out", str(fresh), "--no-cache"], tmp))
                retire(cache)
                retire(out)
                cold.runs.append(measure([*common, "--out", str(out), "--cache-dir", str(cache)], tmp))
            for _ in range(args.repeat):
                same.runs.append(measure([*common, "--out", str(out), "--cache-dir", str(cache)], tmp))
            for run in range(args.repeat):
                edit(cards[(run * 97) % len(cards)], run)
                edited.runs.append(measure([*common, "--out", str(out), "--cache-dir", str(cache)], tmp))
            served = serve_edits(
                args.python, tmp, models, out, [*search, "--cache-dir", str(cache)], cards, args.repeat
            )
            retire(fresh)
            measure([*common, "--out", str(fresh), "--no-cache"], tmp)
            identical = snapshot(out) == snapshot(fresh)
            if not identical:
                print(f"{what}: the incremental site differs from a full build", file=sys.stderr)
                return 1

            def cell(series: Series, full: Series = full) -> str:
                """Wall and CPU time, each also as a share of the full build's."""
                return (
                    f"{fmt_s(series.wall)} ({series.wall / full.wall:.0%}) · "
                    f"{fmt_s(series.cpu)} ({series.cpu / full.cpu:.0%})"
                )

            in_serve = f"{fmt_s(served)} ({served / full.wall:.0%})" if served is not None else "—"
            rows.append(
                f"| {what} | {fmt_s(full.wall)} · {fmt_s(full.cpu)} | {fmt_s(cold.wall)} · {fmt_s(cold.cpu)} | "
                f"{cell(same)} | {cell(edited)} | {in_serve} | {'yes' if identical else 'no'} |"
            )
            print(rows[-1], file=sys.stderr)
    print(
        f"{args.cards:,} generated cards, best of {args.repeat} runs; each cell is wall time · CPU time "
        "(user + system, worker processes and Pagefind included); percentages are of the full build's.\n"
    )
    print(
        "| build | full, `--no-cache` | first, empty cache | nothing changed | one card edited "
        "| one card edited, in `serve` | identical |"
    )
    print("|---|--:|--:|--:|--:|--:|---|")
    print("\n".join(rows))
    print(f"\nload average at the end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
