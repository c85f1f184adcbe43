"""The search index on a file system that lists a folder in the order its entries were made (tmpfs).

Pagefind numbers pages in the order its walk meets them. The build's workers write the pages'
stand-ins at once, in no fixed order; on ext4 that never showed, since a folder there lists its
entries by a hash of their names, but on a tmpfs (a /tmp kept in memory, as on Debian 13, Fedora and
Arch) two builds of the same cards wrote different indexes. tests/test_search.py checks the order
the shards are laid out in; this test builds twice on a real tmpfs.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest

from conftest import MODELS, snapshot
from generator.cli import main

SHM = Path("/dev/shm")


def _tmpfs(folder: Path) -> bool:
    """Whether ``folder`` is a mount point of a tmpfs this process may write in."""
    mounts = Path("/proc/mounts").read_text(encoding="utf-8") if Path("/proc/mounts").exists() else ""
    mounted = any(line.split()[1:3] == [str(folder), "tmpfs"] for line in mounts.splitlines() if line.strip())
    return mounted and os.access(folder, os.W_OK)


def test_two_builds_on_a_tmpfs_write_the_same_search_index(tmp_path: Path) -> None:
    if not _tmpfs(SHM):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHM} is no writable tmpfs on this CI machine")
        pytest.skip(f"{SHM} is no writable tmpfs here")
    cards = tmp_path / "cards"
    cards.mkdir()
    for card in sorted(MODELS.glob("*.yaml"))[:24]:  # enough for both processes to write stand-ins
        shutil.copy(card, cards)
    root = SHM / f"bert-atlas-test-{os.getpid()}"
    try:
        indexes = []
        for name in ("first", "second"):
            out = root / name
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                status = main(["build", "--models", str(cards), "--out", str(out), "--no-cache", "--jobs", "2"])
            assert status == 0
            indexes.append(snapshot(out / "pagefind"))
        assert indexes[0] == indexes[1]
        assert "pagefind-entry.json" in indexes[0] and "models-0/pagefind-entry.json" in indexes[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)
