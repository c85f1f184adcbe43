"""The command line as a user meets it: help, exit codes, no tracebacks, docs that match."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from conftest import MODELS, ROOT
from generator.cli import _parser


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True, check=False
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


def test_readme_documents_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    subcommands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(subcommands) == {"build", "import", "serve"}
    for name in subcommands:
        assert f"python -m generator {name}" in readme, name
    for target in ("site", "test", "serve", "check", "reference", "clean"):
        assert f"make {target}" in readme, target


def test_build_from_another_directory(tmp_path: Path) -> None:
    result = run("build", "--models", str(MODELS), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"built {len(list(MODELS.glob('*.yaml')))} models into ")
    assert (tmp_path / "out" / "models" / "bert-base-uncased" / "index.html").is_file()


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


def test_missing_models_directory(tmp_path: Path) -> None:
    result = run("build", "--models", "nowhere", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("nowhere:1:1: expected a directory of model cards (*.yaml), found none")
