"""``python -m generator serve``: a local preview that rebuilds itself when its inputs change."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
import time
from pathlib import Path

from generator.site.content import CONTENT
from generator.site.render import TEMPLATES

WATCHED_SUFFIXES = {".yaml", ".yml", ".html", ".css", ".svg", ".py", ".json"}


def _snapshot(folders: list[Path]) -> dict[Path, float]:
    return {
        path: path.stat().st_mtime
        for folder in folders
        if folder.is_dir()
        for path in folder.rglob("*")
        if path.suffix in WATCHED_SUFFIXES and path.is_file()
    }


def _build(models: Path, out: Path) -> None:
    # A fresh interpreter each time, so that edits to the generator's own modules take effect.
    command = [sys.executable, "-m", "generator", "build", "--models", str(models), "--out", str(out)]
    subprocess.run(command, check=False)


def serve(models: Path, out: Path, port: int, *, poll_seconds: float = 1.0) -> int:
    """Build, serve ``out`` on 127.0.0.1, and rebuild on every change until interrupted."""
    folders = [models, TEMPLATES, CONTENT, Path(__file__).resolve().parent.parent]  # and the whole generator package
    _build(models, out)
    out.mkdir(parents=True, exist_ok=True)  # even if the first build failed, serve something
    # The handler resolves every request against the directory's path, so it serves whichever
    # site a rebuild has swapped in there.
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out.resolve()))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"serving http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
    seen = _snapshot(folders)
    try:
        while True:
            time.sleep(poll_seconds)
            now = _snapshot(folders)
            if now != seen:
                seen = now
                print("change seen; rebuilding", flush=True)
                _build(models, out)
    except KeyboardInterrupt:
        server.shutdown()
    return 0
