"""A second edition's words: the templates' catalog (gettext, through Babel) and content/<language>/.

The sentences of ``templates/`` are marked with ``{% trans %}`` and ``_()`` (jinja2.ext.i18n).
Babel extracts them into ``locales/messages.pot``; a translator fills ``locales/<language>/LC_MESSAGES/
messages.po``. The build compiles that file in memory, so no binary ``.mo`` file is kept in git.

English is the source: its catalog is the templates themselves. A translation is checked against it
before its edition is built. A text it lacks or adds, a placeholder it drops or invents, or a number
typed where English has none, is reported as ``file:line``, as a missing English key is.
"""

from __future__ import annotations

import contextlib
import gettext
import hashlib
import io
import json
import re
import string
from pathlib import Path
from typing import Any

from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from generator.cards.problems import InputError, Location, Problem
from generator.cards.yamlsource import Document, KeyPath, load_document
from generator.site import content
from generator.site.page import LANGUAGE, LANGUAGE_NAMES, TEMPLATES
from generator.site.soft_space import soften

# locales/ at the top of a source tree, reached through the link generator/site/locales (as content/ is).
LOCALES = (Path(__file__).parent / "locales").resolve()
DOMAIN = "messages"
# How Babel reads the templates: the same options as the build's environment (render.environment), so
# a line number it gives is the template's. babel.cfg says the same to ``pybabel extract``.
EXTRACT_OPTIONS = {"extensions": "jinja2.ext.i18n", "trim_blocks": "True", "lstrip_blocks": "True"}
# Placeholders a translation may add where English has another: a total's reading in 万 and 亿
# ({reading}: 1.09 亿) wherever the English text states the total.
READINGS = {"total": "reading"}
# A number as a translator would type one: 768, 3,072, 1.09, also against a Chinese character (3个), but
# not a digit inside a name such as fp32 or bf16 (ASCII letters around it).
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d(?:[\d,.]*\d)?(?![A-Za-z0-9_])")


def catalog_path(language: str, root: Path | None = None) -> Path:
    """Where a language's catalog of the templates' sentences lives."""
    return (root or LOCALES) / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def languages(root: Path | None = None) -> list[str]:
    """The languages the site knows: those it names (English, 中文), and each with a catalog or content."""
    catalogs = (p.parents[1].name for p in (root or LOCALES).glob(f"*/LC_MESSAGES/{DOMAIN}.po"))
    return sorted({*LANGUAGE_NAMES, *catalogs, *content.languages()})


def translations(language: str, root: Path | None = None) -> gettext.NullTranslations:
    """The templates' sentences in ``language``: English as written, another from its catalog, compiled here."""
    if language == LANGUAGE:
        return gettext.NullTranslations()
    with catalog_path(language, root).open("rb") as file:
        catalog = read_po(file)
    for message in catalog:  # a space beside a placeholder goes between Han characters (soft_space.py)
        if isinstance(message.string, str):
            message.string = soften(message.string, language)
        elif message.string:
            message.string = tuple(soften(form, language) for form in message.string)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)  # fuzzy entries are left out: their English shows until they are reviewed
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def extract(templates: Path | None = None) -> list[tuple[str, int, str]]:
    """Every marked sentence of the templates: its file, line and text.

    Babel takes half a second to read every template, on every build of a second edition. So the
    sentences are kept in ``templates/__pycache__/``, keyed by the templates' bytes, and read again
    only when a template changes, as the compiled templates are (render.py, ``_CompiledTemplates``).
    """
    folder = templates or TEMPLATES
    digest = hashlib.sha256()
    for page in sorted(folder.rglob("*.html")):
        digest.update(page.relative_to(folder).as_posix().encode() + b"\0" + page.read_bytes() + b"\0")
    kept = folder / "__pycache__" / f"messages-{digest.hexdigest()[:32]}.json"
    with contextlib.suppress(OSError, ValueError):
        return [(str(name), int(line), str(text)) for name, line, text in json.loads(kept.read_text(encoding="utf-8"))]
    method_map = [("static/**", "ignore"), ("**.html", "jinja2")]
    options_map = {"**.html": EXTRACT_OPTIONS}
    found = [
        (filename, line, message)
        for filename, line, message, _comments, _context in extract_from_dir(str(folder), method_map, options_map)
        if isinstance(message, str)  # a plural form comes as a tuple: the templates use none
    ]
    with contextlib.suppress(OSError):
        for old in kept.parent.glob("messages-*.json"):
            old.unlink()
        kept.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
    return found


