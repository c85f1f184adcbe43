"""The preview server (generator/build/serve.py), without a browser: tests/browser/test_serve_reload.py
opens a page and watches it reload."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

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
