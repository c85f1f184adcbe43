"""A space beside a filled-in value that stays only where the value meets Latin text.

Chinese writes a space between Han and Latin letters or digits, and none between two Han
characters. A translator cannot know which a value will be: a step is "保存 Wi 的输出" in one
model and "保存输入" in another. So a Chinese text writes a space beside each placeholder, as if
the value were Latin (``一个 %(block)s 的``). When the catalog or the content is read, such a space
becomes SOFT_SPACE; when the page is tidied, each one becomes a space, or nothing between two Han
characters. The calculator's script does the same for the texts it fills in.
"""

from __future__ import annotations

import re

# The languages whose texts are written so: no space between two Han characters, nor beside their marks.
SPACELESS = frozenset({"zh"})
SOFT_SPACE = "\ue000"  # a private-use character: never in a text anyone writes
HAN = "\u3400-\u4dbf\u4e00-\u9fff"  # the CJK ideographs, with extension A
# A placeholder as catalogs (%(name)s) and content files ({name}) write it.
_PLACEHOLDER = r"(?:%\(\w+\)[sd]|\{\w+(?:[:!][^{}]*)?\})"
_BESIDE = re.compile(rf"(?<=[{HAN}]) +(?={_PLACEHOLDER})|(?<=[sd}}]) +(?=[{HAN}])")
_AFTER_PLACEHOLDER = re.compile(rf"{_PLACEHOLDER}$")
_IS_HAN = re.compile(f"[{HAN}]")


def soften(text: str, language: str) -> str:
    """``text`` with each space between a Han character and a placeholder made SOFT_SPACE, in a language
    of SPACELESS; else as it is."""

    def replaced(found: re.Match[str]) -> str:
        before = text[: found.start()]
        if _IS_HAN.fullmatch(text[found.start() - 1]) or _AFTER_PLACEHOLDER.search(before):
            return SOFT_SPACE
        return found.group()

    return _BESIDE.sub(replaced, text) if language in SPACELESS and " " in text else text


def resolved(before: str, after: str) -> str:
    """What a SOFT_SPACE between the characters ``before`` and ``after`` becomes."""
    return "" if _IS_HAN.fullmatch(before or " ") and _IS_HAN.fullmatch(after or " ") else " "
