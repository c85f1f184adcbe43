"""What every page kind shares: where templates live, build options, and the Page record.

Page kinds beyond the core ones (index, model pages, comparison, search) live in
``generator/site/pages/``, one module each with a ``pages(models)`` function; they are found by
themselves (``generator.site.pages``), so adding a page kind edits no other module.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# templates/ at the top of a source tree, reached through the link generator/site/templates; a wheel
# carries copies (package data in pyproject.toml), as it does of content/ (see content.py).
TEMPLATES = (Path(__file__).parent / "templates").resolve()
SITE_TITLE = "BERT Parameter Atlas"
LANGUAGE = "en"  # the folder of content/ a site is built from unless told otherwise
# The tag of <html lang> and hreflang where it is not the folder's name, and each language's own name for
# itself, which its switch shows on every other edition's pages.
LANGUAGE_TAGS = {"zh": "zh-CN"}
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}
# The last second a date can be made of: 9999-12-31 23:59:59 UTC.
LAST_EPOCH = 253_402_300_799


class SettingError(Exception):
    """A build setting read from the environment that cannot be used: the build stops before it starts."""


def source_date(value: str) -> datetime.date | None:
    """The date of a SOURCE_DATE_EPOCH value (seconds since 1970-01-01 UTC); None when it is empty.

    Anything else is refused rather than quietly left off the pages, as the reproducible-builds
    specification asks of a malformed value."""
    text = value.strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) > LAST_EPOCH:
        raise SettingError(
            f"SOURCE_DATE_EPOCH: expected a whole number of seconds since 1970-01-01 00:00 UTC, "
            f"at most {LAST_EPOCH} (the end of the year 9999), found {value!r}"
        )
    return datetime.datetime.fromtimestamp(int(text), datetime.UTC).date()


@dataclass(frozen=True)
class SiteOptions:
    """Settings of one build that are not in the cards."""

    base_url: str | None = None  # e.g. https://user.github.io/repo/: canonical links, sitemap, Open Graph
    date: datetime.date | None = None  # from SOURCE_DATE_EPOCH; never the clock
    search: bool = True  # run Pagefind over the finished pages
    language: str = LANGUAGE  # the folder of content/ its sentences come from
    # Every edition one build writes, the first at the site's root and each other under <language>/.
    # Pages link their twins only when there are two or more.
    editions: tuple[str, ...] = ()

    @staticmethod
    def from_environment(
        base_url: str | None, *, search: bool = True, language: str = LANGUAGE, editions: tuple[str, ...] = ()
    ) -> SiteOptions:
        """Options with the date taken from SOURCE_DATE_EPOCH, when it is set (SettingError if it is malformed)."""
        date = source_date(os.environ.get("SOURCE_DATE_EPOCH", ""))
        if base_url and not base_url.endswith("/"):
            base_url += "/"
        return SiteOptions(base_url or None, date, search, language, editions)

    @property
    def tag(self) -> str:
        """The edition's language as <html lang> and hreflang write it: zh-CN for the zh folder."""
        return LANGUAGE_TAGS.get(self.language, self.language)

    @property
    def prefix(self) -> str:
        """The edition's folder below the site's root: none for the first edition, ``zh/`` for zh."""
        return self.prefix_of(self.language)

    def prefix_of(self, language: str) -> str:
        return "" if not self.editions or language == self.editions[0] else f"{language}/"

    def absolute(self, url: str) -> str:
        """An edition's URL made absolute with the base URL, or left relative to the edition's root."""
        return f"{self.base_url}{self.prefix}{url}" if self.base_url else url

    def twins(self, url: str) -> list[tuple[str, str, str]]:
        """Each edition's page at ``url``: its language tag, the language's own name, and its path from the
        site's root. None when this build writes one edition."""
        if len(self.editions) < 2:
            return []
        return [
            (LANGUAGE_TAGS.get(lang, lang), LANGUAGE_NAMES.get(lang, lang), f"{self.prefix_of(lang)}{url}")
            for lang in self.editions
        ]


@dataclass(frozen=True)
class Page:
    """One HTML page: where it goes, which template draws it, and what it is given."""

    path: str
    template: str
    title: str
    description: str
    # What the template is given; a page whose context is costly to gather gives a function
    # instead, called where the page is rendered (in a worker process, see parallel.py).
    context: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    guide: str | None = None  # a one-line summary: the index lists the page under "Learn"
    # What the page shows of the models, for the build cache (a page is made again only when that
    # changes): the ids of the models whose summaries it shows (None: every model's), and ``about``,
    # anything else it shows of them (the family index: how many models each family has).
    shows: tuple[str, ...] | None = None
    about: str = ""
    # Its work per model shown, against a plain list of them (the home page): a build hands out the pages
    # about many models largest first, so that no process is left with the largest at the end.
    cost: int = 1
    # The files written beside the page, made from what its template was given (a comparison's figure as
    # a file of its own): their paths from the edition's root, and their bytes.
    beside: Callable[[Mapping[str, Any], SiteOptions], dict[str, bytes]] | None = None

    def gather(self) -> Mapping[str, Any]:
        """What the template is given: the context, or what its function gathers now."""
        return self.context() if callable(self.context) else self.context

    @property
    def root(self) -> str:
        """The relative path back to the site root, so the site works under any prefix."""
        return "../" * self.path.count("/")

    @property
    def url(self) -> str:
        """The page's address below the site root, as it is linked from outside: models/<id>/."""
        return self.path.removesuffix("index.html")


@dataclass(frozen=True)
class Piece:
    """A piece of a build's work that makes files, and what it shows of the models (see ``Page.shows``).

    ``name`` tells it from the build's other pieces; a piece made from the code alone shows no model."""

    name: str
    make: Callable[[], dict[str, bytes]]
    shows: tuple[str, ...] | None = ()
    about: str = ""
    cost: int = 1  # as for ``Page.cost``

    def work(self, models: int) -> int:
        """How much work the piece is, against the other pieces of a build of ``models`` models."""
        return self.cost * (models if self.shows is None else len(self.shows))

    def __call__(self) -> dict[str, bytes]:
        return self.make()


def guide_page(
    path: str,
    template: str,
    texts: Callable[..., str],
    context: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    shows: tuple[str, ...] | None = None,
    cost: int = 1,
    **values: object,
) -> Page:
    """A page the index lists under "Learn": its title, description and guide are ``texts``, filled with
    ``values``; ``shows`` and ``cost`` as for ``Page`` (every model's summary, unless it names the ones it shows)."""
    return Page(
        path,
        template,
        texts("title", site=SITE_TITLE, **values),
        texts("description", **values),
        context,
        guide=texts("guide", **values),
        shows=shows,
        cost=cost,
    )
