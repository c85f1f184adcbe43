"""Cards are written by worker processes and only their summaries kept: none of it shows in the site.

The site is the same whatever the number of jobs; an error in a worker stops the build and
leaves the previous site as it was; a summary says what its model says; and the pages about
many models count again only the few cards they name.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import MODELS
from generator.build import pipeline as build_module
from generator.build.pipeline import build
from generator.cards.card import Card, load_cards
from generator.cards.problems import InputError, Location, Problem
from generator.parallel import map_parallel
from generator.site.differences import PAIRS
from generator.site.pages import errata, exercises, handout
from generator.site.render import Renderer, SiteOptions
from generator.site.views import Details, Model, Summary, model_of, named_or_counted

CARDS = load_cards(MODELS)
NO_SEARCH = SiteOptions(search=False)


def snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def square(number: int) -> int:
    return number * number


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_map_parallel_keeps_the_order_and_reports_each_result(jobs: int) -> None:
    told: list[tuple[int, int]] = []
    assert map_parallel(square, 50, jobs, lambda done, total: told.append((done, total))) == [n * n for n in range(50)]
    assert told == [(n, 50) for n in range(1, 51)]


def worker_pid(number: int) -> int:
    time.sleep(0.01)  # long enough that one worker cannot take every task
    return os.getpid()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds fork worker processes on Linux only")
@pytest.mark.parametrize("jobs", [2, 3])
def test_the_work_runs_in_as_many_processes_as_jobs_this_one_among_them(jobs: int) -> None:
    pids = set(map_parallel(worker_pid, 60, jobs))
    assert len(pids) == jobs and os.getpid() in pids  # never more processes at work than processors
    assert set(map_parallel(worker_pid, 40, 1)) == {os.getpid()}
    assert set(map_parallel(worker_pid, 15, 2)) == {os.getpid()}  # under 8 tasks a job: not worth a pool


def pid_met(barrier: Any, number: int) -> int:
    """A task that returns only once another process holds a task too: without a second process the map
    cannot finish (the barrier times out and raises), whatever the machine's load."""
    barrier.wait(timeout=60)
    return os.getpid()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds fork worker processes on Linux only")
def test_a_few_heavy_tasks_get_a_worker_of_their_own() -> None:
    """Four tasks, each worth a process (per_job=1): a worker is forked, and it takes some of them. (Timed
    tasks of 10 ms failed on a loaded machine: this process had done all four before the worker started.)"""
    barrier = multiprocessing.get_context("fork").Barrier(2)  # inherited by the forked worker
    pids = map_parallel(functools.partial(pid_met, barrier), 4, 2, per_job=1)
    assert len(set(pids)) == 2 and os.getpid() in pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds fork worker processes on Linux only")
def test_an_error_in_this_process_share_stops_the_map_and_its_workers() -> None:
    build = os.getpid()

    def fail_here(number: int) -> int:
        time.sleep(0.01)
        if os.getpid() == build:
            raise ValueError(f"task {number} went wrong here")
        return number

    with pytest.raises(ValueError, match="went wrong here"):
        map_parallel(fail_here, 40, 2)
    assert not multiprocessing.active_children()  # the worker was stopped, not left running


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds fork worker processes on Linux only")
@pytest.mark.parametrize(("count", "jobs"), [(40, 2), (40, 1), (15, 2)])
def test_meanwhile_runs_once_in_the_build_while_workers_work_or_after_the_work(count: int, jobs: int) -> None:
    ran: list[tuple[int, int]] = []  # (process, results the build had when it ran)
    results: list[int] = []

    def told(done: int, total: int) -> None:
        results.append(done)

    pids = map_parallel(worker_pid, count, jobs, told, meanwhile=lambda: ran.append((os.getpid(), len(results))))
    assert len(pids) == count and [pid for pid, _ in ran] == [os.getpid()]
    # With workers it runs before any result is taken (40 tasks of 10 ms outlast the fork); here, after the last.
    assert ran[0][1] == (0 if jobs > 1 and count >= 16 else count)


def pid_and_bulk(number: int) -> tuple[int, bytes]:
    time.sleep(0.01)
    return os.getpid(), b"x" * 20_000  # a chunk of four is more than a pipe holds (64 KiB)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds fork worker processes on Linux only")
