"""The command line as a user meets it: help, exit codes, no tracebacks, docs that match, and `serve`."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from conftest import MODELS, ROOT, snapshot
from generator.cards.card import load_card
from generator.cli import _parser
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters
from generator.site.page import source_date


def run(
    *args: str, cwd: Path, timeout: float | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m generator ARGS`` in ``cwd``, with ``env`` added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,  # for a command that would otherwise run until stopped (serve)
        env={**os.environ, **(env or {})},
    )


def test_help_for_every_command(tmp_path: Path) -> None:
    top = run("--help", cwd=tmp_path)
    assert top.returncode == 0 and "build" in top.stdout
    build = run("build", "--help", cwd=tmp_path)
    assert build.returncode == 0
    assert "--models DIR" in build.stdout and "--out DIR" in build.stdout
    imported = run("import", "--help", cwd=tmp_path)
    assert imported.returncode == 0
    assert "--id NAME" in imported.stdout and "--head HEAD" in imported.stdout and "--force" in imported.stdout


def test_docs_name_every_command_option_and_make_target() -> None:
    """docs/cli.md has a section for every command and names each of its options; the README names
    every command and every make target the Makefile declares."""
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    subcommands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(subcommands) == {"build", "import", "serve", "count"}
    for name, parser in subcommands.items():
        assert f"## python -m generator {name}\n" in cli, name
        assert f"python -m generator {name}" in readme, name
        for action in parser._actions:
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
                for option in action.option_strings or [action.metavar]:
                    assert f"`{option}" in cli, (name, option)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = next(line for line in makefile.splitlines() if line.startswith(".PHONY:")).split()[1:]
    assert {"site", "test", "check", "serve", "reference", "clean"} <= set(phony)
    for target in phony:
        assert f"`make {target}`" in readme, target


def test_build_from_another_directory_is_the_sessions_build(site: Path, tmp_path: Path) -> None:
    """`python -m generator build`, run outside the repository, writes what the session's in-process build wrote
    in the directory pytest runs in (tests/conftest.py): the site depends neither on the working directory
    nor on the way the build is started. Both have no date (no SOURCE_DATE_EPOCH) and a search index.
    The session's build is the English edition alone, so the command names that edition."""
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    command = [
        sys.executable,
        "-m",
        "generator",
        "build",
        "--models",
        str(MODELS),
        "--out",
        str(out),
        "--language",
        "en",
    ]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"built {len(list(MODELS.glob('*.yaml')))} models into ")
    assert Path.cwd() != tmp_path
    built = snapshot(out)
    assert any(name.startswith("pagefind/") for name in built)  # the search index is part of it
    assert (out / "models" / "bert-base-uncased" / "index.html").is_file()
    assert built == snapshot(site)


def test_bad_input_exits_non_zero_without_traceback(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "bad.yaml").write_text(
        "title: t\nfamily: bert\nhead: base\nconfig: {vocab_size: lots}\n", encoding="utf-8"
    )
    result = run("build", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "models/bad.yaml:4:22: config.vocab_size: expected a whole number from 0 to 2,147,483,647 (vocabulary size), "
        "found the string 'lots'",
        "error: 1 problem(s) in 1 file(s); site/ was left unchanged",
    ]
    assert not (tmp_path / "site").exists()


