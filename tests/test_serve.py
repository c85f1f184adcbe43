"""The preview server (generator/build/serve.py), without a browser: tests/browser/test_serve_reload.py
opens a page and watches it reload."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import generator.build.serve as serve_module
from conftest import MODELS, ROOT, snapshot
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
    fresh_builds: list[bool] = []

    class Recorded(serve_module.Builder):
        def build(self, *, fresh: bool) -> int | None:
            builds.append(card.read_text(encoding="utf-8"))
            fresh_builds.append(fresh)
            if len(builds) == 1:  # the author saves while the first build runs
                card.write_text("title: After\n", encoding="utf-8")
                os.utime(card, ns=(card.stat().st_mtime_ns + 10**9,) * 2)  # a new time even on a coarse clock
            return 0

    polls = iter(range(3))

    def sleep(seconds: float) -> None:
        if next(polls, None) is None:
            raise KeyboardInterrupt  # as Ctrl-C ends it

    monkeypatch.setattr(serve_module.time, "sleep", sleep)
    site = tmp_path / "site"
    assert serve_module.serve(models, site, 0, builder=Recorded(models, site)) == 0
    assert builds == ["title: Before\n", "title: After\n"]
    assert fresh_builds == [True, False]  # a new builder for the first build; a card's edit keeps it


def test_only_a_change_outside_the_cards_needs_a_new_builder(tmp_path: Path) -> None:
    """The builder kept between builds imported the generator, its templates and content as they were:
    a change to any of them (an edit, a new file, a file removed) needs a new one; the cards do not."""
    models, templates = tmp_path / "models", tmp_path / "templates"
    card, page = models / "a.yaml", templates / "model.html"
    before = {card: 1.0, page: 1.0}
    assert not serve_module.needs_fresh(before, {card: 2.0, page: 1.0}, models)
    assert not serve_module.needs_fresh(before, {card: 1.0, models / "b.yaml": 1.0, page: 1.0}, models)
    assert not serve_module.needs_fresh(before, {page: 1.0}, models)  # a card removed
    assert serve_module.needs_fresh(before, {card: 1.0, page: 2.0}, models)
    assert serve_module.needs_fresh(before, {card: 2.0, page: 1.0, templates / "new.html": 1.0}, models)
    assert serve_module.needs_fresh(before, {card: 1.0}, models)  # a template removed


def test_the_builder_stays_while_cards_change_and_builds_what_a_fresh_build_does(tmp_path: Path) -> None:
    """Kept from one build to the next, the builder writes the site a build from scratch writes, byte for
    byte; asked for a fresh one, or once its process has ended, it starts another."""
    models = tmp_path / "models"
    models.mkdir()
    for card_id in ("bert-base-uncased", "electra-small-generator"):
        (models / f"{card_id}.yaml").write_text((MODELS / f"{card_id}.yaml").read_text(encoding="utf-8"))
    site, fresh = tmp_path / "site", tmp_path / "fresh"
    builder = serve_module.Builder(models, site, "--cache-dir", str(tmp_path / "cache"))
    try:
        assert builder.build(fresh=True) == 0
        assert builder.process is not None
        kept = builder.process.pid
        card = models / "electra-small-generator.yaml"
        card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
        assert builder.build(fresh=False) == 0 and builder.process.pid == kept
        subprocess.run(
            [sys.executable, "-m", "generator", "build", "--models", str(models), "--out", str(fresh), "--no-cache"],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        assert snapshot(site) == snapshot(fresh)
        card.write_text("title: [unclosed\n")  # a bad card: the build fails, the builder stays
        assert builder.build(fresh=False) == 1 and builder.process.pid == kept
        card.write_text((MODELS / "electra-small-generator.yaml").read_text(encoding="utf-8"))
        assert builder.build(fresh=True) == 0 and builder.process.pid != kept
        builder.process.kill()
        builder.process.wait()
        assert builder.build(fresh=False) is None and builder.process is None  # it had ended: no status
        assert builder.build(fresh=False) == 0 and builder.process is not None  # and the next starts anew
    finally:
        builder.stop()


def test_the_builder_reports_each_build_and_a_ctrl_c_between_builds_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The child writes each build's status to its pipe. A terminal's Ctrl-C reaches it too: between
    builds (waiting for a request, or tidying up after one) it ends with 130 and says nothing, since no
    build was left undone; main's "interrupted; ... was left unchanged" is for a Ctrl-C during a build."""
    import gc

    from generator import cli

    args = cli._parser().parse_args(["build", "--out", str(tmp_path / "site")])
    statuses = iter([0, 1])
    monkeypatch.setattr(cli, "_build", lambda _: next(statuses))

    def served(requests: str | None) -> tuple[int, str]:
        """The exit status and what was written to the pipe, for these requests (None: a Ctrl-C)."""
        read, write = os.pipe()
        if requests is None:
            monkeypatch.setattr(sys, "stdin", type("Waiting", (), {"readline": staticmethod(interrupt)})())
        else:
            monkeypatch.setattr(sys, "stdin", io.StringIO(requests))
        try:
            code = cli._builds_on_request(args, write)
        except KeyboardInterrupt:  # as a failure of this test, not as the end of the whole run
            pytest.fail("a Ctrl-C between builds escaped the builder")
        with os.fdopen(read) as replies:
            return code, replies.read()

    def interrupt() -> None:
        raise KeyboardInterrupt

    assert served("build\nbuild\n") == (0, "0\n1\n")  # input closed: the child leaves
    assert served(None) == (130, "")  # waiting for a request
    monkeypatch.setattr(gc, "collect", interrupt)
    statuses = iter([0])
    assert served("build\n") == (130, "0\n")  # tidying up: the status went out before the Ctrl-C
    assert capsys.readouterr().err == ""