def test_a_worker_is_not_kept_waiting_by_results_the_build_has_not_read() -> None:
    # While the build does its own work (half a second here), a worker goes on: its results are taken
    # as they come. It used to wait on the full pipe until the build had done every other task.
    done = map_parallel(pid_and_bulk, 64, 2, meanwhile=lambda: time.sleep(0.5))
    by_worker = sum(1 for pid, _ in done if pid != os.getpid())
    assert by_worker >= 32, f"the worker did {by_worker} of 64 tasks"


def test_an_error_in_a_worker_is_raised_in_the_build() -> None:
    def fail_at_seventeen(number: int) -> int:
        if number == 17:
            raise ValueError("card 17 went wrong")
        return number

    with pytest.raises(ValueError, match="card 17 went wrong"):
        map_parallel(fail_at_seventeen, 40, 2)


def test_a_problem_found_in_a_worker_reaches_the_build_whole() -> None:
    problem = Problem(Location(Path("content/zh/charts.yaml"), 11, 3), "shares.title", "expected a text here")

    def refuse(number: int) -> int:
        if number == 20:
            raise InputError([problem])
        return number

    with pytest.raises(InputError) as raised:
        map_parallel(refuse, 40, 2)
    assert raised.value.problems == [problem] and str(raised.value) == str(problem)


# That the number of jobs does not change the site: tests/test_site.py builds the catalog with one job and
# compares it with the session's build, made with SITE_JOBS (tests/conftest.py).


def test_a_card_that_fails_in_a_worker_leaves_the_previous_site(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    shutil.copytree(site, out)  # the previous site: the session's build of the catalog
    before = snapshot(out)

    def broken(card: Card) -> Model:
        if card.id == "roberta-base":
            raise RuntimeError("a bug while counting roberta-base")
        return named_or_counted(card)

    monkeypatch.setattr(build_module, "named_or_counted", broken)  # forked workers inherit the patch
    with pytest.raises(RuntimeError, match="roberta-base"):
        build(MODELS, out, NO_SEARCH, jobs=2)
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging directory left behind


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_a_summary_says_what_its_model_says(card: Card) -> None:
    model = model_of(card)
    summary = Summary.of(card, model.numbers())
    assert summary.architecture is model.architecture is model.inventory.architecture
    assert (summary.total, summary.values) == (model.inventory.total, model.inventory.values)
    assert summary.subtotals == model.subtotals and sum(summary.subtotals.values()) == model.total
    assert summary.parts == model.parts and sum(summary.parts.values()) == model.total
    assert summary.symbols == model.symbols and summary.symbols
    assert [summary.symbol_value(s.name) for s in summary.symbols] == [
        model.symbol_value(s.name) for s in model.symbols
    ]


@pytest.mark.slow  # renders every page about many models of the catalog: some 4 s
def test_pages_about_many_models_count_again_only_the_cards_they_name(monkeypatch: pytest.MonkeyPatch) -> None:
    in_errata = {n for _, needs in errata.BUILDERS for n in needs}
    in_exercises = {need for _, need in exercises.BUILDERS} | {"bert-base-uncased"}  # the released vocabulary
    # the released encoder each classifier exercise is checked against
    in_exercises |= {build.keywords["base"] for build, _ in exercises.BUILDERS if isinstance(build, functools.partial)}
    counted: list[str] = []

    def model(self: Summary) -> Model:
        counted.append(self.id)
        return model_of(self.card)

    monkeypatch.setattr(Summary, "model", model)
    summaries = [Summary.of(card, model_of(card).numbers()) for card in CARDS]
    files = {path: data for work in Renderer(NO_SEARCH).site_files(summaries) for path, data in work().items()}
    assert "errata/index.html" in files and "exercises/index.html" in files and len(files) > len(PAIRS)
    # at most once for each page that names the card (a comparison, the errata, the exercises, the handout)
    for card_id, times in Counter(counted).items():
        pages = sum(card_id in (p.a, p.b) for p in PAIRS) + (card_id in in_errata) + (card_id in in_exercises)
        pages += card_id == handout.WORKED  # the handout works BERT-Base in numbers
        assert 1 <= times <= pages, card_id
    assert len(set(counted)) < len(CARDS) // 2


def test_details_count_a_card_when_first_asked_and_keep_it() -> None:
    summaries = [Summary.of(card, model_of(card).numbers()) for card in CARDS[:5]]
    details = Details(summaries)
    assert list(details) == [c.id for c in CARDS[:5]] and len(details) == 5
    first = details[CARDS[0].id]
    assert first is details[CARDS[0].id] and first.inventory.total == summaries[0].total
    assert details.get("no-such-card") is None
