"""Problems found in input files, reported as ``file:line:column: key: message``."""

from __future__ import annotations

import contextlib
import difflib
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class Location:
    """A place in an input file; line and column count from 1."""

    path: Path
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{printable(display_path(self.path))}:{self.line}:{self.column}"


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one input, where it is and what to do about it."""

    location: Location
    key: str
    message: str

    def __str__(self) -> str:
        """One line, whatever the card holds: control and invisible characters are escaped."""
        key = f" {printable(self.key)}:" if self.key else ""
        return f"{self.location}:{key} {printable(self.message)}"


class InputError(Exception):
    """Raised with every problem found, so that one run reports them all."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[type[InputError], tuple[list[Problem]]]:
        # Made again from its problems when a worker process sends it to the build (pickled).
        return (InputError, (self.problems,))


def display_path(path: Path) -> str:
    """Show a path relative to the working directory when it lies below it (as given: links not followed)."""
    for shown, cwd in (
        (path.absolute(), Path.cwd()),
        (path.resolve(), Path.cwd().resolve()),
    ):
        with contextlib.suppress(ValueError):
            return str(shown.relative_to(cwd))
    return str(path)


def printable(text: str) -> str:
    """Text with every non-printing character (newline, tab, bidi control, ...) written as an escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def shown_key(name: str) -> str:
    """A key from a card as a problem names it: quoted when it is blank or has spaces around it."""
    return name if name and name.strip() == name else repr(name)


def describe(value: object) -> str:
    """Name a YAML value the way a person reading the card would see it."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def report(error: InputError, what: str) -> int:
    """Print each problem, then a line that counts them and says what did not happen; the exit status, 1."""
    for problem in error.problems:
        print(problem, file=sys.stderr)
    files = len({p.location.path for p in error.problems})
    print(f"error: {len(error.problems)} problem(s) in {files} file(s); {what}", file=sys.stderr)
    return 1


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """ "; did you mean 'x'?" for the choice closest to a misspelt word, or nothing."""
    match = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean '{match[0]}'?" if match else ""
