"""A card's free texts: its title, one text, and its notes, one text or one per language."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from generator.cards.problems import Location, Problem, describe
from generator.cards.yamlsource import Document
from generator.counting.texts import LANGUAGE

# A language code as content/ names its folders: "en", "zh", "pt-BR".
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


@dataclass(frozen=True)
class Notes:
    """A card's notes, Markdown, in each language they are written in.

    A card's notes are either one text, in the site's default language (English), or a mapping of
    language codes to texts with an English entry. An edition without its own text shows the
    English one, marked as English, so that a card written in one language serves every edition.
    """

    texts: Mapping[str, str]  # language code -> Markdown; empty when the card has none
    where: Mapping[str, Location]  # the place of each text, for a check that needs the editions

    def __bool__(self) -> bool:
        return bool(self.texts)

    def in_language(self, language: str) -> tuple[str, str]:
        """The text an edition in ``language`` shows, and the language that text is written in."""
        if language in self.texts:
            return self.texts[language], language
        return self.texts.get(LANGUAGE, ""), LANGUAGE


def read_text(doc: Document, key: str, problems: list[Problem], *, required: bool) -> str:
    value = doc.data.get(key)
    if value is None and not required:
        return ""
    if key not in doc.data:
        problems.append(Problem(Location(doc.path), key, "missing; expected text"))
        return ""
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(doc.where((key,)), key, f"expected text, found {describe(value)}"))
        return ""
    return value


def read_notes(doc: Document, problems: list[Problem]) -> Notes:
    """The notes: one text (English), or a mapping of language codes to texts with an English one."""
    value = doc.data.get("notes")
    if not isinstance(value, Mapping):
        text = read_text(doc, "notes", problems, required=False)
        return Notes({LANGUAGE: text} if text else {}, {LANGUAGE: doc.where(("notes",))} if text else {})
    texts: dict[str, str] = {}
    for language, text in value.items():
        where = doc.where(("notes", language))
        if not isinstance(language, str) or not LANGUAGE_CODE.fullmatch(language):
            message = f"expected a language code such as en or zh, found {describe(language)}"
            problems.append(Problem(doc.where_key(("notes", language)), "notes", message))
        elif not isinstance(text, str) or not text.strip():
            problems.append(Problem(where, f"notes.{language}", f"expected text, found {describe(text)}"))
        else:
            texts[language] = text
    if LANGUAGE not in value:
        found = ", ".join(map(str, value)) or "none"
        message = f"expected an {LANGUAGE} entry (the text an edition without its own shows), found {found}"
        problems.append(Problem(doc.where(("notes",)), "notes", message))
    return Notes(texts, {language: doc.where(("notes", language)) for language in texts})
