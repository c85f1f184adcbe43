"""Read a YAML card into plain data plus the line and column of every key and value.

PyYAML's safe loader silently keeps the last of two equal keys and expands aliases without
limit; cards need neither, so this loader composes the node tree itself and refuses both,
as well as any tag that would build something other than plain data.

Whatever the bytes, reading a card ends in data or in located problems, never in an
exception: the file size, the nesting depth and the length of a number are bounded, so a
hostile card costs at most a second or so to refuse.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.cards.problems import InputError, Location, Problem, shown_key

# A card is a few kilobytes; a pasted config.json with a thousand labels stays far below this.
# PyYAML reads 100 to 300 KB a second, so the limit also bounds what a card can cost: about a second.
MAX_BYTES = 128 * 1024
MAX_DEPTH = 32  # cards nest four deep; PyYAML's composer recurses, so depth must be bounded
MAX_NUMBER_LENGTH = 100  # characters of one number: no size is longer, and Python will not print 4,300 digits
KeyPath = tuple[str | int, ...]

_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MAP = "tag:yaml.org,2002:map"
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_SEQ = "tag:yaml.org,2002:seq"
_SURROGATE = re.compile("[\ud800-\udfff]")
# What YAML 1.1 resolves a plain `=` and `<<` to; in a card they are only text.
_TEXT_LIKE = {"tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"}


@dataclass
class Document:
    """A YAML file's data, and where each key and value stands in it."""

    path: Path
    data: Any
    value_at: dict[KeyPath, Location] = field(default_factory=dict)
    key_at: dict[KeyPath, Location] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)  # found while reading; the data is still usable

    def where(self, keys: KeyPath) -> Location:
        """The location of a value, or of its nearest enclosing value."""
        while keys not in self.value_at and keys:
            keys = keys[:-1]
        return self.value_at.get(keys, Location(self.path))

    def where_key(self, keys: KeyPath) -> Location:
        return self.key_at.get(keys, self.where(keys))


class _Loader(yaml.SafeLoader):
    depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                problem="anchors and aliases are not allowed in a card; write the value out",
                problem_mark=event.start_mark,
            )
        if self.depth >= MAX_DEPTH:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                problem=f"values are nested more than {MAX_DEPTH} levels deep here; a card needs four",
                problem_mark=event.start_mark,
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _fast_node(text: str) -> tuple[Node, yaml.SafeLoader] | None:
    """The card's node tree as libyaml composes it, when it is installed and the tree holds nothing the
    checks must catch; None sends the card the slow way.

    libyaml reads a card about fifteen times faster than PyYAML's Python code, in one pass. What
    _Loader refuses is then looked for in the tree itself (``_plain_tree``): an alias is a node met a
    second time, since the composer hands back the anchored node, and the depth is counted. A card
    that has either, or that libyaml itself rejects, is read again the slow way, which words the
    problem precisely; valid cards never take that path. libyaml has bounded nesting itself since
    0.2.5 (1,000 levels), so its composer cannot recurse out of the stack before the tree is looked at;
    an older one is not used.
    """
    c_loader = getattr(yaml, "CSafeLoader", None)
    if c_loader is None or "\t" in text or _libyaml_version() < (0, 2, 5):  # tabs: libyaml accepts some PyYAML refuses
        return None
    loader: yaml.SafeLoader = c_loader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError:
        loader.dispose()
        return None
    if node is None or not _plain_tree(node):
        loader.dispose()
        return None
    return node, loader


@functools.cache
def _libyaml_version() -> tuple[int, ...]:
    from yaml import _yaml  # present whenever CSafeLoader is

    return tuple(_yaml.get_version())


def _plain_tree(root: Node) -> bool:
    """Whether a composed tree has no alias (no node met twice) and no value more than MAX_DEPTH deep."""
    seen: set[int] = set()
    todo: list[tuple[Node, int]] = [(root, 1)]
    while todo:
        node, depth = todo.pop()
        if id(node) in seen:
            return False
        seen.add(id(node))
        if isinstance(node, MappingNode):
            if depth >= MAX_DEPTH:
                return False
            for key, value in node.value:
                todo += ((key, depth + 1), (value, depth + 1))
        elif isinstance(node, SequenceNode):
            if depth >= MAX_DEPTH:
                return False
            todo += ((item, depth + 1) for item in node.value)
    return True


def _location(path: Path, mark: yaml.Mark | None) -> Location:
    if mark is None:
        return Location(path)
    return Location(path, mark.line + 1, mark.column + 1)


