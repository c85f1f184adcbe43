"""Profile one ``python -m generator build`` in this process: stage times, memory and hot functions.

Run from the project root (so ``generator`` is the project's own), with the build's arguments:

    python bench/profile_build.py build --models DIR --out DIR [--no-search]

A build normally reads cards and writes pages in worker processes (``--jobs``, see
``generator/parallel.py``), where this process's profiler would see none of it; so ``--jobs 1`` is
added unless the arguments name a number of jobs, and the whole build runs here, card by card.

The stages are the functions the build calls, wrapped (see ``STAGES``): reading the cards
(``load_cards``), counting and deriving each model (``model_of``), each model's page, JSON and
CSV (``Renderer.model_files``), the pages about many models (``site_files`` and each piece of work it
returns), the data files and assets (``code_files``, likewise), writing files into the staging
directory (``Staging.write``), the search records (``model_record``) and Pagefind
(``SearchIndex.write``). The per-model stages alternate card by card; each adds up the time of all its calls.

Prints one JSON object: ``seconds`` (the whole build under cProfile), ``rss_end_mib``, ``stages``
(per stage: ``seconds``, ``calls`` and ``rss_after_mib``, the resident memory right after its last
call), ``own`` (the functions with the most time of their own) and ``project`` (the project's
functions and templates by cumulative time).
"""

from __future__ import annotations

import cProfile
import dataclasses
import functools
import json
import os
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))  # the project under test, not whichever one is installed

import generator.build.output
import generator.build.pipeline
import generator.site.render
import generator.site.search
import generator.site.views
from generator.cli import main

# (stage, owner, attribute): the function or method wrapped to time that stage. None of them calls
# another, so no time is counted twice.
STAGES: tuple[tuple[str, Any, str], ...] = (
    ("read cards (load_cards)", generator.build.pipeline, "load_cards"),
    ("count (model_of)", generator.site.views, "model_of"),
    ("model files (Renderer.model_files)", generator.site.render.Renderer, "model_files"),
    ("write files (Staging.write)", generator.build.output.Staging, "write"),
    ("search records (model_record)", generator.build.pipeline, "model_record"),
    ("other pages (Renderer.site_files)", generator.site.render.Renderer, "site_files"),
    ("data and assets (Renderer.code_files)", generator.site.render.Renderer, "code_files"),
    ("search index (SearchIndex.write)", generator.site.search.SearchIndex, "write"),
)
WORK_LISTS = ("other pages (Renderer.site_files)", "data and assets (Renderer.code_files)")


# Read after every call of every stage, so kept open: one system call (``posix.pread``) a reading.
_STATM = os.open("/proc/self/statm", os.O_RDONLY)
_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_mib() -> float:
    """Resident memory now (not the peak): what the objects still alive take."""
    return int(os.pread(_STATM, 200, 0).split()[1]) * _PAGE_MIB


def timed(record: dict[str, dict[str, float]], stage: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``original``, adding up its time under ``stage`` and noting the memory after each call."""

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = original(*args, **kwargs)
        entry = record.setdefault(stage, {"seconds": 0.0, "calls": 0})
        entry["seconds"] += time.perf_counter() - started
        entry["calls"] += 1
        entry["rss_after_mib"] = rss_mib()
        return result

    return wrapper


def instrument(record: dict[str, dict[str, float]]) -> None:
    """Wrap each stage's function; the work ``site_files`` and ``code_files`` return runs later, so wrap it too."""
    for stage, owner, name in STAGES:
        original = getattr(owner, name, None)
        if original is None:
            print(f"profile_build: {owner.__name__}.{name} not found; stage {stage!r} left out", file=sys.stderr)
            continue
        wrapped = timed(record, stage, original)
        if stage in WORK_LISTS:
            wrapped = _timing_work(record, stage, wrapped)
        setattr(owner, name, wrapped)


def _timing_work(record: dict[str, dict[str, float]], stage: str, make: Callable[..., Any]) -> Callable[..., Any]:
    """``make`` (``site_files`` or ``code_files``) returning its pieces of work each timed as ``stage``."""

    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> list[Any]:
        # Each a Piece (generator/site/page.py): the build still reads its name and what it shows.
        return [dataclasses.replace(work, make=timed(record, stage, work.make)) for work in make(*args, **kwargs)]

    return wrapper


def with_one_job(argv: list[str]) -> list[str]:
    """The build's arguments with ``--jobs 1`` added, unless they already name a number of jobs."""
    if argv[:1] != ["build"]:
        return argv
    named = any(arg in ("-j", "--jobs") or arg.startswith(("--jobs=", "-j")) for arg in argv[1:])
    return argv if named else [*argv, "--jobs", "1"]


def function_rows(stats: pstats.Stats, key: int, keep: Callable[[str], bool], limit: int) -> list[dict[str, Any]]:
    rows = []
    root = str(Path.cwd()) + os.sep
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if keep(file):
            where = file.removeprefix(root)
            if "site-packages" in where:
                where = where.split("site-packages" + os.sep)[-1]
            rows.append({"function": f"{where}:{line}({name})", "calls": calls, "own": own, "cumulative": cumulative})
    rows.sort(key=lambda r: -r["own" if key == 0 else "cumulative"])
    return rows[:limit]


def run() -> int:
    record: dict[str, dict[str, float]] = {}
    instrument(record)
    argv = with_one_job(sys.argv[1:])
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    status = main(argv)
    profiler.disable()
    elapsed = time.perf_counter() - started
    if status != 0:
        return status
    stats = pstats.Stats(profiler)
    root = str(Path.cwd())
    here = str(Path(__file__).resolve())
    result = {
        "seconds": elapsed,
        "rss_end_mib": rss_mib(),
        "stages": record,
        "own": function_rows(stats, 0, lambda f: f != here, 15),
        "project": function_rows(
            stats, 1, lambda f: f.startswith(root) and ("generator" in f or "templates" in f) and f != here, 15
        ),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(run())
