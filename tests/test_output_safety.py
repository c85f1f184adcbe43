"""The output directory is safe: nothing a build did not make is replaced, and builds take turns.

A build replaces --out only when it is missing, empty, or holds the marker a previous build left;
it refuses the project, the cards and every directory above them; and two builds started at
once leave one complete site, never a mix (generator/build/output.py holds a lock while it swaps).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import MODELS, ROOT
from generator.build.cache import GENERATOR
from generator.build.output import MARKER, Staging
from generator.cards.problems import display_path
from generator.cli import main
from generator.parallel import _serve
from generator.site.content import CONTENT
from generator.site.render import TEMPLATES

NO_SEARCH = ["--no-search"]  # Pagefind has its own tests; these are about directories


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def build(models: Path, out: Path, options: Sequence[str] = NO_SEARCH) -> tuple[int, str]:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = main(["build", "--models", str(models), "--out", str(out), *options])
    return status, stderr.getvalue()


@pytest.fixture
def small_models(tmp_path: Path) -> Path:
    folder = tmp_path / "cards"
    folder.mkdir()
    shutil.copy(MODELS / "bert-uncased-l2-h128-a2.yaml", folder)
    return folder


# --- directories the build did not make ------------------------------------------------------


@pytest.mark.parametrize("content", ["thesis.tex", ".git"])
def test_a_directory_without_the_marker_is_never_replaced(tmp_path: Path, small_models: Path, content: str) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / content).write_text("keep me", encoding="utf-8")
    status, err = build(small_models, out)
    assert status == 1
    assert err.splitlines()[0] == (
        f"{out}:1:1: --out: refusing to replace a non-empty directory that no build made (no {MARKER} file)"
    )
    assert sorted(p.name for p in out.iterdir()) == [content]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards", "mine"]


def test_a_file_is_not_an_output_directory(tmp_path: Path, small_models: Path) -> None:
    out = tmp_path / "site"
    out.write_text("keep me", encoding="utf-8")
    status, err = build(small_models, out)
    assert (status, err.splitlines()[0]) == (1, f"{out}:1:1: --out: expected a directory, found a file")
    assert out.read_text(encoding="utf-8") == "keep me"


def test_an_output_below_a_file_is_a_located_error(tmp_path: Path, small_models: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    status, err = build(small_models, tmp_path / "file" / "site")
    assert status == 1
    assert err.splitlines()[0].startswith(f"{tmp_path / 'file' / 'site'}:1:1: --out: cannot write the site: ")
    assert "Traceback" not in err


def test_a_previous_build_and_an_empty_directory_are_replaced(tmp_path: Path, small_models: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    assert build(small_models, out)[0] == 0
    assert (out / MARKER).is_file()
    (out / "stale.html").write_text("from an older build", encoding="utf-8")
    assert build(small_models, out)[0] == 0
    assert not (out / "stale.html").exists()


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(lambda models: models, id="the cards"),
        pytest.param(lambda models: models.parent, id="the cards' parent"),
        pytest.param(lambda models: models.parent.parent, id="the cards' grandparent"),
        pytest.param(lambda models: Path(models.anchor), id="the file system root"),
        pytest.param(lambda models: ROOT, id="the project"),
        pytest.param(lambda models: ROOT.parent, id="the project's parent"),
        pytest.param(lambda models: ROOT / "models", id="the catalog"),
        pytest.param(lambda models: Path(), id="the working directory"),
        pytest.param(lambda models: Path(".."), id="the working directory's parent"),
    ],
)
def test_refuses_the_sources_and_every_directory_above_them(
    tmp_path: Path, small_models: Path, monkeypatch: pytest.MonkeyPatch, target
) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    before = snapshot(small_models)
    out = target(small_models)
    status, err = build(small_models, out)
    assert status == 1
    # The catalog, when it is not the --models of this build, is refused as a directory no build made.
    assert "--out: refusing to " in err.splitlines()[0], err
    assert snapshot(small_models) == before


@pytest.mark.parametrize(
    ("inside", "reads"),
    [
        pytest.param(lambda models: models / "site", lambda models: models, id="the cards"),
        pytest.param(lambda models: GENERATOR / "preview", lambda models: GENERATOR, id="the generator"),
        pytest.param(lambda models: TEMPLATES / "preview", lambda models: TEMPLATES, id="the templates"),
        pytest.param(lambda models: CONTENT / "en" / "site", lambda models: CONTENT, id="the texts"),
    ],
)
def test_refuses_a_site_inside_what_the_build_reads(small_models: Path, inside, reads) -> None:  # type: ignore[no-untyped-def]
    """A site written among its own inputs is read back: cards named *.yaml, files in the generator's
    fingerprint, and a `serve` that watches those folders rebuilds for ever."""
    before = snapshot(small_models)
    out = inside(small_models)
    status, err = build(small_models, out)
    assert status == 1
    assert err.splitlines()[0] == (
        f"{display_path(out)}:1:1: --out: refusing to write the site inside {reads(small_models)}, which the build "
        "reads: choose a directory outside it"
    )
    assert not out.exists() and snapshot(small_models) == before


def test_refuses_a_symlink_to_the_project(tmp_path: Path, small_models: Path) -> None:
    link = tmp_path / "looks-harmless"
    link.symlink_to(ROOT, target_is_directory=True)
    status, err = build(small_models, link)
    assert status == 1 and "refusing to write the site over" in err


# --- builds at the same time -----------------------------------------------------------------


def start_build(models: Path, out: Path, cwd: Path, options: Sequence[str] = NO_SEARCH) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator", "build", "--models", str(models), "--out", str(out), *options],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_two_builds_at_once_leave_one_complete_site(tmp_path: Path) -> None:
    # Two catalogs whose sites differ in their model pages and their pages about every model: a third of the
    # catalog, and a third of that. One edition: the lock and the swap are the site's, whatever cards and
    # editions it holds; eight builds of the whole catalog in two editions took a minute.
    options = [*NO_SEARCH, "--language", "en"]
    catalogs = {"more": tmp_path / "more", "fewer": tmp_path / "fewer"}
    for step, models in zip((3, 9), catalogs.values(), strict=True):
        models.mkdir()
        for card in sorted(MODELS.glob("*.yaml"))[::step]:
            shutil.copy(card, models)
    references = {}
    for name, models in catalogs.items():
        assert build(models, tmp_path / f"ref-{name}", options)[0] == 0
        references[name] = snapshot(tmp_path / f"ref-{name}")
    assert references["more"].keys() & references["fewer"].keys()  # a mix could take a file from each
    out = tmp_path / "site"
    assert build(catalogs["fewer"], out, options)[0] == 0
    for _ in range(3):
        first, second = (start_build(catalogs[name], out, tmp_path, options) for name in ("more", "fewer"))
        for process in (first, second):
            _, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
        final = snapshot(out)
        assert final in (references["more"], references["fewer"]), "a mix of two builds"
        leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site."))
        assert leftovers == [], leftovers


def test_a_build_waits_for_the_lock_before_it_swaps(tmp_path: Path, small_models: Path) -> None:
    out = tmp_path / "site"
    descriptor = os.open(tmp_path, os.O_RDONLY)  # what another build holds while it swaps
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        process = start_build(small_models, out, tmp_path)
        time.sleep(3)
        assert process.poll() is None, "the build went on without the lock"
        assert not out.exists()
    finally:
        os.close(descriptor)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert (out / MARKER).is_file()


def test_a_directory_taken_by_someone_else_meanwhile_is_not_replaced(tmp_path: Path, small_models: Path) -> None:
    # The first check passes (no site yet); while the build waits for the lock, a person puts files
    # there. The check made again under the lock must refuse them.
    out = tmp_path / "site"
    descriptor = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        process = start_build(small_models, out, tmp_path)
        time.sleep(3)
        out.mkdir()
        (out / "notes.txt").write_text("mine", encoding="utf-8")
    finally:
        os.close(descriptor)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "refusing to replace a non-empty directory that no build made" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_reused_staging_replaces_a_file_and_never_writes_through_its_link(tmp_path: Path) -> None:
    """A reused staging directory (see output.staged_site) holds links to the cache's blobs: a file written
    there replaces the link, and the blob keeps its content; a new staging directory writes as usual."""
    blob = tmp_path / "blob"
    blob.write_bytes(b"kept")
    for reused in (True, False):
        staged = tmp_path / f"staged-{reused}"
        (staged / "models").mkdir(parents=True)
        if reused:
            os.link(blob, staged / "models" / "a.csv")
        Staging(staged, reused).write("models/a.csv", b"new")
        assert (staged / "models" / "a.csv").read_bytes() == b"new"
    assert blob.read_bytes() == b"kept"


def test_ctrl_c_during_a_build_is_one_line_and_leaves_the_site(
    tmp_path: Path, small_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C once every file is staged, just before the swap: exit 130, one line instead of a
    traceback, the previous site as it was, and no staging folder left beside it."""
    out = tmp_path / "site"
    assert build(small_models, out) == (0, "")
    before = snapshot(out)

    def interrupted(self: object, made: object = None) -> tuple[int, int, int]:
        raise KeyboardInterrupt

    monkeypatch.setattr(Staging, "measure", interrupted)
    try:
        status, errors = build(small_models, out)
    except KeyboardInterrupt:  # caught here, or pytest would take it for the tester's own Ctrl-C and stop
        pytest.fail("Ctrl-C went through the command line as a traceback")
    assert (status, errors) == (130, f"\ninterrupted; {out}/ was left unchanged\n")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards", "site"]


def test_a_worker_stopped_by_ctrl_c_leaves_quietly() -> None:
    """Ctrl-C reaches every process of the terminal's group; a worker returns without a traceback of
    its own (the build's process reports the interruption)."""

    def work(number: int) -> int:
        raise KeyboardInterrupt

    tasks: Any = SimpleNamespace(get=iter([(0, 1), None]).__next__)
    results: Any = SimpleNamespace(put=lambda result: pytest.fail(f"a result was sent: {result}"))
    try:
        _serve(work, tasks, results)
    except KeyboardInterrupt:
        pytest.fail("the worker let Ctrl-C through, with a traceback of its own")
