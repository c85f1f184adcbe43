"""``python -m generator serve``: a local preview that rebuilds itself when its inputs change.

Each rebuild is a ``build`` with the cache (see cache.py), so after editing a card only that card
is counted again. The builds run in a child interpreter that stays for the next build while only
cards change, so that an edit spares the imports and what the code alone works out (the compiled
templates, the families' tensor patterns); a change to the generator, its templates or its content
starts a new one, so that the change takes effect (``Builder``).

A page the preview serves carries one more line than the built file, a script that asks the
preview, by long polling, whether the page's file has changed since it was served, and reloads the
page when it has (as ``mkdocs serve`` and ``hugo server`` do). The script is added to the response
only; no file in the site has it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, TextIO

from generator.site.content import CONTENT
from generator.site.render import TEMPLATES
from generator.site.translation import LOCALES

WATCHED_SUFFIXES = {".yaml", ".yml", ".html", ".css", ".svg", ".py", ".json"}
# The preview's own addresses, outside any the site uses.
RELOAD = "/__atlas/reload"
SCRIPT = "/__atlas/reload.js"
# How long a poll is held open when nothing changes, and how often the page's file is looked at.
HOLD_SECONDS, LOOK_SECONDS = 25.0, 0.2
# How often the watched folders are looked at: a look at the catalog's 200 files takes about 5 ms,
# so an idle preview spends under 2% of a processor, and a saved card waits 0.15 s on average.
WATCH_SECONDS = 0.3
# Status 205 (Reset Content) tells the page to reload; 204 (No Content) to ask again.
RELOAD_SCRIPT = b"""(function () {
  var version = document.currentScript.dataset.version;
  var ask = "%s?page=" + encodeURIComponent(location.pathname) + "&version=" + version;
  function poll() {
    fetch(ask, { cache: "no-store" }).then(function (response) {
      if (response.status === 205) location.reload();
      else if (response.status === 204) poll();
      else setTimeout(poll, 1000);
    }, function () { setTimeout(poll, 1000); });
  }
  poll();
})();
""" % RELOAD.encode()


def _version(content: bytes) -> str:
    return hashlib.blake2b(content, digest_size=12).hexdigest()


class PreviewHandler(http.server.SimpleHTTPRequestHandler):
    """The site's files as they are on disk, HTML pages with the reload script, and the script's poll."""

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            # The page was closed or left while its poll was held: no answer to give, and nothing to report
            # (the server would print a traceback in the terminal of the person editing).
            self.close_connection = True

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path == SCRIPT:
            self._send(200, RELOAD_SCRIPT, "text/javascript; charset=utf-8")
        elif path == RELOAD:
            self._hold()
        elif (page := self._page(self.path)) is not None:
            content = page.read_bytes()
            tag = f'<script src="{SCRIPT}" data-version="{_version(content)}"></script>\n</body>'
            self._send(200, content.replace(b"</body>", tag.encode(), 1), "text/html; charset=utf-8")
        else:
            super().do_GET()

    def _page(self, url: str) -> Path | None:
        """The HTML file an address names, if it is one (a folder's address ending in / names its index)."""
        file = Path(self.translate_path(url))
        if url.split("?")[0].endswith("/"):
            file = file / "index.html"
        return file if file.suffix == ".html" and file.is_file() else None

    def _hold(self) -> None:
        """Answer 205 once the page's file differs from the version the page was served as, else 204 in time."""
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        page, version = query.get("page", [""])[0], query.get("version", [""])[0]
        deadline = time.monotonic() + HOLD_SECONDS
        while time.monotonic() < deadline:
            file = self._page(page)
            if file is not None and _version(file.read_bytes()) != version:
                self._send(205, b"", "text/plain")
                return
            time.sleep(LOOK_SECONDS)
        self._send(204, b"", "text/plain")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        if RELOAD not in self.path:  # the polls would fill the terminal
            super().log_message(format, *args)


def _snapshot(folders: list[Path]) -> dict[Path, float]:
    return {
        path: path.stat().st_mtime
        for folder in folders
        if folder.is_dir()
        for path in folder.rglob("*")
        if path.suffix in WATCHED_SUFFIXES and path.is_file()
    }


class Builder:
    """The preview's builds, each a ``build`` run by a child interpreter that stays for the next one.

    The child (``python -m generator build --serve-builds FD``) builds once for each line it reads,
    then writes the build's exit status to the pipe ``FD``. ``build(fresh=True)`` starts a new child
    first: the one kept has imported the generator, its templates and content as they were.
    """

    def __init__(
        self, models: Path, out: Path, *flags: str, python: str = sys.executable, cwd: Path | None = None
    ) -> None:
        """``flags``: more of ``build``'s options (``--cache-dir``, ``--quiet``); ``python`` and ``cwd``: the
        interpreter that runs the child, and where (bench/incremental.py times another project's)."""
        self.models, self.out, self.flags, self.python, self.cwd = models, out, flags, python, cwd
        self.process: subprocess.Popen[str] | None = None
        self.replies: TextIO | None = None  # the read end of the child's pipe of exit statuses

    def build(self, *, fresh: bool) -> int | None:
        """Build once; return the exit status, or None if the child ended without one (it is started
        again for the next build)."""
        if fresh:
            self.stop()
        if self.process is None:
            self._start()
        assert self.process is not None and self.process.stdin is not None and self.replies is not None
        try:
            self.process.stdin.write("build\n")
            self.process.stdin.flush()
            reply = self.replies.readline()
        except (BrokenPipeError, ValueError):
            reply = ""
        if not reply.strip().isdigit():
            self.stop()
            return None
        return int(reply)

    def stop(self) -> None:
        """End the child, if there is one (its input closed, it leaves once the build under way is done)."""
        if self.process is None:
            return
        process, self.process = self.process, None
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self.replies is not None:
            self.replies.close()
            self.replies = None

    def _start(self) -> None:
        read, write = os.pipe()
        command = [self.python, "-m", "generator", "build", "--models", str(self.models), "--out", str(self.out)]
        try:
            self.process = subprocess.Popen(
                [*command, *self.flags, "--serve-builds", str(write)],
                stdin=subprocess.PIPE,
                pass_fds=(write,),
                text=True,
                cwd=self.cwd,
            )
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)  # the child holds its own copy: its end closes the pipe when it leaves
        self.replies = os.fdopen(read, encoding="ascii")


