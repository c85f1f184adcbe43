"""Lighthouse on the built site, served under a subpath with gzip as GitHub Pages serves it.

GitHub Pages compresses HTML, CSS, JavaScript and SVG with gzip; Python's ``http.server`` does
not, and Lighthouse then marks a long model page down for its transfer size (74 to 82 on BERT-Large's
page without compression, 100 with it). This serves ``site/`` (or ``--site``) from a
loopback port under ``/atlas/`` with ``Content-Encoding: gzip`` when the client accepts it, runs the
``lighthouse`` command (npm) on each page with Debian's Chromium, and prints the four scores.
Not part of ``make test``: ``.venv/bin/python bench/lighthouse.py`` after ``make site``.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SUBPATH = "atlas"
# The pages audited: the index, two model pages, a family page, the calculator, compare and search.
PAGES = [
    "index.html",
    "models/bert-base-uncased/index.html",
    "models/bert-large-uncased/index.html",
    "families/bert/index.html",
    "calculator/index.html",
    "compare/index.html",
    "search/index.html",
]
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
# The metrics the performance score is made of (Lighthouse 12), printed beside the scores by their usual names.
METRICS = {
    "first-contentful-paint": "FCP",
    "largest-contentful-paint": "LCP",
    "total-blocking-time": "TBT",
    "cumulative-layout-shift": "CLS",
    "speed-index": "SI",
}
# What GitHub Pages compresses (its documented gzip types that this site writes).
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".csv"}


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, gzip-compressed for clients that accept it, and no request log."""

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # what GitHub Pages sends
        self.end_headers()
        return _Body(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Body:
    """The compressed body, read once by ``copyfile``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:
        data, self.data = self.data, b""
        return data

    def close(self) -> None:
        pass


def run_lighthouse(url: str, chromium: str, preset: str) -> tuple[dict[str, int], dict[str, str], list[str]]:
    """The four category scores (0 to 100) of one page, its performance metrics as Lighthouse shows them,
    and the audits outside performance that cost it points (their ids), so a score below 100 says why."""
    command = ["lighthouse", url, "--quiet", "--output=json", "--output-path=stdout"]
    command += ["--chrome-flags=--headless=new --no-sandbox --disable-gpu"]
    command.append(f"--only-categories={','.join(CATEGORIES)}")
    if preset == "desktop":
        command.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": chromium}
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"lighthouse failed on {url}:\n{result.stderr[-2000:]}")
    report = json.loads(result.stdout)
    scores = {name: round(report["categories"][name]["score"] * 100) for name in CATEGORIES}
    metrics = {key: report["audits"][key]["displayValue"] for key in METRICS}
    failed = [
        ref["id"]
        for name in CATEGORIES
        if name != "performance"
        for ref in report["categories"][name]["auditRefs"]
        if ref.get("weight") and report["audits"][ref["id"]].get("score") not in (None, 1)
    ]
    return scores, metrics, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="the built site (default: site/)")
    parser.add_argument("--preset", choices=["mobile", "desktop"], default="mobile", help="Lighthouse's preset")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("pages", nargs="*", default=PAGES, help="addresses below the site root")
    args = parser.parse_args()
    if shutil.which("lighthouse") is None:
        print("lighthouse is not installed (npm install -g lighthouse)", file=sys.stderr)
        return 1
    if not (args.site / "index.html").is_file():
        print(f"{args.site}: no built site (make site)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as served:
        (Path(served) / SUBPATH).symlink_to(args.site.resolve(), target_is_directory=True)
        handler = functools.partial(GzipHandler, directory=served)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/{SUBPATH}/"
        print(f"{'page':<40} " + " ".join(f"{c:>14}" for c in CATEGORIES))
        worst = 100
        try:
            for page in args.pages:
                scores, metrics, failed = run_lighthouse(base + page, args.chromium, args.preset)
                worst = min(worst, *scores.values())
                row = f"{page:<40} " + " ".join(f"{scores[c]:>14}" for c in CATEGORIES)
                print(row + "   " + ", ".join(f"{METRICS[k]} {v}" for k, v in metrics.items()), flush=True)
                if failed:
                    print(f"{'':<40} failed: {', '.join(failed)}", flush=True)
        finally:
            server.shutdown()
    return 0 if worst == 100 else 1


if __name__ == "__main__":
    sys.exit(main())
