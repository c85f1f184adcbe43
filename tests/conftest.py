"""Shared helpers: where the cards and reference files are, how to write a card, and the built catalog."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import http.server
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from generator.analysis import kept_exports
from generator.build.pipeline import build
from generator.cards.card import Card, load_card
from generator.counting.inventory import Inventory, count_parameters

# Property-based tests: CI (CI=true) runs the full, reproducible profile; a local run a quick one.
# Each test's own @settings may raise max_examples further; see tests/test_bad_input_properties.py.
settings.register_profile("ci", max_examples=1000, derandomize=True, database=None, deadline=None)
settings.register_profile("dev", max_examples=100, database=None, deadline=None)
settings.register_profile("stress", max_examples=20_000, database=None, deadline=None)  # HYPOTHESIS_PROFILE=stress
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev"))

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
TEST_CARDS = Path(__file__).resolve().parent / "cards"
REFERENCE = Path(__file__).resolve().parent / "reference"
ALL_CARD_PATHS = sorted(MODELS.glob("*.yaml")) + sorted(TEST_CARDS.glob("*.yaml"))
SITE_JOBS = 2  # the session's build of the catalog (the `site` fixture) forks two workers


def pytest_configure(config: pytest.Config) -> None:
    """The run's builds in subprocesses (``python -m generator``) share one folder of calculator documents
    (generator/analysis/kept_exports.py), so each family's is worked once per run, not once per build.
    Keyed by the sources, a kept document is the one a fresh build would work."""
    if kept_exports.VARIABLE not in os.environ and not hasattr(config, "workerinput"):  # the run's first process
        folder = tempfile.mkdtemp(prefix="atlas-exports-")
        os.environ[kept_exports.VARIABLE] = folder  # inherited by pytest-xdist's workers and every subprocess
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    # The tests' own processes (and the build workers they fork) work every document anew: a test that
    # patches the families' words or code in this process must see the patch, never a kept document.
    kept_exports.FOLDER = None


def reference_for(card_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / f"{card_id}.json").read_text(encoding="utf-8"))
    return data


def count_card(path: Path) -> Inventory:
    return count_parameters(load_card(path))


@pytest.fixture
def write_card(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a card from YAML text into a fresh models directory and return its path."""
    models = tmp_path / "models"
    models.mkdir()

    def write(text: str, name: str = "card.yaml") -> Path:
        path = models / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


