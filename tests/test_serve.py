"""The preview server (generator/build/serve.py), without a browser: tests/browser/test_serve_reload.py
opens a page and watches it reload."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

import generator.build.serve as serve_module
from generator.build.serve import RELOAD, PreviewHandler


class Gone(io.RawIOBase):
    """A connection whose reader has left: every write fails, as a closed browser tab makes it."""

    def __init__(self, error: type[OSError]) -> None:
        self.error = error

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise self.error(32, "the reader has left")


@pytest.mark.parametrize("error", [BrokenPipeError, ConnectionResetError])
def test_a_page_closed_while_its_poll_is_held_ends_the_poll_quietly(
    tmp_path: Path, error: type[OSError], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index.html").write_text("<html><body>changed since</body></html>", encoding="utf-8")
    handler = PreviewHandler.__new__(PreviewHandler)  # no socket: the request is read from memory
    handler.directory = str(tmp_path)
    handler.client_address, handler.server = ("127.0.0.1", 0), None  # type: ignore[assignment]
    handler.rfile = io.BytesIO(f"GET {RELOAD}?page=/index.html&version=older HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    handler.wfile = Gone(error)  # type: ignore[assignment]
    handler.close_connection = False
    handler.handle_one_request()  # the page changed: the answer is 205, and writing it fails
    assert handler.close_connection
    assert "Traceback" not in capsys.readouterr().err


def test_an_edit_saved_during_the_first_build_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """serve compares the watched files against what it saw before the first build: a card saved while
    that build runs (or as soon as the first page is served) is built again. It looked only after the
    first build, so such an edit was taken as already built, and the page stayed as it was."""
    models = tmp_path / "models"
    models.mkdir()
    card = models / "tiny.yaml"
    card.write_text("title: Before\n", encoding="utf-8")
    builds: list[str] = []

    def build(models_dir: Path, out: Path) -> None:
        builds.append(card.read_text(encoding="utf-8"))
        if len(builds) == 1:  # the author saves while the first build runs
            card.write_text("title: After\n", encoding="utf-8")
            os.utime(card, ns=(card.stat().st_mtime_ns + 10**9,) * 2)  # a new time even on a coarse clock

    polls = iter(range(3))

    def sleep(seconds: float) -> None:
        if next(polls, None) is None:
            raise KeyboardInterrupt  # as Ctrl-C ends it

    monkeypatch.setattr(serve_module, "_build", build)
    monkeypatch.setattr(serve_module.time, "sleep", sleep)
    assert serve_module.serve(models, tmp_path / "site", 0) == 0
    assert builds == ["title: Before\n", "title: After\n"]
