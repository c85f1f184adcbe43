"""A built wheel renders the site: the templates, static files and texts are package data.

The package reaches templates/, content/ and locales/ at the top of the repository through links,
generator/site/templates, generator/site/texts and generator/site/locales; setuptools copies what the links hold into a
wheel by the package-data patterns in pyproject.toml. A file those patterns miss would be in an
editable install and missing from a wheel, so every file of both folders is checked against them.
docs/site.md ("Installing from a wheel") gives the whole check, wheel built and installed.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import PurePosixPath

from conftest import ROOT
from generator.site.content import CONTENT
from generator.site.page import TEMPLATES
from generator.site.translation import LOCALES

PACKAGE = ROOT / "generator" / "site"


def _patterns() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    # Both generator/site/texts and generator/counting/texts link to content/: either package may carry a text.
    data = pyproject["tool"]["setuptools"]["package-data"]
    patterns: list[str] = data["generator.site"] + [p for p in data["generator.counting"] if p.startswith("texts/")]
    return patterns


def _packaged(path: PurePosixPath, patterns: list[str]) -> bool:
    """Whether a path below generator/site/ matches a package-data glob (``*`` stays within one folder)."""
    return any(
        len(path.parts) == len(PurePosixPath(p).parts)
        and all(fnmatch.fnmatchcase(part, glob) for part, glob in zip(path.parts, PurePosixPath(p).parts, strict=True))
        for p in patterns
    )


def test_the_links_reach_the_folders_at_the_top() -> None:
    assert (PACKAGE / "templates").is_symlink() and (ROOT / "templates").resolve() == TEMPLATES
    assert (PACKAGE / "texts").is_symlink() and (ROOT / "content").resolve() == CONTENT
    assert (PACKAGE / "locales").is_symlink() and (ROOT / "locales").resolve() == LOCALES


def test_every_template_static_file_and_text_is_package_data() -> None:
    patterns = _patterns()
    files = [
        PurePosixPath(link, path.relative_to(folder).as_posix())
        for link, folder in (("templates", TEMPLATES), ("texts", CONTENT), ("locales", LOCALES))
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    assert len(files) > 20
    assert [str(f) for f in files if not _packaged(f, patterns)] == []
    assert not _packaged(PurePosixPath("templates/base.html.orig"), patterns)  # the check can say no