def load_document(path: Path) -> Document:
    """Parse one YAML file; raise InputError when it cannot be read as data at all.

    Lesser problems (a duplicate key, a forbidden tag) are kept in ``Document.problems``
    with the offending value dropped, so that the rest of the card can still be checked.
    """
    raw = _read(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"expected UTF-8 text, found the byte 0x{raw[exc.start]:02x}"
        raise InputError([Problem(Location(path, line, column), "", message)]) from None
    # A byte-order mark is accepted: editors on Windows write one, and it carries no meaning.
    text = text.removeprefix("\ufeff")
    loader: yaml.SafeLoader | None = None
    node: Node | None
    try:
        fast = _fast_node(text)
        if fast is not None:
            node, loader = fast
        else:
            loader = _Loader(text)  # the reader refuses control characters here already
            node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise InputError([Problem(_location(path, mark), "", _syntax_message(exc, text, mark))]) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        message = f"the control character U+{exc.character:04X} is not allowed in a card"
        raise InputError([Problem(Location(path, line, column), "", message)]) from None
    except yaml.YAMLError as exc:
        raise InputError([Problem(Location(path), "", f"YAML syntax: {exc}")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        found = "an empty file" if not text.strip() else "only comments"
        raise InputError([Problem(Location(path), "", f"expected a card (a mapping of keys), found {found}")])
    assert loader is not None
    document = Document(path, None)
    document.data = _convert(node, (), document, loader, document.problems)
    return document


def _read(path: Path) -> bytes:
    """The file's bytes, read no further than the size limit allows."""
    try:
        if not path.is_file():
            if not path.is_symlink() and not path.exists():
                raise InputError([Problem(Location(path), "", "expected a card file, found no file of that name")])
            found = "a directory" if path.is_dir() else "a device or pipe" if path.exists() else "a broken link"
            raise InputError([Problem(Location(path), "", f"expected a card file, found {found}")])
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
            size = max(len(raw), os.fstat(handle.fileno()).st_size)
    except OSError as exc:
        raise InputError([Problem(Location(path), "", f"cannot read the file: {exc.strerror}")]) from None
    if len(raw) > MAX_BYTES:
        message = f"expected a card of at most {MAX_BYTES:,} bytes, found {size:,}; a card is a few kilobytes"
        raise InputError([Problem(Location(path), "", message)])
    return raw


def _syntax_message(exc: yaml.MarkedYAMLError, text: str, mark: yaml.Mark | None) -> str:
    if mark is not None and text[mark.index : mark.index + 1] == "\t":
        return "YAML syntax: a tab character here; YAML indents and separates with spaces only, replace it with spaces"
    if exc.problem == "but found another document":
        return "YAML syntax: a card is one YAML document, but a second one starts here"
    return f"YAML syntax: {exc.problem or exc.context}"


def _convert(node: Node, keys: KeyPath, doc: Document, loader: yaml.SafeLoader, problems: list[Problem]) -> Any:
    doc.value_at[keys] = _location(doc.path, node.start_mark)
    if isinstance(node, ScalarNode) and node.tag in _TEXT_LIKE:
        return node.value
    if node.tag not in _PLAIN_TAGS | {_TIMESTAMP, _MAP, _SEQ}:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        problems.append(
            Problem(doc.where(keys), _dotted(keys), f"the YAML tag {tag} is not allowed in a card; write plain data")
        )
        return None
    if isinstance(node, MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            where = _location(doc.path, key_node.start_mark)
            # Text keys, and whole numbers as id2label uses them; config.json writes both as strings.
            if not isinstance(key_node, ScalarNode) or key_node.tag not in (_STR, _INT):
                problems.append(Problem(where, _dotted(keys), "expected a text or whole-number key here"))
                continue
            value = _scalar(key_node, keys, doc, loader, problems)
            if value is None:
                continue
            key = value if key_node.tag == _STR else str(value)
            if key in result:
                first = doc.key_at[(*keys, key)]
                problems.append(
                    Problem(where, _dotted((*keys, key)), f"duplicate key; it was already given at line {first.line}")
                )
                continue
            doc.key_at[(*keys, key)] = where
            result[key] = _convert(value_node, (*keys, key), doc, loader, problems)
        return result
    if isinstance(node, SequenceNode):
        return [_convert(item, (*keys, i), doc, loader, problems) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    return _scalar(node, keys, doc, loader, problems)


def _scalar(node: ScalarNode, keys: KeyPath, doc: Document, loader: yaml.SafeLoader, problems: list[Problem]) -> Any:
    """A scalar's value; None, with a problem, when its tag does not fit its text."""
    where = _location(doc.path, node.start_mark)
    surrogate = _SURROGATE.search(node.value)
    if surrogate:  # "\ud83d\ude00" is one character written as a UTF-16 pair; "\ud800" alone is none
        with contextlib.suppress(UnicodeDecodeError):
            paired = node.value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
            if node.tag == _STR:
                return paired
        code = ord(surrogate.group())
        message = f"the escape \\u{code:04x} is half of a UTF-16 surrogate pair, not a character; write the character"
        problems.append(Problem(where, _dotted(keys), message))
        return None
    if node.tag in (_TIMESTAMP, _STR):
        return node.value  # dates stay text; a card has no use for datetime objects
    if node.tag in (_INT, _FLOAT) and len(node.value) > MAX_NUMBER_LENGTH:
        message = f"expected a number of at most {MAX_NUMBER_LENGTH} characters, found one of {len(node.value):,}"
        problems.append(Problem(where, _dotted(keys), message))
        return None
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, KeyError, TypeError, yaml.YAMLError):
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        problems.append(Problem(where, _dotted(keys), f"the text {node.value!r} cannot be read as {tag}"))
        return None


def _dotted(keys: KeyPath) -> str:
    text = ""
    for key in keys:
        text += f"[{key}]" if isinstance(key, int) else (f".{shown_key(key)}" if text else shown_key(key))
    return text