def needs_fresh(before: dict[Path, float], now: dict[Path, float], models: Path) -> bool:
    """Whether a watched file outside ``models`` (the generator, its templates, its content) was added,
    removed or changed: the builder kept so far imported it as it was."""
    changed = {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}
    folder = models.resolve()
    return any(not path.resolve().is_relative_to(folder) for path in changed)


def serve(
    models: Path,
    out: Path,
    port: int,
    *,
    poll_seconds: float = WATCH_SECONDS,
    builder: Builder | None = None,
) -> int:
    """Build, serve ``out`` on 127.0.0.1, and rebuild on every change until interrupted."""
    builder = builder or Builder(models, out)
    folders = [models, TEMPLATES, CONTENT, LOCALES, Path(__file__).resolve().parent.parent]  # and the generator package
    # The handler resolves every request against the directory's path, so it serves whichever
    # site a rebuild has swapped in there.
    handler = functools.partial(PreviewHandler, directory=str(out.resolve()))
    try:  # before the first build: a port already taken is told at once, not after it
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        print(f"error: cannot serve on 127.0.0.1:{port}: {error.strerror}; choose another --port", file=sys.stderr)
        return 1
    # Taken before the first build: an edit saved while it runs, or as soon as the page is served, is
    # a change (taken after, it raced the first request and an edit could go unbuilt).
    seen = _snapshot(folders)
    try:
        builder.build(fresh=True)
        out.mkdir(parents=True, exist_ok=True)  # even if the first build failed, serve something
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"serving http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(poll_seconds)
                now = _snapshot(folders)
                if now != seen:
                    fresh = needs_fresh(seen, now, models)
                    seen = now
                    print("change seen; rebuilding", flush=True)
                    builder.build(fresh=fresh)
        except KeyboardInterrupt:
            server.shutdown()
    finally:
        builder.stop()
    return 0
