"""Long builds talk on a terminal and stay quiet elsewhere; --quiet and --verbose do what they say."""

from __future__ import annotations

import io
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MODELS
from generator.build.progress import Progress
from generator.site import content

STAGES = ["reading cards", "model pages", "other pages", "search index"]
# What the build prints does not depend on how many cards it reads: a few, of four families, are
# built in a fraction of the catalog's time.
CARDS = ("albert-base-v2", "bert-base-uncased", "distilbert-base-uncased", "roberta-base")


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cards")
    for card in CARDS:
        shutil.copy(MODELS / f"{card}.yaml", folder)
    return folder


def run(models: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "generator", "build", "--models", str(models), "--no-search", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def test_not_a_terminal_means_no_progress(models: Path, tmp_path: Path) -> None:
    result = run(models, "--out", str(tmp_path / "site"), cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr == ""
    assert result.stdout.count("\n") == 1 and result.stdout.startswith(f"built {len(CARDS)} models into site/: ")


def test_quiet_prints_nothing(models: Path, tmp_path: Path) -> None:
    result = run(models, "--out", str(tmp_path / "site"), "--quiet", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_verbose_names_every_stage_with_its_time(models: Path, tmp_path: Path) -> None:
    result = run(models, "--out", str(tmp_path / "site"), "--verbose", cwd=tmp_path)
    lines = result.stderr.splitlines()
    # Every edition's model pages are written together; then each edition after the first is announced before
    # its other pages.
    others = [stage for code in content.editions()[1:] for stage in (f"the {code} edition, in {code}/", STAGES[2])]
    assert [line.split(":")[0] for line in lines] == [*STAGES[:3], *others]
    assert lines[0].startswith(f"reading cards: {len(CARDS)} cards in ") and lines[0].endswith(" s")


def test_quiet_and_verbose_exclude_each_other(models: Path, tmp_path: Path) -> None:
    result = run(models, "--quiet", "--verbose", cwd=tmp_path)
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_a_terminal_sees_a_live_line(models: Path, tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    command = [
        sys.executable,
        "-m",
        "generator",
        "build",
        "--models",
        str(models),
        "--no-search",
        "--out",
        str(tmp_path / "s"),
    ]
    terminal = {**os.environ, "TERM": "xterm-256color"}  # as a terminal emulator sets it (CI may say "dumb")
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=follower, env=terminal)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert process.wait(timeout=60) == 0
    text = seen.decode("utf-8")
    cards = len(CARDS)
    assert f"\r\x1b[Kreading cards: {cards}/{cards}" in text
    assert f"\r\x1b[Kmodel pages: {cards}/{cards}" in text and "\r\x1b[Kother pages" in text
    assert text.endswith("\r\x1b[K")  # the live line is cleared before the summary


def test_progress_records_stage_times_without_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress.for_terminal(quiet=False, verbose=False, stream=stream)
    progress.start("counting")
    progress.advance(1, 2)
    progress.finish("2 tensors")
    assert stream.getvalue() == "" and set(progress.timings) == {"counting"}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_dumb_terminal_gets_no_live_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """TERM=dumb (an editor's shell) prints escapes as they are: no live line there, the summary alone."""
    for term, live in (("xterm-256color", True), ("dumb", False)):
        monkeypatch.setenv("TERM", term)
        stream = Terminal()
        progress = Progress.for_terminal(quiet=False, verbose=False, stream=stream)
        progress.start("counting")
        progress.advance(2, 2)
        assert (progress.live, "\x1b[K" in stream.getvalue()) == (live, live), term
