"""`serve` as a person editing a card meets it: the page open in the browser shows the new count by itself.

The reload script is the preview's: it is in the pages `serve` sends, never in the site's files.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from generator.build.serve import RELOAD, SCRIPT
from generator.cards.card import load_card
from generator.counting.inventory import count_parameters

CARD = (
    "title: Tiny\nfamily: bert\nhead: base\nconfig: {hidden_size: 64, num_attention_heads: 2, num_hidden_layers: 2}\n"
)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(url: str, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode("utf-8"))
        except OSError:
            assert time.monotonic() < deadline, f"{url} did not answer within {seconds} s"
            time.sleep(0.3)


def test_the_open_page_reloads_when_its_card_changes(tmp_path: Path, open_page: Any) -> None:
    models = tmp_path / "models"
    models.mkdir()
    card = models / "tiny.yaml"
    card.write_text(CARD, encoding="utf-8")
    edited = tmp_path / "tiny.yaml"  # the card as it will be edited, counted here before the page opens
    edited.write_text(CARD.replace("num_hidden_layers: 2", "num_hidden_layers: 3"), encoding="utf-8")
    before, after = (f"{count_parameters(load_card(path)).total:,}" for path in (card, edited))
    port = free_port()
    command = [sys.executable, "-m", "generator", "serve", "--models", "models", "--out", "site", "--port", str(port)]
    server = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/models/tiny/"
        served = wait_for(url)
        assert f'<script src="{SCRIPT}" data-version="' in served
        page = open_page()
        page.goto(url)
        shown = page.inner_text("body")
        assert before in shown and after not in shown

        card.write_bytes(edited.read_bytes())
        started = time.monotonic()
        page.wait_for_function("text => document.body.innerText.includes(text)", arg=after, timeout=30_000)
        print(f"the page showed the new count {time.monotonic() - started:.1f} s after the card was saved")
    finally:
        server.terminate()
        server.wait(timeout=10)
    written = [path for path in (tmp_path / "site").rglob("*") if path.is_file()]
    assert len(written) > 10
    assert not [
        path for path in written if SCRIPT.encode() in path.read_bytes() or RELOAD.encode() in path.read_bytes()
    ]
