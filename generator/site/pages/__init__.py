"""Page kinds beyond the core ones; each module here defines ``pages(models, language) -> list[Page]``.

A page kind takes its sentences from ``content/<language>/`` (``generator.site.content``), so the
same function builds it in every language; tests/test_content.py builds each in each language.

The registry finds them by itself, so adding a page kind edits no other module. It imports
none of them by name: a page kind imports ``generator.site.page``, never this registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Protocol

from generator.site.page import Page, Piece
from generator.site.views import Summary


class PageKind(Protocol):
    """A page kind's ``pages`` function: its pages for these models, in one language of content/."""

    def __call__(self, models: Sequence[Summary], language: str = ...) -> list[Page]: ...


def _modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)
    ]


def discover_files() -> list[Callable[[str], list[Piece]]]:
    """The optional ``files(language)`` function of each page kind: the pieces of work that make the data a
    page loads (JSON, ...), from the code and the language alone, never from the cards (a build with a
    cache makes them once per code version)."""
    return [module.files for module in _modules() if hasattr(module, "files")]


def discover_prepare() -> list[Callable[[str], None]]:
    """The optional ``prepare(language)`` function of each page kind: work its ``pages`` would do anyway
    that needs no model (remembered in this process), which a build runs while its workers count the cards."""
    return [module.prepare for module in _modules() if hasattr(module, "prepare")]


def discover_pages() -> list[PageKind]:
    """The ``pages`` function of every page kind, in module-name order."""
    return [module.pages for module in _modules()]
