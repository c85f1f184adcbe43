"""A failed search index is a build error of its own: reported plainly, exit 1, the previous site untouched.

Pagefind is replaced by a script that fails the way a real run can (a message on stderr, a
non-zero exit), so the test needs no broken disk to happen.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import generator.site.render
import generator.site.search
from conftest import MODELS
from generator.cli import main


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run(*args: str) -> tuple[int, str]:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = main(["build", *args])
    return status, stderr.getvalue()


class FailingPagefind:
    def __init__(self, script: Path) -> None:
        self.script = script

    def get_executable(self) -> Path:
        return self.script


def test_a_failed_search_index_stops_the_build_and_leaves_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cards = tmp_path / "cards"
    cards.mkdir()
    shutil.copy(MODELS / "bert-uncased-l2-h128-a2.yaml", cards)
    out = tmp_path / "site"
    status, errors = run("--models", str(cards), "--out", str(out), "--no-search", "--jobs", "1")
    assert (status, errors) == (0, "")
    before = snapshot(out)
    assert "index.html" in before

    script = tmp_path / "pagefind"
    script.write_text(
        "#!/bin/sh\necho 'Building search indexes' >&2\necho 'Error: No space left on device' >&2\nexit 3\n"
    )
    script.chmod(0o755)
    monkeypatch.setattr(generator.site.search, "pagefind_bin", FailingPagefind(script))

    status, errors = run("--models", str(cards), "--out", str(out), "--jobs", "1")
    assert status == 1
    assert errors.splitlines()[-1] == (
        f"error: the search index could not be built: Error: No space left on device; {out}/ was left unchanged"
    )
    assert "staging" not in errors and ":1:1" not in errors  # no invented input location
    assert snapshot(out) == before


def test_a_build_that_fails_while_pagefind_indexes_the_models_leaves_none_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind starts on the model records before the pages about many models are made; when making them
    fails, the build reports that failure and stops the Pagefind it started instead of leaving it behind."""
    cards = tmp_path / "cards"
    cards.mkdir()
    shutil.copy(MODELS / "bert-uncased-l2-h128-a2.yaml", cards)
    out = tmp_path / "site"
    pids = tmp_path / "pids"
    script = tmp_path / "pagefind"  # a Pagefind that would run for a minute, and says which process it is
    script.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 60\n")
    script.chmod(0o755)
    monkeypatch.setattr(generator.site.search, "pagefind_bin", FailingPagefind(script))

    def fail(self: object, models: object) -> list[object]:
        deadline = time.perf_counter() + 20
        # Pagefind is at work once its line is written: the file exists from the moment the shell opens it,
        # and a build stopped before the write would leave it empty (seen once in CI).
        while not (pids.exists() and pids.read_text().endswith("\n")) and time.perf_counter() < deadline:
            time.sleep(0.01)
        raise OSError("the disk went away")

    monkeypatch.setattr(generator.site.render.Renderer, "site_files", fail)
    started = time.perf_counter()
    status, errors = run("--models", str(cards), "--out", str(out), "--jobs", "1")
    assert time.perf_counter() - started < 30  # not held until the minute is up
    assert status == 1 and "cannot write the site: the disk went away" in errors
    running = [int(pid) for pid in pids.read_text().split()]
    assert len(running) == 1  # the one model shard was being indexed when the build failed
    with pytest.raises(ProcessLookupError):
        os.kill(running[0], 0)  # stopped, and waited for: no such process left
    assert not out.exists()


def test_the_index_is_made_beside_the_site_so_a_temporary_folder_elsewhere_cannot_break_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind's bundles are renamed into the staged site, which fails across file systems: with the
    scratch folder in the system's temporary folder, a /tmp kept in memory (Debian 13, Fedora, Arch) broke
    every build with search ("Invalid cross-device link"). The scratch folder now sits beside the site;
    here the system's temporary folder does not exist at all, and the build does not notice."""
    cards = tmp_path / "cards"
    cards.mkdir()
    shutil.copy(MODELS / "bert-uncased-l2-h128-a2.yaml", cards)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-temporary-folder"))
    out = tmp_path / "site"
    status, errors = run("--models", str(cards), "--out", str(out), "--jobs", "1", "--no-cache")
    assert (status, errors) == (0, "")
    entry = json.loads((out / "pagefind" / "pagefind-entry.json").read_text(encoding="utf-8"))
    assert entry["languages"]["en"]["page_count"] > 0
    assert (out / "pagefind" / "models-0" / "pagefind-entry.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards", "site"]  # the scratch folder is gone
