"""The build cache: what a card, the pages about many models and the search index came to last time.

A rebuild after editing one card parses, counts and renders that card alone; every other file
is taken from the cache. Each entry's key is a digest of everything its files depend on: the
build's fingerprint (the generator's code, every file under templates/, content/ and locales/, the
options, the versions of Python and of the libraries that shape the output) and the entry's own
inputs (a card's path and text; for a page about many models, the keys of the cards it shows). A key that
names its inputs needs no invalidation: anything changed is a new key, and a stale entry is
simply never asked for.

On disk (``.cache/atlas/`` below the directory a build runs in unless ``--cache-dir`` says
otherwise, beside the project rather than in a per-user folder, so that ``make clean`` and
``rm -rf .cache`` clear it and each checkout keeps its own):

- ``blobs/ab/<digest>``: the content of one output file, named by its BLAKE2b digest; a build
  hard-links it into the staged site (a copy where linking fails) after checking that its size
  and modification time are those it was stored with, so that a blob altered in place (through
  its link in a site) is noticed, and written anew by the build that makes that file again.
- ``entries/ab/<key>``: a pickle of what the entry holds, after a header and its digest; one
  that does not match its digest, or does not unpickle, is ignored like a missing one. The
  cache is as trusted as the project's own code (a pickle can run code), never shared.
- ``spares/<digest of the output directory>``: the site the last build into that directory
  retired, which the next one starts from (``output.staged_site``); whatever it holds, that
  build keeps only the files it makes.

Every file is written to a temporary name in its folder and renamed into place, so a build that
stops half-way leaves no half-written file under a real name, and two builds at once at worst
write the same file twice: the one renamed last is as good as the other.

A key is only as true as the fingerprint, and the fingerprint is read from the files on disk,
while a build runs the code its process loaded. When the sources change under a running build
(an edit saved while it runs, or a test session that imported the generator before the edit),
what it made comes from code other than the fingerprint says. So entries are read only under a
seal, ``seals/<fingerprint>``, that a build writes at its end when the sources are still those
it loaded and fingerprinted, and removes when they are not: the next build then makes everything
again. Blobs are named by their content and stay true whatever wrote them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from generator.site.render import SiteOptions

DEFAULT_CACHE = Path(".cache/atlas")
GENERATOR = Path(__file__).resolve().parent.parent
# Raise when the layout of the cache changes; older entries then are never asked for.
FORMAT = b"bert-atlas-cache 1\n"
# The libraries whose versions can change a byte of the site: pyproject.toml's dependencies
# (tests/test_cache.py checks the list against it) and what they render with.
LIBRARIES = ("jinja2", "markdown", "nh3", "pyyaml", "pagefind", "pagefind-bin", "markupsafe", "babel")


def _digest(*parts: bytes) -> str:
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))
        hasher.update(part)
    return hasher.hexdigest()


def _files(folder: Path) -> Iterable[Path]:
    """Every file below a folder, in a fixed order, compiled-bytecode folders left out."""
    found = []
    for top, folders, names in os.walk(folder):  # a walk, not Path.rglob: a quarter of the time, every build
        folders[:] = [name for name in folders if name != "__pycache__"]
        found += [path for name in names if (path := Path(top, name)).is_file()]
    return sorted(found)


def _stamp(folders: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """Each source file's path, size and modification time: cheap enough to take when the process starts."""
    stamps = []
    for folder in folders:
        for path in _files(folder) if folder.is_dir() else ():
            found = path.stat()
            stamps.append((str(path), found.st_size, found.st_mtime_ns))
    return tuple(stamps)


# The sources as this process loaded them: the generator's modules are imported about now, and the
# families' words in content/ read with them (the templates are read later, during the build).
SOURCES = (GENERATOR, *(GENERATOR.parent / name for name in ("templates", "content", "locales")))
LOADED = _stamp(SOURCES)


def _version(name: str) -> str:
    import importlib.metadata  # here, not at the top: 35 ms a command that reads no cache need not pay

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def fingerprint(options: SiteOptions, folders: Iterable[Path] | None = None) -> str:
    """A digest of everything a build's output depends on besides the cards (the generator, templates/,
    content/ and locales/ unless ``folders`` are named)."""
    if folders is None:
        # Imported here: the command line names DEFAULT_CACHE, and ``count`` or ``--help`` need no site.
        from generator.site.content import CONTENT
        from generator.site.render import TEMPLATES
        from generator.site.translation import LOCALES

        folders = (GENERATOR, TEMPLATES, CONTENT, LOCALES)
    parts = [FORMAT, repr(options).encode(), sys.version.encode()]
    parts += [f"{name}=={_version(name)}".encode() for name in LIBRARIES]
    for folder in folders:
        for path in _files(folder):
            parts += [path.relative_to(folder).as_posix().encode(), path.read_bytes()]
    return _digest(*parts)


# Entries a process read, by key, each with its file's size, time and inode then (``Cache.load_again``).
Held = dict[str, tuple[tuple[int, int, int], Any]]


class Blob(NamedTuple):
    """A stored file: its content's digest (its name in the cache), and its size and time when it was stored."""

    name: str
    size: int
    modified: int  # st_mtime_ns