def card_by_id(card_id: str) -> Card:
    return load_card(MODELS / f"{card_id}.yaml")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under folder by its relative path, with the SHA-256 of its bytes."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def shared_build(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder that ``make`` fills once per run: under pytest-xdist, once for all the workers.

    The first worker to ask builds it while holding a lock; the others wait, then read the same folder.
    Two workers each building the catalog for themselves spent twice the time on one result.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: its own temporary folder, as any fixture's
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    run = tmp_path_factory.getbasetemp().parent  # the run's folder, which every worker's folder is in
    folder, done = run / name, run / f"{name}.done"
    with (run / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even if make() fails
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The catalog (models/) built once per run with the default options, search index included.

    Every test that only reads the built site shares it, the browser tests too (tests/browser/conftest.py);
    a test that needs another build (a base URL, a few cards, a broken card) makes its own. No test may
    write into this one: each worker's session ends with an error if a file in it changed, appeared or went away.
    It is built with SITE_JOBS worker processes whatever the machine, so that one build with a single job
    shows that the site depends neither on the run nor on the number of jobs (tests/test_site.py).
    """
    out = (
        shared_build(tmp_path_factory, "catalog", lambda folder: build(MODELS, folder / "site", jobs=SITE_JOBS))
        / "site"
    )
    built = snapshot(out)
    yield out
    assert snapshot(out) == built, f"a test changed the shared build of the catalog in {out}"


# The longest test files, longest first, as `make test` last measured them (per file, on two workers).
# pytest-xdist (`make test`, `make quick`) hands whole files to its workers in collection order (the Makefile
# turns off its own reordering by test count), so a long file collected late would run alone at the end while
# the other worker idles: the single property test of 1,000 builds once did. Started first, the long files
# fill both workers and the many short ones even out the end. Only the order changes, never what a test does.
LONGEST_FIRST = (
    "test_cache.py",
    "test_bad_input_properties.py",
    "browser/test_teaching.py",
    "browser/test_accessibility.py",
    "browser/test_calculator.py",
    "browser/test_calculator_keys.py",
    "browser/test_layout.py",
    "browser/test_edition.py",
    "browser/test_calculator_compute.py",
    "test_output_safety.py",
    "test_no_script.py",
    "test_cli.py",
    "test_config_sample.py",
    "browser/test_diagram.py",
    "test_config_types.py",
    "test_diagram.py",
    "test_translation.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        mark_tier(item)
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    # A stable sort: the files not named keep their order, after those named.
    items.sort(key=lambda item: rank.get(in_tests(item.path), len(rank)))


def in_tests(path: Path) -> str:
    """A test file's path from tests/, as LONGEST_FIRST names it."""
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else str(path)


# Tiers. A test is marked by what it uses, never by hand, so a new test cannot land in the wrong one:
# `make quick` runs every test marked neither `browser` nor `site` (nor `slow`, which is written by hand).
BROWSER_FIXTURES = {"browser", "open_page", "vnu_jar"}
TESTS = Path(__file__).resolve().parent
BROWSER_TESTS = TESTS / "browser"
SITE_COMMANDS = {"build", "serve"}  # the command-line commands that build a whole site


def mark_tier(item: pytest.Item) -> None:
    fixtures = set(getattr(item, "fixturenames", ()))
    found = tiers_in_code(item)
    if item.path.is_relative_to(BROWSER_TESTS) or fixtures & BROWSER_FIXTURES or "browser" in found:
        item.add_marker(pytest.mark.browser)
    if "site" in fixtures or "site" in found:
        item.add_marker(pytest.mark.site)


def tiers_in_code(item: pytest.Item) -> frozenset[str]:
    """The tiers that the test, its fixtures or the helpers of tests/ they call need."""
    starts = [getattr(item, "function", None)]
    fixture_info = getattr(item, "_fixtureinfo", None)
    if fixture_info is not None:
        starts += [d.func for defs in fixture_info.name2fixturedefs.values() for d in defs]
    return tiers_reached(tuple(f for f in starts if inspect.isfunction(f)))


@functools.cache  # the cases of one parametrized test share their functions
def tiers_reached(starts: tuple[Callable[..., Any], ...]) -> frozenset[str]:
    """Read from the code, not run: the names each function refers to, followed through the functions
    defined under tests/. A site is built by the pipeline's build() or serve(), or by the command
    line's build or serve command (generator.cli.main, or ``python -m generator`` in a subprocess).
    A browser is Playwright's, launched here or by a fixture of tests/browser/.
    """
    import generator.build.pipeline
    import generator.build.serve
    import generator.cli

    builders = (generator.build.pipeline.build, generator.build.serve.serve)
    builder_modules = (generator.build.pipeline, generator.build.serve)
    todo = [(f.__code__, f.__globals__) for f in starts]
    seen: set[Any] = set()
    constants: set[str] = set()
    tiers: set[str] = set()
    runs_the_command_line = False
    while todo:
        code, names = todo.pop()
        if code in seen:
            continue
        seen.add(code)
        for constant in code.co_consts:
            if inspect.iscode(constant):
                todo.append((constant, names))
            else:
                constants.update(
                    c for c in (constant if isinstance(constant, tuple) else (constant,)) if isinstance(c, str)
                )
        if "sync_playwright" in code.co_names:
            tiers.add("browser")
        for name in code.co_names:
            found = names.get(name)
            calls_a_builder = any(found is m for m in builder_modules) and SITE_COMMANDS & set(code.co_names)
            if calls_a_builder or any(found is f for f in builders):
                tiers.add("site")
            elif found is generator.cli.main:
                runs_the_command_line = True
            elif inspect.isfunction(found) and Path(found.__code__.co_filename).is_relative_to(TESTS):
                todo.append((found.__code__, found.__globals__))
    runs_the_command_line |= {"-m", "generator"} <= constants
    if runs_the_command_line and SITE_COMMANDS & constants:
        tiers.add("site")
    return frozenset(tiers)


def text_of(html: str) -> str:
    """A page as a reader sees it: formulas by their alt text, tags gone, spaces collapsed."""
    html = re.sub(r'<math alttext="([^"]*)">.*?</math>', r"\1", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&amp;", "&")


def cards_through(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    """The ids of the cards passed to ``module.name`` from now on (a function taking a card first), in order."""
    seen: list[str] = []
    original = getattr(module, name)

    def recorded(card: Card, *args: Any, **kwargs: Any) -> Any:
        seen.append(card.id)
        return original(card, *args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return seen


def catalog_copy(folder: Path, card_ids: Iterable[str]) -> Path:
    """A new folder of models holding these catalog cards, copied."""
    folder.mkdir()
    for card_id in card_ids:
        shutil.copy(MODELS / f"{card_id}.yaml", folder / f"{card_id}.yaml")
    return folder


class QuietServer(http.server.ThreadingHTTPServer):
    """The tests' static server: a browser that hangs up on a request it no longer needs (a page left,
    a prefetch dropped) is no error, and leaves no traceback in the test log."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)
