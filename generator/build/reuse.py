"""What a build takes from its cache, and what it leaves there for the next one.

A card's entry holds the card as read, its summary's numbers, its files (as blob digests) and its
search record, keyed on the card's path and text. Each page about many models is an entry keyed on
the keys of the cards whose summaries it shows (a summary is a function of its card and the
fingerprint alone): a family's page is made again when one of its own cards changes, the index
when any does; together they are one more entry, keyed on every card's key, which a rebuild with
no card changed places whole. The files made from the code alone are keyed on nothing else. The
search index is stored whole, keyed on every card's key, and shard by shard, each keyed on a digest of
the pages it indexes (see search.py), so that an edit indexes again only the shards it changed.
Without a cache (``--no-cache``) every file is written as it is made and nothing is stored.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.build.cache import Blob, Cache, Held
from generator.build.output import Staging, in_folder
from generator.cards.card import Card
from generator.site.page import Piece
from generator.site.search import Indexing, SearchIndex
from generator.site.search_records import SearchRecord, page_record
from generator.site.views import SummaryNumbers


@dataclass(frozen=True)
class ModelEntry:
    """A card and what its model came to: its summary's numbers, its files' blobs, its search record."""

    card: Card
    numbers: SummaryNumbers
    files: dict[str, Blob]
    record: SearchRecord | None
    inputs: str  # what the files show besides the card (Renderer.model_inputs): other cards' pages it links to


@dataclass(frozen=True)
class Shards:
    """Search shards on their way into a site (``Reuse.start_index``): each one's cache key, the files of
    those placed from the cache, and Pagefind at work on the others."""

    keys: dict[str, str]
    placed: dict[str, Blob]
    run: Indexing


# The card entries the last build in this process read: a build run again in the same process (serve's
# builder, after an edit) takes those whose files are unchanged from here, not from the disk (reading
# and unpickling 1,000 of them took 0.1 to 0.2 s). Each build's replace the last's.
_READ_LAST: Held = {}


class Reuse:
    """One build's use of a cache (or of none: then nothing is reused and nothing stored)."""

    def __init__(self, cache: Cache | None) -> None:
        global _READ_LAST  # the process's one record of the last build's reads
        self.cache = cache
        self._read_before, _READ_LAST = _READ_LAST, {}
        self.keys: dict[Path, str] = {}
        self.held: dict[Path, ModelEntry] = {}
        self.folders: set[str] = set()  # made in the staged site by this process
        self._paths: tuple[list[Card], dict[str, Path]] | None = None
        self._shown: tuple[list[Card], str] | None = None

    def _card_key(self, path: Path) -> str | None:
        assert self.cache is not None
        try:
            return self.cache.key("card", str(path), path.read_bytes())
        except OSError:
            return None  # load_cards reports it

    def card(self, path: Path) -> Card | None:
        """The card read from ``path`` by an earlier build, if its text has not changed since."""
        key = self._card_key(path)
        if key is None or self.cache is None:
            return None
        self.keys[path] = key
        entry = self.cache.load_again(key, self._read_before, _READ_LAST)
        if not isinstance(entry, ModelEntry) or entry.card.path != path:
            return None
        self.held[path] = entry
        return entry.card

    def model(self, card: Card, inputs: str, root: Path) -> ModelEntry | None:
        """The card's entry, its files placed under ``root``; None if there is none, it was made with
        other ``inputs`` (see ModelEntry), or a file is lost."""
        entry = self.held.get(card.path)
        if entry is None or self.cache is None or entry.inputs != inputs or not self._place(entry.files, root):
            return None
        return entry

    def store_model(self, entry: ModelEntry) -> None:
        """Keep a model's entry, unless its card changed while the build read it."""
        path = entry.card.path
        if self.cache is not None and path in self.keys and self._card_key(path) == self.keys[path]:
            self.cache.store(self.keys[path], entry)

    def write(self, staging: Staging, files: dict[str, bytes]) -> dict[str, Blob]:
        """Write files into the staged site, through the cache when there is one; return their blobs."""
        if self.cache is None:
            for path, content in files.items():
                staging.write(path, content)
            return {}
        names = {}
        root = str(staging.path)
        for path, content in files.items():
            names[path] = self.cache.put(content)
            if not self.cache.place(names[path], in_folder(f"{root}/{path}", self.folders)):
                staging.write(path, content)  # a cache that cannot be written: the file is still made
        return names

    def cards_key(self, what: str, cards: list[Card]) -> str:
        """The key of ``what`` a build makes from every card (the search index, the pages about many models
        together): every card's key, in the cards' order; "" when a card has none."""
        if self.cache is None or any(card.path not in self.keys for card in cards):
            return ""
        return self.cache.key(what, *(self.keys[card.path] for card in cards))

    def piece_key(self, piece: Piece, cards: list[Card]) -> str:
        """The key of a piece's files: its name and ``about``, and the keys of the cards whose summaries it
        shows (every card's, in the cards' order, when it shows every model; none, made from the code alone)."""
        if self.cache is None:
            return ""
        if piece.shows is None:  # every model's: the cards' ids and keys, worked out once for all such pieces
            every = self._every(cards)
            return every and self.cache.key("piece", piece.name, piece.about, every)
        by_id = self._by_id(cards)
        paths = [by_id.get(card_id) for card_id in piece.shows]
        if any(path is not None and path not in self.keys for path in paths):
            return ""
        keys = [self.keys[path] if path is not None else "absent" for path in paths]
        return self.cache.key("piece", piece.name, piece.about, *piece.shows, *keys)

    def _by_id(self, cards: list[Card]) -> dict[str, Path]:
        """Each card's path by its id (a build asks once per page about many models: once is enough)."""
        if self._paths is None or self._paths[0] is not cards:
            self._paths = (cards, {card.id: card.path for card in cards})
        return self._paths[1]

    def _every(self, cards: list[Card]) -> str:
        """A digest of every card's id and key, in the cards' order; "" when a card has none."""
        if self._shown is None or self._shown[0] is not cards:
            known = all(card.path in self.keys for card in cards)
            parts = [card.id for card in cards] + [self.keys[card.path] for card in cards] if known else []
            self._shown = (cards, self.cache.key("every-model", *parts) if known and self.cache else "")
        return self._shown[1]

    def place_all(self, key: str, root: Path) -> dict[str, Blob] | None:
        """Place the files of entry ``key`` under ``root`` and return them; None, placing none, if any is missing."""
        files = self.cache.load(key) if self.cache is not None and key else None
        return files if isinstance(files, dict) and self._place(files, root) else None

    def store_all(self, key: str, files: dict[str, Blob]) -> None:
        if self.cache is not None and key:
            self.cache.store(key, files)

    def start_index(self, index: SearchIndex, root: Path, jobs: int, shards: Sequence[str]) -> Shards:
        """Index the named shards: each that a build indexed before from the same pages (keyed on its
        name and their digest) is placed under ``root`` from the cache, Pagefind is started on the others
        (see ``SearchIndex.start``), and ``finish_index`` waits for them."""
        keys = {
            shard: self.cache.key("search-shard", shard, digest) if self.cache is not None else ""
            for shard, digest in index.contents(shards).items()
        }
        files: dict[str, Blob] = {}
        todo = []
        for shard, key in keys.items():
            if (placed := self.place_all(key, root)) is None:
                todo.append(shard)
            else:
                files |= placed
        return Shards(keys, files, index.start(todo, jobs))

    def finish_index(self, index: SearchIndex, root: Path, shards: Shards) -> dict[str, Blob]:
        """The files of the shards ``start_index`` began, placed under ``root``; those indexed now are stored."""
        files = dict(shards.placed)
        for shard, written in index.finish(shards.run, root).items():
            if self.cache is not None:
                stored = {path: self.cache.put((root / path).read_bytes()) for path in written}
                self.cache.store(shards.keys[shard], stored)
                files |= stored
        return files

    def add_records(self, key: str, root: Path, index: SearchIndex) -> None:
        """Add the search records of the files of entry ``key``, placed under ``root``, to ``index``."""
        files = self.cache.load(key) if self.cache is not None else None
        for path in files or {}:
            if (record := page_record(path, (root / path).read_bytes())) is not None:
                index.add_page(record)

    def _place(self, files: dict[str, Blob], root: Path) -> bool:
        assert self.cache is not None
        placed: list[str] = []
        top = str(root)
        for path, blob in files.items():
            if (
                not _inside(path)
                or not isinstance(blob, Blob)
                or not self.cache.place(blob, target := in_folder(f"{top}/{path}", self.folders))
            ):
                for done in placed:  # never left for a writer to overwrite: the blob shares its inode
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(done)  # noqa: PTH108 (a string path: see above)
                return False
            placed.append(target)
        return True


def _inside(path: object) -> bool:
    """Whether a path an entry names stays inside the site (a foreign entry may name any)."""
    return isinstance(path, str) and bool(path) and not path.startswith("/") and ".." not in path.split("/")
