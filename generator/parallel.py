"""Spread the independent work of a build over processes.

Cards are independent: each is read, counted, derived and written on its own, and that is
most of a build; so are the pages about many models once every card is summarized.
``map_parallel`` runs such work over a pool of forked processes, which inherit the cards,
the compiled templates and the staging directory from the build instead of being sent them;
only each task's small result comes back. Forking is safe on Linux; on macOS system
libraries may not survive it, and Windows has none: there, with one job, or with few tasks,
the work runs in the build's own process, the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Below this many tasks a job costs more than it saves (forking, and results sent back).
MIN_TASKS_PER_JOB = 8

# The work of the pool being run: set just before the pool forks, so that its processes inherit it.
_work: Callable[[int], Any] | None = None


def available_jobs() -> int:
    """The processors this process may run on (the default number of jobs)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def map_parallel(
    work: Callable[[int], T], count: int, jobs: int, on_done: Callable[[int, int], None] | None = None
) -> list[T]:
    """``work(i)`` for every i below ``count``, in order, over up to ``jobs`` processes.

    ``on_done(done, count)`` is told as results arrive, in order. An exception raised by the
    work stops the map and is raised here.
    """
    global _work
    jobs = min(jobs, count // MIN_TASKS_PER_JOB)
    if jobs <= 1 or not sys.platform.startswith("linux"):
        return [_reported(work(i), i + 1, count, on_done) for i in range(count)]
    _work = work
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            chunk = max(1, min(32, count // (jobs * 8)))
            done = pool.imap(_run, range(count), chunksize=chunk)
            return [_reported(result, i + 1, count, on_done) for i, result in enumerate(done)]
    finally:
        _work = None


def _run(index: int) -> Any:
    assert _work is not None, "a worker process started without work"
    return _work(index)


def _reported(result: T, done: int, count: int, on_done: Callable[[int, int], None] | None) -> T:
    if on_done is not None:
        on_done(done, count)
    return result
