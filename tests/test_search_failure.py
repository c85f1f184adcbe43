"""A failed search index is a build error of its own: reported plainly, exit 1, the previous site untouched.

Pagefind is replaced by a script that fails the way a real run can (a message on stderr, a
non-zero exit), so the test needs no broken disk to happen.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
from pathlib import Path

import pytest

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
