"""A folder that keeps each family's calculator document between processes, for runs that build many times.

Working a family's document takes most of a small build's time, and every ``python -m generator`` process
works it again. When the variable ATLAS_EXPORTS names a folder (the test suite sets it for the builds it
runs in subprocesses), a document is read from there if one is kept under its key, else worked and kept.
Unset, nothing is read or written.

A key is a digest of everything a document is made from: its family and language, the generator's code,
content/ (the families' words), and the versions of Python and PyYAML. A document is kept only when those
sources are still the ones this process loaded, so that no key ever names a document made by other code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ParamSpec

import yaml

from generator.counting import texts

P = ParamSpec("P")
VARIABLE = "ATLAS_EXPORTS"
GENERATOR = Path(__file__).resolve().parent.parent
FOLDER = os.environ.get(VARIABLE)  # read once; None (a process may set it so) keeps nothing


def _files(folder: Path) -> list[Path]:
    """Every file below a folder, in a fixed order, without following links or compiled bytecode."""
    found = []
    for top, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name != "__pycache__"]
        found += [path for name in names if (path := Path(top, name)).is_file()]
    return sorted(found)


def _sources() -> tuple[Path, ...]:
    return (GENERATOR, texts.CONTENT)


def _stamp() -> tuple[tuple[str, int, int], ...]:
    """Each source file's path, size and modification time."""
    stamps = []
    for folder in _sources():
        for path in _files(folder):
            found = path.stat()
            stamps.append((str(path), found.st_size, found.st_mtime_ns))
    return tuple(stamps)


LOADED = _stamp() if FOLDER else ()  # the sources as this process loads them, stamped as the generator is imported


@functools.cache
def _fingerprint() -> bytes:
    hasher = hashlib.blake2b(digest_size=20)
    hasher.update(f"{sys.version}\0{yaml.__version__}\0".encode())
    for folder in _sources():
        for path in _files(folder):
            data = path.read_bytes()
            hasher.update(f"{path.relative_to(folder).as_posix()}\0{len(data)}\0".encode())
            hasher.update(data)
    return hasher.digest()


def _key(parts: Iterable[str]) -> str:
    hasher = hashlib.blake2b(_fingerprint(), digest_size=20)
    for part in parts:
        hasher.update(f"{len(part)}\0{part}".encode())
    return hasher.hexdigest()


def keep_exports(export: Callable[P, str]) -> Callable[P, str]:
    """``export``, its text kept in the folder ATLAS_EXPORTS names under its arguments (unchanged when unset)."""

    @functools.wraps(export)
    def kept(*args: P.args, **kwargs: P.kwargs) -> str:
        if not FOLDER:
            return export(*args, **kwargs)
        path = Path(FOLDER, _key((export.__qualname__, repr(args), repr(sorted(kwargs.items())))))
        try:
            return path.read_bytes().decode("utf-8")
        except OSError:
            pass
        text = export(*args, **kwargs)
        if _stamp() == LOADED:  # else the code that made it may not be the code the key names
            _write(path, text.encode("utf-8"))
        return text

    return kept


def _write(path: Path, data: bytes) -> None:
    """Write whole or not at all: to a temporary name, then renamed, whoever else writes the same key at once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".", delete=False) as file:
            file.write(data)
        Path(file.name).replace(path)
    except OSError:  # a folder that cannot be written keeps nothing; the document is still right
        pass