def test_a_malformed_source_date_epoch_stops_the_build_and_leaves_the_site(tmp_path: Path) -> None:
    """SOURCE_DATE_EPOCH dates the site. A value that is no date was dropped in silence (a negative
    number, a fraction) or stopped the build with a traceback (a number past the year 9999)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.yaml").write_text((MODELS / "bert-uncased-l2-h128-a2.yaml").read_text(encoding="utf-8"))
    flags = ("build", "--no-search", "--no-cache", "--jobs", "1")
    first = run(*flags, cwd=tmp_path, env={"SOURCE_DATE_EPOCH": "1763683200"})
    assert first.returncode == 0, first.stderr
    before = snapshot(tmp_path / "site")
    for value in ("abc", "-5", "1.5", "²", "253402300800", "99999999999999999"):
        result = run(*flags, cwd=tmp_path, env={"SOURCE_DATE_EPOCH": value})
        assert (result.returncode, result.stdout) == (1, ""), value
        assert result.stderr.splitlines() == [
            "error: SOURCE_DATE_EPOCH: expected a whole number of seconds since 1970-01-01 00:00 UTC, at most "
            f"253402300799 (the end of the year 9999), found {value!r}; site/ was left unchanged"
        ]
    assert snapshot(tmp_path / "site") == before


def test_source_date_epoch_reads_every_second_from_1970_to_the_end_of_9999() -> None:
    assert source_date("0") == datetime.date(1970, 1, 1)
    assert source_date(" 1763683200\n") == datetime.date(2025, 11, 21)
    assert source_date("253402300799") == datetime.date(9999, 12, 31)
    assert source_date("") is None and source_date("  ") is None  # set but empty: no date, as when unset


def test_count_writes_to_a_stdout_that_cannot_encode_its_symbols(tmp_path: Path) -> None:
    """An ASCII locale or a Windows code page cannot encode "×": the line is written with an escape,
    as Python writes stderr, instead of ending in a UnicodeEncodeError."""
    card = str(MODELS / "bert-base-uncased.yaml")
    result = run("count", card, "--seq", "128", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[:2] == [
        "bert-base-uncased: BertModel, 109,482,240 parameters",
        "batch 1 \\xd7 sequence 128 = 128 tokens",
    ]


def test_missing_models_directory(tmp_path: Path) -> None:
    result = run("build", "--models", "nowhere", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("nowhere:1:1: expected a directory of model cards (*.yaml), found none")


def test_serve_rebuilds_when_a_card_changes(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    card = models / "tiny.yaml"
    card.write_text(
        "title: Before\nfamily: bert\nhead: base\nconfig: {hidden_size: 64, num_attention_heads: 2}\n", encoding="utf-8"
    )
    with socket_port() as port:
        command = [
            sys.executable,
            "-m",
            "generator",
            "serve",
            "--models",
            str(models),
            "--out",
            str(tmp_path / "site"),
            "--port",
            str(port),
        ]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}/models/tiny/index.html"
        assert '<h1 id="top">Before</h1>' in fetch(url)
        card.write_text(card.read_text(encoding="utf-8").replace("Before", "After"), encoding="utf-8")
        deadline = time.monotonic() + 30
        while '<h1 id="top">After</h1>' not in fetch(url):
            assert time.monotonic() < deadline, "no rebuild within 30 s"
            time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=10)


class socket_port:  # noqa: N801 (used as a context manager, read as a value)
    """A free loopback port, released before the server binds it."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])

    def __exit__(self, *args: object) -> None:
        return None


def fetch(url: str, attempts: int = 100) -> str:
    for _ in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode("utf-8"))
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} never answered")


