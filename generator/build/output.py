"""Write a built site so that readers only ever see a complete one.

Everything is written into a fresh directory beside the target, then swapped in with two
renames. A build that fails before the swap leaves the previous site exactly as it was.
Builds that run at once take turns: each holds an exclusive lock (flock) on the directory
that holds the site while it writes and swaps, so the last one to finish leaves its whole
site, never a mix of two.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from generator.cards.problems import InputError, Location, Problem

MARKER = ".bert-atlas-site"


def check_output_dir(out: Path, protected: Sequence[Path], inputs: Sequence[Path] = ()) -> None:
    """Refuse an output directory that would overwrite sources or someone else's files, or that lies
    inside one of the build's ``inputs`` (the cards, the generator, its templates and texts): a site
    there would be read back as input (``serve`` watches those folders and would rebuild for ever)."""
    target = out.resolve()
    for path in protected:
        source = path.resolve()
        if target == source or target in source.parents:
            raise InputError(
                [Problem(Location(out), "--out", f"refusing to write the site over {path}: choose another directory")]
            )
    for path in inputs:
        if path.resolve() in target.parents:
            message = f"refusing to write the site inside {path}, which the build reads: choose a directory outside it"
            raise InputError([Problem(Location(out), "--out", message)])
    _check_replaceable(out)


def check_cache_dir(cache: Path, out: Path) -> None:
    """Refuse a cache inside the output directory (each build replaces that directory whole), and a cache
    that is not a directory (the build could keep nothing there and would run, every time, without one)."""
    target, folder = out.resolve(), cache.resolve()
    if folder == target or target in folder.parents:
        message = f"expected a directory outside {out}, found one in it"
        raise InputError([Problem(Location(cache), "--cache-dir", message)])
    # Walked as given, not resolved: resolving takes "notes.txt/../cache" for "cache", where the system finds
    # no folder (a file is on the way), and the build would run without its cache every time.
    path = Path(cache.anchor)
    for part in cache.parts[len(path.parts) :]:
        path = path / part
        try:
            if not path.exists() or path.is_dir():
                continue
        except OSError as error:
            message = f"expected a directory this build can reach, found {path}: {error.strerror}"
            raise InputError([Problem(Location(cache), "--cache-dir", message)]) from None
        found = "a file" if path == cache else f"a file at {path}"
        raise InputError(
            [Problem(Location(cache), "--cache-dir", f"expected a directory (or none yet), found {found}")]
        )


def _check_replaceable(out: Path) -> None:
    """Refuse to replace anything but a directory a build made (or an empty one)."""
    target = out.resolve()
    if target.exists() and not target.is_dir():
        raise InputError([Problem(Location(out), "--out", "expected a directory, found a file")])
    try:
        foreign = target.is_dir() and any(target.iterdir()) and not (target / MARKER).exists()
    except OSError as exc:
        raise InputError([Problem(Location(out), "--out", f"cannot read the directory: {exc.strerror}")]) from None
    if foreign:
        raise InputError(
            [
                Problem(
                    Location(out),
                    "--out",
                    f"refusing to replace a non-empty directory that no build made (no {MARKER} file)",
                )
            ]
        )


@contextlib.contextmanager
def _exclusive(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on a directory until the block ends (closing the descriptor frees it)."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


class Staging:
    """A site being written in a directory beside the target, invisible to readers until the swap.

    The directory is new, or, when ``reused``, the site a build before the last one left (see
    ``staged_site``): then any path may already hold a file, which the build replaces or keeps (a
    link to the very blob it places, see ``Cache.place``), and ``measure`` removes what it did not make.
    """

    def __init__(self, path: Path, reused: bool = False) -> None:
        self.path = path
        self.reused = reused
        self._folders: set[str] = set()  # made by this process: a build writes thousands of files into few

    def write(self, relative: str, content: bytes) -> None:
        target = in_folder(f"{self.path}/{relative}", self._folders)
        if self.reused:  # a file left there may be a link to a cached blob: replaced, never written through
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)  # noqa: PTH108 (a string path: see above)
        with open(target, "wb") as file:  # noqa: PTH123 (a string path: see above)
            file.write(content)

    def measure(self, made: set[str] | None = None) -> tuple[int, int, int]:
        """What is staged: files, HTML pages and bytes (a walk with ``os.scandir``: at thousands of files,
        ``Path.rglob`` and a ``stat`` for each spent a tenth of a rebuild). In a reused directory, every
        file but those ``made`` (paths below it) is removed first, and every folder left empty."""
        if not self.reused:
            made = None
        counts = [0, 0, 0]
        self._walk(str(self.path), len(str(self.path)) + 1, made, counts)
        return counts[0], counts[1], counts[2]

    def _walk(self, folder: str, start: int, made: set[str] | None, counts: list[int]) -> bool:
        """Count (and prune) below ``folder``; whether anything is left in it."""
        left = False
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if self._walk(entry.path, start, made, counts):
                        left = True
                    else:
                        os.rmdir(entry.path)  # noqa: PTH106 (a string path: see above)
                elif entry.name == MARKER and folder == str(self.path):
                    left = True
                elif made is not None and entry.path[start:] not in made:
                    os.unlink(entry.path)  # noqa: PTH108 (a string path: see above)
                else:
                    left = True
                    counts[0] += 1
                    counts[1] += entry.name.endswith(".html")
                    counts[2] += entry.stat(follow_symlinks=False).st_size
        return left


def in_folder(target: str, made: set[str]) -> str:
    """``target``, once the folder it goes in exists; ``made`` holds the folders this process made already.

    String paths and one ``mkdir`` a folder: a build writes or places thousands of files into few
    folders, and a ``Path`` and an ``mkdir`` for each file were a tenth of writing it.
    """
    folder = os.path.dirname(target)  # noqa: PTH120 (a string path: see above)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)  # noqa: PTH103 (a string path: see above)
        made.add(folder)
    return target


@contextlib.contextmanager
def staged_site(out: Path, spare: Path | None = None) -> Iterator[Staging]:
    """Write a site into a staging directory, then swap it in for ``out`` if the block ends normally.

    The staging directory sits beside ``out`` (so the swap is two renames on one file system)
    and is removed, leaving ``out`` untouched, if anything in the block raises. The lock on
    ``out``'s parent is held from start to swap: concurrent builds take turns.

    With ``spare`` (a folder of the build cache), the site that the swap retires is moved there
    instead of being removed, and the next build starts from it: with every file a link to a
    cached blob, a rebuild then links only what changed, and neither makes the site's thousands
    of folders and links again nor removes the old ones (a fifth of a rebuild at 1,000 cards).
    """
    given, out = out, out.resolve()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(out.parent):
            _check_replaceable(out)  # again: another build may have run since the first check
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
            reused = False
            if spare is not None and spare.is_dir():
                with contextlib.suppress(OSError):  # on another file system: a new directory, as without
                    spare.replace(staging)
                    reused = True
            try:
                yield Staging(staging, reused)
                _swap(staging, out, spare)
            finally:
                if staging.exists():
                    shutil.rmtree(staging)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        message = f"cannot write the site: {exc.strerror or exc}{where}"
        raise InputError([Problem(Location(given), "--out", message)]) from None


def _swap(staging: Path, out: Path, spare: Path | None) -> None:
    (staging / MARKER).write_text("Built by the BERT Parameter Atlas generator; safe to delete.\n", encoding="utf-8")
    staging.chmod(0o755)
    if out.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        out.replace(retired / out.name)
        staging.replace(out)
        if spare is not None:
            with contextlib.suppress(OSError):  # on another file system, or taken: removed below
                spare.parent.mkdir(parents=True, exist_ok=True)
                (retired / out.name).replace(spare)
        shutil.rmtree(retired)
    else:
        staging.replace(out)
