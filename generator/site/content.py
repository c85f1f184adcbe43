"""The site's prose, read from ``content/<language>/<page>.yaml``; Python fills the numbers in.

A page kind asks for its texts by key: ``load("errata")`` gives the file's top section, and
``section("errata").section("lha-product")("title")`` one text. A text may name numbers in
braces, ``{product:,}``, which the page fills in; the content never holds a number the
engine computes. A second language is a sibling folder with the same keys (``content/zh/``).

Bad content is bad input: a missing file or key, a value that is not text, or a placeholder
the page does not fill is reported as ``file:line:column: key: message``, never as a
traceback. Every read is remembered, so a test can show that each text of each language is
read by the code and each text the code reads is there (tests/test_content.py).

The folder sits at the top of the repository, where translators find it; the package reaches it
through the link ``generator/site/texts``, so an editable install (``make site``) reads the
repository's files and a built wheel carries copies of them (package data in pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.cards.problems import InputError, Location, Problem
from generator.cards.yamlsource import Document, KeyPath, load_document
from generator.counting.families import families
from generator.counting.texts import MissingTextError
from generator.site.page import LANGUAGE
from generator.site.soft_space import soften

CONTENT = (Path(__file__).parent / "texts").resolve()  # content/ in a source tree


class Text:
    """One section of a content file: its texts and subsections, read by key."""

    def __init__(self, document: Document, keys: KeyPath, read: set[KeyPath]) -> None:
        self.document = document
        self.keys = keys
        self.read = read  # shared by every section of one file

    @property
    def key(self) -> str:
        """The section's own key, e.g. the erratum's id."""
        return str(self.keys[-1])

    @property
    def root(self) -> Text:
        """The file's top section, for texts several sections share."""
        return Text(self.document, (), self.read)

    def _value(self, key: str, expected: str) -> Any:
        mapping = self.document.data
        for k in self.keys:
            mapping = mapping[k]
        keys = (*self.keys, key)
        if key not in mapping:
            found = ", ".join(sorted(mapping)) or "none"
            message = f"expected the {expected} {key!r} here, found the keys: {found}"
            raise InputError([Problem(self.document.where_key(self.keys), _dotted(self.keys), message)])
        self.read.add(keys)
        return mapping[key]

    def section(self, key: str) -> Text:
        """A subsection, e.g. one erratum's texts."""
        self._value(key, "section")
        return Text(self.document, (*self.keys, key), self.read)

    def template(self, key: str) -> str:
        """The text under ``key`` as written, its placeholders left for a script to fill in."""
        return str(self._value(key, "text"))

    def __call__(self, key: str, **values: object) -> str:
        """The text under ``key`` with its placeholders filled in from ``values``."""
        text = self._value(key, "text")
        try:
            return str(text).format_map(values)
        except KeyError as exc:
            filled = ", ".join(f"{{{name}}}" for name in sorted(values)) or "none"
            message = f"the placeholder {{{exc.args[0]}}} is not one the page fills in (it fills: {filled})"
        except (ValueError, IndexError) as exc:
            message = f"expected text with placeholders such as {{name}} (write a brace as {{{{ or }}}}): {exc}"
        keys = (*self.keys, key)
        raise InputError([Problem(self.document.where(keys), _dotted(keys), message)])

    def optional(self, key: str) -> str | None:
        """The text under ``key`` as written, or None where the section has none (a source with no address)."""
        mapping = self.document.data
        for k in self.keys:
            mapping = mapping[k]
        return self.template(key) if key in mapping else None

    def html(self, key: str, **values: object) -> Markup:
        """The text under ``key``, written in HTML, as markup: ``values`` are escaped as they are filled in."""
        self(key, **values)  # a placeholder the page does not fill is reported here, located
        return Markup(self.template(key)).format(**values)


def languages(root: Path | None = None) -> list[str]:
    """The languages content/ holds: one folder each, named by its code (en, zh, ...)."""
    folder = root or CONTENT
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def editions(root: Path | None = None) -> tuple[str, ...]:
    """What a build writes when no language is named: English at the root, then each other language."""
    return (LANGUAGE, *(code for code in languages(root) if code != LANGUAGE))


def check_language(language: str, root: Path | None = None) -> None:
    """InputError, located at the folder looked for, unless content/ holds ``language``."""
    folder = root or CONTENT
    present = languages(folder)
    if language not in present:
        message = (
            f"expected one of the languages in {folder.name}/ ({', '.join(present) or 'none'}), found {language!r}"
        )
        raise InputError([Problem(Location(folder / language), "--language", message)])


def check_family_words(language: str) -> None:
    """InputError, located in families.yaml, unless every family has its words in ``language``."""
    try:
        families(language)
    except MissingTextError as error:
        raise InputError([Problem(Location(error.path), error.key, error.message)]) from None


def load(page: str, language: str = LANGUAGE, root: Path | None = None) -> Text:
    """The texts of one page in one language; InputError, located, when the file is not usable."""
    root = root or CONTENT  # read when called, so a test may point CONTENT at a scratch copy
    check_language(language, root)
    path = root / language / f"{page}.yaml"
    if not path.is_file():
        message = f"expected the content file of the {page} page in {language!r}, found none"
        raise InputError([Problem(Location(path), "", message)])
    document = load_document(path)
    problems = list(document.problems)
    if not isinstance(document.data, dict):
        problems.append(Problem(Location(path), "", "expected a mapping of keys to texts"))
    else:
        problems += _not_text(document, (), document.data)
    if problems:
        raise InputError(problems)
    _soften(document.data, language)
    return Text(document, (), set())


def _soften(data: dict[str, Any], language: str) -> None:
    """Each text's spaces beside a placeholder, soft where they may fall between Han (soft_space.py)."""
    for key, value in data.items():
        if isinstance(value, str):
            data[key] = soften(value, language)
        elif isinstance(value, dict):
            _soften(value, language)


def _not_text(document: Document, keys: KeyPath, value: Any) -> list[Problem]:
    """Every value that is neither text nor a section of texts."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _not_text(document, (*keys, k), v)]
    if isinstance(value, str):
        return []
    found = "nothing" if value is None else f"a {type(value).__name__}"
    return [Problem(document.where(keys), _dotted(keys), f"expected text or a section of texts, found {found}")]


def texts(document: Document, keys: KeyPath = ()) -> list[KeyPath]:
    """The key path of every text in a content file."""
    value = document.data
    for k in keys:
        value = value[k]
    if isinstance(value, dict):
        return [path for k in value for path in texts(document, (*keys, k))]
    return [keys]


def unread(text: Text) -> list[Problem]:
    """The texts of a loaded file that no code has read: a section without a counterpart in the code."""
    return [
        Problem(text.document.where_key(keys), _dotted(keys), "this text is not used by the code: no counterpart")
        for keys in texts(text.document)
        if keys not in text.read
    ]


def _dotted(keys: KeyPath) -> str:
    return ".".join(str(k) for k in keys)