def check(language: str, locales: Path | None = None, templates: Path | None = None) -> None:
    """InputError, with every problem located, unless ``language`` translates every English text exactly once."""
    if language == LANGUAGE:
        return
    problems = catalog_problems(language, locales, templates) + content_problems(language)
    if problems:
        raise InputError(problems)


def catalog_problems(language: str, locales: Path | None = None, templates: Path | None = None) -> list[Problem]:
    """What the language's catalog lacks or adds against the templates, and each placeholder or number it changes."""
    folder = templates or TEMPLATES
    path = catalog_path(language, locales)
    if not path.is_file():
        return [Problem(Location(path), "", f"expected the catalog of the templates' sentences in {language!r}")]
    with path.open("rb") as file:
        catalog = read_po(file)
    found: list[Problem] = []
    sentences = {message: (filename, line) for filename, line, message in extract(folder)}
    for message, (filename, line) in sentences.items():
        entry = catalog.get(message)
        if entry is None or not entry.string or entry.fuzzy:
            state = "none" if entry is None or not entry.string else "only a fuzzy one"
            where = Location(folder / filename, line)
            found.append(Problem(where, "", f"expected a translation of {message!r} in {path.name}, found {state}"))
    for entry in catalog:
        if not entry.id or entry.id in sentences or entry.fuzzy:
            continue
        found.append(Problem(Location(path, entry.lineno or 1), "msgid", "no template has this text: remove it"))
    for entry in catalog:
        if entry.id in sentences and isinstance(entry.string, str) and entry.string:
            # %(name)s is the template's to fill in, {name} a script's (permalink.js fills {address}).
            source = set(re.findall(r"%\((\w+)\)s", str(entry.id))) | _fields(str(entry.id))
            target = set(re.findall(r"%\((\w+)\)s", entry.string)) | _fields(entry.string)
            found += _changed(Location(path, entry.lineno or 1), "msgstr", str(entry.id), entry.string, source, target)
    return found


def content_problems(language: str, root: Path | None = None) -> list[Problem]:
    """Every content file of ``language`` against the English one: the same keys, placeholders and numbers."""
    folder = root or content.CONTENT
    found: list[Problem] = []
    for source_path in sorted((folder / LANGUAGE).glob("*.yaml")):
        path = folder / language / source_path.name
        if not path.is_file():
            found.append(Problem(Location(path), "", f"expected a translation of {LANGUAGE}/{source_path.name}"))
            continue
        source, target = load_document(source_path), load_document(path)
        found += list(target.problems)
        if not target.problems:
            found += _compared(source, target, (), source.data, target.data)
    return found


def _compared(source: Document, target: Document, keys: KeyPath, english: Any, translated: Any) -> list[Problem]:
    dotted = ".".join(str(k) for k in keys)
    if isinstance(english, dict):
        if not isinstance(translated, dict):
            return [Problem(target.where(keys), dotted, "expected a section of texts, as in English")]
        found = [
            Problem(target.where_key(keys), dotted, f"expected the key {key!r} here, as in English, found none")
            for key in english
            if key not in translated
        ]
        found += [
            Problem(target.where_key((*keys, key)), ".".join(str(k) for k in (*keys, key)), "not a key in English")
            for key in translated
            if key not in english
        ]
        for key in english:
            if key in translated:
                found += _compared(source, target, (*keys, key), english[key], translated[key])
        return found
    if not isinstance(english, str) or not isinstance(translated, str):
        return [] if type(english) is type(translated) else [Problem(target.where(keys), dotted, "expected text")]
    return _changed(target.where(keys), dotted, english, translated, _fields(english), _fields(translated))


def _fields(text: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}
    except ValueError:
        return set()


def _changed(
    where: Location, key: str, english: str, translated: str, source: set[str], target: set[str]
) -> list[Problem]:
    """The placeholders a translation drops or invents, and each number it types that English does not."""
    target = target - {READINGS[name] for name in source if name in READINGS}  # a reading English lacks
    found = [
        Problem(where, key, f"expected the placeholder {name!r}, as in English, found none")
        for name in sorted(source - target)
    ]
    found += [
        Problem(where, key, f"the placeholder {name!r} is not one English fills in") for name in sorted(target - source)
    ]
    numbers = set(NUMBER.findall(english))
    for number in NUMBER.findall(translated):
        if number not in numbers:
            hint = f": write a placeholder ({', '.join(sorted(source))})" if source else ""
            found.append(Problem(where, key, f"the number {number} is not in the English text{hint}"))
    return found