class Cache:
    """Entries and blobs below ``root``, keyed within one build's fingerprint."""

    def __init__(self, root: Path, fingerprint: str) -> None:
        self.root = root
        self.fingerprint = fingerprint.encode()
        self._seal = root / "seals" / fingerprint
        self._blobs = str(root / "blobs")
        self.sealed = self._seal.is_file()  # entries are read only under a seal (see the module's notes)

    def close(self) -> bool:
        """At the end of a build: seal its fingerprint when the sources are still those this process
        loaded, else break the seal, so that no build reads what this one stored. Returns whether the
        sources were unchanged.

        The sources' stamps are compared, not their text read again: the fingerprint was read after
        they were stamped on loading, so a source changed since then, before or after it was read,
        has another size or modification time now, as make and rsync tell a changed file."""
        unchanged = _stamp(SOURCES) == LOADED
        self.sealed = unchanged
        if unchanged:
            self._write(self._seal, b"")
        else:
            with contextlib.suppress(OSError):
                self._seal.unlink(missing_ok=True)
        return unchanged

    def spare(self, out: Path) -> Path:
        """Where the site a build into ``out`` retires waits for the next build (see ``output.staged_site``)."""
        return self.root / "spares" / _digest(str(out.resolve()).encode())

    def key(self, *parts: str | bytes) -> str:
        """The key of an entry made from ``parts`` (and the fingerprint)."""
        return _digest(self.fingerprint, *(p if isinstance(p, bytes) else p.encode() for p in parts))

    def _path(self, kind: str, name: str) -> Path:
        return self.root / kind / name[:2] / name

    def load(self, key: str) -> Any:
        """The value stored under ``key``, or None if there is none, it is damaged or foreign, or the
        fingerprint is not sealed."""
        if not self.sealed:
            return None
        try:
            data = self._path("entries", key).read_bytes()
        except OSError:
            return None
        header, checksum, payload = data[: len(FORMAT)], data[len(FORMAT) : len(FORMAT) + 40], data[len(FORMAT) + 40 :]
        if header != FORMAT or checksum != _digest(payload).encode():
            return None
        try:
            return pickle.loads(payload)
        except Exception:  # a damaged pickle can raise anything; it is only a miss
            return None

    def load_again(self, key: str, before: Held, now: Held) -> Any:
        """``load``, but a value ``before`` holds from the same file (its size, time and inode unchanged) is
        taken from there, not read and unpickled again; what is found goes into ``now``. For values that
        are never changed once loaded, in a process that builds again (serve's builder)."""
        if not self.sealed:
            return None
        try:
            found = self._path("entries", key).stat()
        except OSError:
            return None
        stamp = (found.st_size, found.st_mtime_ns, found.st_ino)
        held = before.get(key)
        value = held[1] if held is not None and held[0] == stamp else self.load(key)
        if value is not None:
            now[key] = (stamp, value)
        return value

    def store(self, key: str, value: Any) -> None:
        """Keep ``value`` under ``key`` (written whole or not at all)."""
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self._write(self._path("entries", key), FORMAT + _digest(payload).encode() + payload)

    def put(self, content: bytes) -> Blob:
        """Keep a file's content; return its blob."""
        name = _digest(content)
        path = self._path("blobs", name)
        try:
            stored = path.stat().st_size == len(content) and _digest(path.read_bytes()) == name
        except OSError:
            stored = False
        if not stored:  # missing, or altered since it was written: written anew
            self._write(path, content)
        try:
            found = path.stat()
        except OSError:
            return Blob(name, -1, -1)  # a cache that cannot be written: a blob no build will find
        return Blob(name, found.st_size, found.st_mtime_ns)

    def place(self, blob: Blob, target: str | Path) -> bool:
        """Link (or copy) a blob to ``target`` (in a folder that exists); False if it is missing or was altered.

        Whether it was altered is told as rsync and make tell it, by its size and modification
        time: a file written in place through a link in a site gets a new one.
        """
        path = f"{self._blobs}/{blob.name[:2]}/{blob.name}"  # a string: a rebuild places thousands of these
        try:
            found = os.stat(path)  # noqa: PTH116 (a string path: see above)
            if (found.st_size, found.st_mtime_ns) != (blob.size, blob.modified):
                return False
            try:
                os.link(path, target)
            except FileExistsError:
                there = os.stat(target)  # noqa: PTH116 (a string path: see above)
                if (there.st_ino, there.st_dev) == (found.st_ino, found.st_dev):
                    return True  # a link to this very blob already (a reused staging directory)
                os.unlink(target)  # noqa: PTH108  replaced, never written through: a link's content is the blob's
                os.link(path, target)
            except OSError:  # another file system, or too many links to one file
                shutil.copyfile(path, target)
        except OSError:
            return False
        return True

    def _write(self, path: Path, data: bytes) -> None:
        # A cache that cannot be written is only slower: the build goes on without it.
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=".new-", dir=path.parent)
            temporary = Path(name)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                temporary.chmod(0o644)
                temporary.replace(path)
            finally:
                temporary.unlink(missing_ok=True)
