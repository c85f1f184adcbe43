"""The style sheets' dark scheme changes colours and nothing else.

The browser tests run every axe-core rule in the light scheme and only the colour rules in the dark
one (``tests/browser/conftest.py``: ``COLOUR_RULES``). That holds only while a dark-scheme block sets
colours alone: a dark block that hid an element or moved it would need the full run in dark too.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

STATIC = ROOT / "templates" / "static"
DARK = re.compile(r"@media\s*\(prefers-color-scheme:\s*dark\)\s*\{")
# What a colour scheme may set: a custom property (the sheets name colours so), or a colour of its own.
COLOURS = re.compile(r"--[\w-]+|color|background(-color)?|border(-\w+)?-color|box-shadow|fill|stroke|outline-color")


def dark_declarations(css: str) -> list[str]:
    """The property names declared inside each dark-scheme block of a style sheet."""
    found = []
    for match in DARK.finditer(css):
        depth, start = 1, match.end()
        end = start
        while depth:
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            end += 1
        body = re.sub(r"/\*.*?\*/", "", css[start : end - 1], flags=re.S)
        for rule in re.findall(r"\{([^{}]*)\}", body):  # each rule's declarations, without its selector
            found += [d.split(":", 1)[0].strip() for d in rule.split(";") if ":" in d]
    return found


def test_the_dark_scheme_sets_colours_only() -> None:
    sheets = sorted(STATIC.glob("*.css"))
    declared = {path.name: dark_declarations(path.read_text(encoding="utf-8")) for path in sheets}
    assert any(declared.values()), "no style sheet has a dark scheme: the browser tests' split means nothing"
    for name, properties in declared.items():
        others = [p for p in properties if not COLOURS.fullmatch(p)]
        assert not others, f"{name}: its dark scheme sets {others}, not colours"


def test_the_check_sees_a_dark_block_that_sets_more_than_colours(tmp_path: Path) -> None:
    css = "a { color: red; }\n@media (prefers-color-scheme: dark) {\n  .x { display: none; color: #fff; }\n}\n"
    assert dark_declarations(css) == ["display", "color"]
