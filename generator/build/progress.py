"""Progress for long builds: a live line on a terminal, silence elsewhere.

A build of thousands of cards reports each stage (cards read, models counted, pages rendered,
files written, search index) as it goes, on one line that rewrites itself, only when standard
error is a terminal. ``--verbose`` keeps one line per finished stage, with its time; ``--quiet``
says nothing but errors.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO


class Progress:
    """Reports build stages; the default reports nothing."""

    def __init__(self, stream: TextIO | None = None, *, live: bool = False, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.live = live
        self.verbose = verbose
        self.timings: dict[str, float] = {}
        self._stage = ""
        self._started = 0.0
        self._shown = 0.0

    @staticmethod
    def for_terminal(*, quiet: bool, verbose: bool, stream: TextIO | None = None) -> Progress:
        """Live progress when the stream is a terminal that moves its cursor (and not quiet); stage lines when
        verbose. A terminal that says it is dumb (TERM=dumb: an editor's shell, some log viewers) would
        print the escapes that redraw the line as they are."""
        stream = stream or sys.stderr
        live = not quiet and stream.isatty() and os.environ.get("TERM") != "dumb"
        return Progress(stream, live=live, verbose=verbose and not quiet)

    def start(self, stage: str) -> None:
        self._stage, self._started, self._shown = stage, time.perf_counter(), 0.0
        if self.live:
            self.stream.write(f"\r\033[K{stage}…")
            self.stream.flush()

    def advance(self, done: int, total: int) -> None:
        """Note that ``done`` of ``total`` items of the current stage are finished."""
        now = time.perf_counter()
        if self.live and (done == total or now - self._shown > 0.1):
            self._shown = now
            self.stream.write(f"\r\033[K{self._stage}: {done:,}/{total:,}")
            self.stream.flush()

    def finish(self, detail: str = "") -> None:
        """Close the current stage, recording how long it took."""
        seconds = time.perf_counter() - self._started
        self.timings[self._stage] = seconds
        if self.live:
            self.stream.write("\r\033[K")
        if self.verbose:
            self.stream.write(f"{self._stage}: {detail + ' ' if detail else ''}in {seconds:.2f} s\n")
        if self.live or self.verbose:
            self.stream.flush()

    def say(self, message: str) -> None:
        """A line of its own about the build, for whoever watches it (live or verbose)."""
        if self.live or self.verbose:
            self.stream.write(("\r\033[K" if self.live else "") + message + "\n")
            self.stream.flush()

    def abandon(self) -> None:
        """Clear a live line, so that error messages start on a clean line."""
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()