def test_count_prints_a_training_steps_record(tmp_path: Path) -> None:
    """`count --json` on BERT-Large at batch 32 and 512 tokens: a training step's FLOPs and memory, integers only,
    the engine's figures (tests/test_compute.py checks those against torch)."""
    result = run("count", str(MODELS / "bert-large-uncased.yaml"), "--batch", "32", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    figures = count_compute(load_card(MODELS / "bert-large-uncased.yaml")).at(32, 512)
    assert record == {
        "id": "bert-large-uncased",
        "family": "bert",
        "head": "base",
        "class": "BertModel",
        "parameters": 335_141_888,
        "method": "full",
        "trainable": 335_141_888,
        "batch": 32,
        "seq": 512,  # min(P, 512) by default
        "flops": {"forward": figures.forward, "backward": figures.backward},
        "activations": {"fp32": figures.activations["fp32"], "bf16": figures.activations["bf16"]},
        "training_memory": {
            "fp32": 16 * 335_141_888 + figures.activations["fp32"],
            "bf16_mixed": 16 * 335_141_888 + figures.activations["bf16"],
        },
    }
    text = run("count", str(MODELS / "bert-base-uncased.yaml"), "--seq", "128", cwd=tmp_path)
    assert text.returncode == 0
    assert text.stdout.splitlines()[:2] == [
        "bert-base-uncased: BertModel, 109,482,240 parameters",
        "batch 1 × sequence 128 = 128 tokens",
    ]


def test_count_gives_the_flops_per_token_exactly(tmp_path: Path) -> None:
    """TinyBERT's forward at b = 32, s = 512 is 191,065,165,824 FLOPs over 16,384 tokens: 11,661,692.25 a
    token, as the comparison prints it, not 11,661,692 (the quarter was dropped)."""
    card = MODELS / "tinybert-general-4l-312d.yaml"
    result = run("count", str(card), "--batch", "32", "--seq", "512", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    figures = count_compute(load_card(card)).at(32, 512)
    lines = [line for line in result.stdout.splitlines() if " FLOPs: " in line]
    assert len(lines) == 2
    for line, name, flops in zip(lines, ("forward", "backward"), (figures.forward, figures.backward), strict=True):
        shown, rest = line.split(" FLOPs: ")
        assert shown == name
        total, per_token = rest.removesuffix(" per token)").split(" (")
        assert int(total.replace(",", "")) == flops
        assert Fraction(per_token.replace(",", "")) == Fraction(flops, 32 * 512), line
    assert Fraction(figures.forward, 32 * 512).denominator == 4  # a fraction whose decimals end: shown whole


def test_count_of_a_model_transformers_cannot_train_gives_its_parameters_and_why(tmp_path: Path) -> None:
    """A RoBERTa whose pad_token_id is null: transformers builds it (its parameters are counted), but
    its step raises (RobertaEmbeddings numbers positions from the padding index): no step figure."""
    (tmp_path / "card.yaml").write_text(
        "id: no-pad\ntitle: No padding index\nfamily: roberta\nhead: base\n"
        "config: {hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128,\n"
        "  vocab_size: 100, max_position_embeddings: 40, pad_token_id: null}\n",
        encoding="utf-8",
    )
    parameters = count_parameters(load_card(tmp_path / "card.yaml")).total
    reason = "pad_token_id is null: RoBERTa numbers the positions from the padding index, and input_ids.ne(None) raises"
    text = run("count", "card.yaml", cwd=tmp_path)
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout.splitlines() == [
        f"no-pad: RobertaModel, {parameters:,} parameters",
        f"no training step: transformers builds this model, but a step of it raises: {reason}",
    ]
    record = json.loads(run("count", "card.yaml", "--json", cwd=tmp_path).stdout)
    assert record == {
        "id": "no-pad",
        "family": "roberta",
        "head": "base",
        "class": "RobertaModel",
        "parameters": parameters,
        "method": "full",
        "trainable": parameters,
        "batch": 1,
        "seq": 40,
        "flops": None,
        "activations": None,
        "training_memory": None,
        "no_step": f"transformers builds this model, but a step of it raises: {reason}",
    }


def test_count_gives_no_step_where_the_site_measured_none(tmp_path: Path) -> None:
    """The 2017 Transformer has no transformers class, and an activation whose saved tensors are not
    declared has no step: the model page says "Not measured" for both, and so does count, after the
    parameters (it printed figures for the first and failed with exit 1 on the second)."""
    shutil.copy(MODELS / "transformer-base.yaml", tmp_path / "t.yaml")
    text = run("count", "t.yaml", cwd=tmp_path)
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout.splitlines()[1] == (
        "no training step: no transformers class builds this model, so no step of it was measured against torch"
    )
    card = (MODELS / "bert-base-uncased.yaml").read_text(encoding="utf-8")
    (tmp_path / "mish.yaml").write_text(card.replace("hidden_act: gelu", "hidden_act: mish"), encoding="utf-8")
    record = json.loads(run("count", "mish.yaml", "--json", "--batch", "2", cwd=tmp_path).stdout)
    assert record["parameters"] == count_parameters(load_card(MODELS / "bert-base-uncased.yaml")).total
    assert (record["batch"], record["seq"], record["flops"]) == (2, 512, None)
    assert record["no_step"].startswith("config.hidden_act: 'mish' is not an activation function whose saved")


def test_count_refuses_bad_cards_and_values_without_traceback(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "bad.yaml").write_text(
        "title: t\nfamily: bert\nhead: base\nconfig: {vocab_size: lots}\n", encoding="utf-8"
    )
    bad = run("count", "models/bad.yaml", cwd=tmp_path)
    assert (bad.returncode, "Traceback" in bad.stderr) == (1, False)
    assert bad.stderr.startswith("models/bad.yaml:4:22: config.vocab_size: expected a whole number")
    long = run("count", str(MODELS / "bert-base-uncased.yaml"), "--seq", "513", cwd=tmp_path)
    assert long.returncode == 1 and "Traceback" not in long.stderr
    assert "--seq: expected at most max_position_embeddings (512)" in long.stderr and "found 513" in long.stderr
    zero = run("count", str(MODELS / "bert-base-uncased.yaml"), "--batch", "0", cwd=tmp_path)
    assert zero.returncode == 2 and "argument --batch: expected a whole number from 1 up, found '0'" in zero.stderr


def test_serve_on_a_port_in_use_says_so_before_building(tmp_path: Path) -> None:
    """The port is bound first: taken, it ends the command with one line and exit 1, before any build,
    where it was a traceback after the first build."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = str(tmp_path / "site")
        result = run("serve", "--models", str(MODELS), "--out", out, "--port", str(port), cwd=tmp_path, timeout=60)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"error: cannot serve on 127.0.0.1:{port}: Address already in use; choose another --port"
    ]
    assert not (tmp_path / "site").exists()


def test_serve_refuses_a_port_that_does_not_exist(tmp_path: Path) -> None:
    for port in ("0", "65536", "99999", "http"):
        result = run("serve", "--port", port, cwd=tmp_path, timeout=60)
        assert result.returncode == 2 and "Traceback" not in result.stderr, port
        assert result.stderr.splitlines()[-1] == (
            f"python -m generator serve: error: argument --port: expected a port number from 1 to 65535, found '{port}'"
        )


def test_build_refuses_a_base_url_that_is_no_web_address(tmp_path: Path) -> None:
    """--base-url makes the sitemap and the canonical links: "not a url" or a bare host name was taken
    as it was, and showed only once the site was published. A good address is kept as given."""
    bad = ("not a url", "example.org/atlas/", "ftp://example.org/", "https://", "javascript:alert(1)")
    bad += ("https://example.org/a b/", 'https://example.org/"><script>', "https://x.org/?v=1", "https://x.org/#top")
    for url in bad:
        result = run("build", "--base-url", url, cwd=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), url
        assert result.stderr.splitlines()[-1] == (
            "python -m generator build: error: argument --base-url: expected an absolute http:// or https:// "
            f"address without a query or fragment, such as https://user.github.io/repo/, found {url!r}"
        )
    assert not (tmp_path / "site").exists()
    parser = _parser()
    for url in ("https://user.github.io/repo/", "http://localhost:8000", "https://example.org/a%20b/"):
        assert parser.parse_args(["build", "--base-url", url]).base_url == url


# The command line as a user starts it: through the module, or the script pyproject.toml installs beside it.
PROGRAMS = {"module": [sys.executable, "-m", "generator"], "script": [str(Path(sys.executable).parent / "bert-atlas")]}


def count_run(
    tmp_path: Path, card: str = "bert-base-uncased", *more: str, program: str = "module", **streams: Any
) -> subprocess.CompletedProcess[str]:
    """``python -m generator count`` (or the script) on a catalog card, its streams (and ``env``,
    ``preexec_fn``) as given."""
    return subprocess.run(
        [*PROGRAMS[program], "count", str(MODELS / f"{card}.yaml"), *more],
        cwd=tmp_path,
        text=True,
        check=False,
        timeout=60,
        **streams,
    )


def test_count_into_a_pipe_whose_reader_has_left_stops_quietly(tmp_path: Path) -> None:
    """`count CARD | head -2` closes the pipe while count still writes: that was a BrokenPipeError
    traceback. Now nothing on stderr, and the status a shell gives a command stopped by SIGPIPE."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write fails
    try:
        result = count_run(tmp_path, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (141, "")


def test_count_started_with_its_output_closed_exits_as_it_always_did(tmp_path: Path) -> None:
    """With descriptor 1 closed, Python has no sys.stdout and print writes nothing: the command still
    exits 0 without a traceback (cli.leave flushes only the streams it has)."""
    result = count_run(tmp_path, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert (result.returncode, result.stderr) == (0, "")


def test_a_command_leaves_once_its_output_is_flushed(tmp_path: Path) -> None:
    """``python -m generator`` leaves by os._exit (cli.leave), skipping the interpreter's teardown: what was buffered
    for a pipe or a file must be out by then, every byte of it."""
    target = tmp_path / "count.json"
    with target.open("w") as out:
        buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as a user's output is
        result = count_run(tmp_path, "bert-large-uncased", "--json", stdout=out, env=buffered)
    assert result.returncode == 0
    assert json.loads(target.read_text())["parameters"] == 335_141_888


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full is Linux's")
@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_count_onto_a_full_disk_says_so_in_one_line(tmp_path: Path, unbuffered: str, program: str) -> None:
    """A write that fails for want of space was a traceback (written at once, unbuffered) or Python's
    "Exception ignored" with status 120 (on the flush at exit). Now one line and status 1, either way,
    from the module and from the bert-atlas script alike."""
    with Path("/dev/full").open("w") as full:
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONUNBUFFERED": unbuffered}
        result = count_run(tmp_path, program=program, stdout=full, stderr=subprocess.PIPE, env=env)
    assert (result.returncode, result.stderr) == (1, "error: cannot write the output: No space left on device\n")
