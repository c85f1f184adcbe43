"""Spread the independent work of a build over processes.

Cards are independent: each is read, counted, derived and written on its own, and that is
most of a build; so are the pages about many models once every card is summarized.
``map_parallel`` runs such work over forked processes, which inherit the work itself (the cards,
the compiled templates and the staging directory) from the build instead of being sent them;
only each task's small result comes back. Forking is safe on Linux; on macOS system
libraries may not survive it, and Windows has none: there, with one job, or with few tasks,
the work runs in the build's own process, the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import sys
import threading
from collections.abc import Callable
from multiprocessing.queues import SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")

# Below this many tasks a job costs more than it saves (forking, and results sent back).
MIN_TASKS_PER_JOB = 8


def available_jobs() -> int:
    """The processors this process may run on (the default number of jobs)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def map_parallel(
    work: Callable[[int], T],
    count: int,
    jobs: int,
    on_done: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[], None] | None = None,
    per_job: int = MIN_TASKS_PER_JOB,
) -> list[T]:
    """``work(i)`` for every i below ``count``, in order, in up to ``jobs`` processes, this one included.

    Each process is given at least ``per_job`` tasks (fewer processes for fewer tasks; 1 for tasks
    that each outweigh a fork). ``jobs - 1`` workers are forked, and this process first does
    ``meanwhile()``, other work of its own, then takes tasks beside them: never more processes at
    work than jobs. ``on_done(done, count)`` is told as results arrive, in order. An exception
    raised by the work stops the map and is raised here.
    """
    jobs = min(jobs, count // per_job)
    if jobs <= 1 or not sys.platform.startswith("linux"):
        here = [_reported(work(i), i + 1, count, on_done) for i in range(count)]
        if meanwhile is not None:
            meanwhile()
        return here
    context = multiprocessing.get_context("fork")
    tasks: SimpleQueue[tuple[int, int] | None] = context.SimpleQueue()
    results: SimpleQueue[tuple[int, list[Any], BaseException | None]] = context.SimpleQueue()
    # The work is handed to each process as it forks (inherited, never pickled): no module state.
    workers = [context.Process(target=_serve, args=(work, tasks, results), daemon=True) for _ in range(jobs - 1)]
    for worker in workers:
        worker.start()
    # A thread of this process takes each result as a worker sends it: a worker whose results filled the
    # pipe would otherwise wait, idle, until this process had done its own share of the work.
    inbox: queue.SimpleQueue[tuple[int, list[Any], BaseException | None]] = queue.SimpleQueue()
    done = threading.Event()
    receiver = threading.Thread(target=_receive, args=(results, inbox, done), daemon=True)
    receiver.start()
    try:
        size = max(1, min(32, count // (jobs * 8)))
        starts = range(0, count, size)
        for start in starts:
            tasks.put((start, min(start + size, count)))
        for _ in range(jobs):  # a stop sign for each process, this one included; each takes one and stops
            tasks.put(None)
        if meanwhile is not None:
            meanwhile()
        waiting: dict[int, list[T]] = {}
        ordered: list[T] = []

        def arrived(start: int, values: list[T]) -> None:
            waiting[start] = values
            while len(ordered) in waiting:
                for value in waiting.pop(len(ordered)):
                    ordered.append(_reported(value, len(ordered) + 1, count, on_done))

        def take(result: tuple[int, list[Any], BaseException | None]) -> None:
            start, values, error = result
            if error is not None:
                raise error
            arrived(start, values)

        while (chunk := tasks.get()) is not None:  # this process's share, until its stop sign
            start, stop = chunk
            arrived(start, [work(i) for i in range(start, stop)])
            while not inbox.empty():  # the workers' results so far: progress told, a failure raised, in time
                take(inbox.get())
        while len(ordered) < count:
            take(inbox.get())
        return ordered
    finally:
        done.set()
        receiver.join(timeout=1)  # it polls every 10 ms; a worker stopped mid-result could leave it waiting
        for worker in workers:
            if worker.is_alive() and worker.exitcode is None:
                worker.terminate()
            worker.join()


def _receive(
    results: SimpleQueue[tuple[int, list[Any], BaseException | None]],
    inbox: queue.SimpleQueue[tuple[int, list[Any], BaseException | None]],
    done: threading.Event,
) -> None:
    """Move each result from the workers' pipe to ``inbox`` as soon as it is there, until ``done``."""
    while not done.is_set():
        if results.empty():
            done.wait(0.01)
        else:
            inbox.put(results.get())


def _serve(
    work: Callable[[int], Any],
    tasks: SimpleQueue[tuple[int, int] | None],
    results: SimpleQueue[tuple[int, list[Any], BaseException | None]],
) -> None:
    """One worker process: runs the chunks of indices it is given, in order, until told to stop."""
    try:
        while (chunk := tasks.get()) is not None:
            start, stop = chunk
            try:
                results.put((start, [work(i) for i in range(start, stop)], None))
            except Exception as error:  # raised again in the build, which stops the map
                results.put((start, [], error))
                return
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the terminal's group: the build's own says so
        return


def _reported(result: T, done: int, count: int, on_done: Callable[[int, int], None] | None) -> T:
    if on_done is not None:
        on_done(done, count)
    return result
