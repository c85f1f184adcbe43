"""The Makefile: its quick loop, and its dates outside a git checkout.

`make quick` leaves out the tiers that tests/conftest.py gives the tests a browser or a site needs.
Outside a git checkout (an archive from GitHub's "Download ZIP"), the pages' date comes from the last commit (`git log`); an archive has none. The Makefile exported
SOURCE_DATE_EPOCH empty then, and setuptools, building the package for `make site`, read it with
int(): "invalid literal for int() with base 10: ''", so `make site` failed before building anything.
The recipes below are added with `--eval`, so the test runs none of the Makefile's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

SHOW = 'show: ; @echo "[$${SOURCE_DATE_EPOCH-unset}]"'


def seen_by_recipes(folder: Path, **environment: str) -> str:
    """What a recipe of the Makefile copied into ``folder`` sees of SOURCE_DATE_EPOCH ("unset" if nothing)."""
    env = {key: value for key, value in os.environ.items() if key != "SOURCE_DATE_EPOCH"} | environment
    env["GIT_CEILING_DIRECTORIES"] = str(folder.parent)  # git looks no higher: the folder is in no checkout
    result = subprocess.run(
        ["make", "--no-print-directory", "--eval", SHOW, "show"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout.strip()


def test_outside_a_checkout_no_empty_date_reaches_the_recipes(tmp_path: Path) -> None:
    if shutil.which("make") is None:  # the README's two commands are make's: CI always has it
        pytest.fail("make is not installed")
    archive = tmp_path / "bert-parameter-atlas-main"
    archive.mkdir()
    shutil.copy(ROOT / "Makefile", archive)
    assert seen_by_recipes(archive) == "[unset]"
    assert seen_by_recipes(archive, SOURCE_DATE_EPOCH="") == "[unset]"  # set but empty: the same
    assert seen_by_recipes(archive, SOURCE_DATE_EPOCH="1763683200") == "[1763683200]"  # a date given is kept


def test_quick_leaves_out_every_tier_that_needs_a_browser_or_a_site(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.fail("make is not installed")
    shutil.copy(ROOT / "Makefile", tmp_path)
    (tmp_path / "pyproject.toml").touch()  # what the test extra's stamp depends on
    recipe = subprocess.run(
        ["make", "--no-print-directory", "--dry-run", "--always-make", "quick", "VENV=.venv-none"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()[-1]
    assert recipe.startswith(".venv-none/bin/python -m pytest ")
    assert recipe.endswith(' -m "not browser and not site and not slow"')
