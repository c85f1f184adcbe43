"""A second edition's words: the templates' catalog (Babel, gettext) and content/<language>/, checked.

English is the source. A translation that lacks or adds a text, drops or invents a placeholder, or
types a number where English has a placeholder fails the build's check, located as file:line.
"""

from __future__ import annotations

from babel.messages.pofile import read_po

from generator.site import translation
from generator.site.translation import LOCALES


def _ids(path: str) -> set[str]:
    with (LOCALES / path).open("rb") as file:
        return {str(message.id) for message in read_po(file) if message.id}


def test_the_catalog_template_holds_every_marked_sentence_of_the_templates() -> None:
    """`make messages` was run after the templates' words last changed."""
    marked = {message for _, _, message in translation.extract()}
    assert "Page not found" in marked and "Skip to content" in marked
    assert _ids("messages.pot") == marked


def test_each_language_catalog_has_the_catalog_templates_sentences() -> None:
    languages = sorted(p.name for p in LOCALES.iterdir() if p.is_dir())
    assert "zh" in languages
    for language in languages:
        assert _ids(f"{language}/LC_MESSAGES/messages.po") == _ids("messages.pot"), language
