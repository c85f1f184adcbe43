"""Turn counted models into the site's files: HTML pages, exports and static assets.

One jinja2 environment, autoescaped and strict; number, formula and URL formatting are
filters registered here and nowhere else.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import jinja2
import markdown
import nh3
from markupsafe import Markup, escape

from generator.analysis.choices import load_choices
from generator.cards.card import Card
from generator.counting import memory
from generator.counting.architecture import Kind
from generator.counting.compute import Compute
from generator.counting.expr import to_text
from generator.counting.families import family_in
from generator.counting.memo import IdentityMemo
from generator.site import comparison_step, content, exports, formats, method_chart, translation, typography
from generator.site.catalog_rows import compare_rows, index_rows, lora_rows, memory_rows
from generator.site.compute_view import ComputeView, Words, compute_view
from generator.site.content import Text
from generator.site.diagram import diagram_of, diagram_words, figure_svg, standalone_svg
from generator.site.model_rows import (
    RowWords,
    compute_rows,
    derivation_rows,
    formula,
    grid_rows,
    permalink,
    sentence,
    shape_text,
    tensor_rows,
    tf_name_rows,
)
from generator.site.page import LANGUAGE, SITE_TITLE, TEMPLATES, Page, Piece, SiteOptions
from generator.site.pages import discover_files, discover_pages, discover_prepare
from generator.site.related import Related, related_pages
from generator.site.runs import line_runs
from generator.site.search import merged_bundles
from generator.site.views import COMPARED_SYMBOLS, SHAPES_MEMO, Model, Summary, catalog, rounded

__all__ = ["TEMPLATES", "Page", "Renderer", "SiteOptions"]


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept in ``templates/__pycache__/`` between builds, as Python keeps its
    modules' bytecode: a template is compiled again only when its source changes. Where that
    folder cannot be written, templates are simply compiled on every build."""

    def __init__(self, templates: Path) -> None:
        folder = templates / "__pycache__"
        with contextlib.suppress(OSError):
            folder.mkdir(exist_ok=True)
        super().__init__(str(folder))

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


# Rows written from the very same sequence (a shape's tensors or steps, shared by every card of that shape:
# views.model_of) are written once: a group's tensors, a component's steps. Bounded, as the shapes are.
ROWS_MEMO = 256


def _written_once(rows: Callable[..., Markup]) -> Callable[..., Markup]:
    """``rows(items, *more)``, remembered for the same ``items`` object (and ``more``) while it comes again."""
    memo: IdentityMemo[object, Markup] = IdentityMemo(ROWS_MEMO)

    def written(items: object, *more: Hashable) -> Markup:
        found = memo.get(items, *more)
        return found if found is not None else memo.keep(items, rows(items, *more), *more)

    return written


def _included_once() -> Callable[..., Markup]:
    """The template global ``shaped(name, owner)``: the template ``name`` rendered in the caller's context,
    as ``{% include %}`` does, and remembered for the same ``owner`` object. Only for a part of a page that reads
    nothing but what ``owner`` decides (a shape's compute view, say: views.model_of)."""
    memo: IdentityMemo[object, Markup] = IdentityMemo(ROWS_MEMO)

    @jinja2.pass_context
    def shaped(context: jinja2.runtime.Context, name: str, owner: object) -> Markup:
        found = memo.get(owner, name)
        if found is None:
            template = context.environment.get_template(name)
            found = memo.keep(owner, Markup(template.render(context.get_all())), name)
        return found

    return shaped


def environment(text: Text, templates: Path = TEMPLATES, language: str = LANGUAGE) -> jinja2.Environment:
    """The one template environment: autoescape on, undefined names are errors; ``text`` is site.yaml's."""
    words = RowWords.of(text.section("rendering"))
    everywhere, tf = text.section("everywhere"), text.section("everywhere").section("checkpoint-names")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        bytecode_cache=_CompiledTemplates(templates),
        # A build reads each template once: no look at its file again for every page that includes it (a
        # template changed meanwhile is the cache's to notice, cache.LOADED, not half the pages' to show).
        auto_reload=False,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.i18n"],  # {% trans %} and _(): the templates' sentences, from translation.py
    )
    words_of_language = translation.translations(language)
    env.install_gettext_translations(words_of_language)  # type: ignore[attr-defined]
    env.filters.update(
        # Numbers need no escaping: returned as markup, they skip it (there are hundreds a page).
        num=lambda n: Markup(formats.count(n)),
        rounded=rounded,
        reading=functools.partial(formats.reading, language=language),
        formula=formula,
        mathtext=to_text,
        shape=shape_text,
        tensor_rows=_written_once(functools.partial(tensor_rows, words=words)),
        compute_rows=_written_once(functools.partial(compute_rows, words=words)),
        grid_rows=grid_rows,
        tf_name_rows=functools.partial(tf_name_rows, words=words),
        derivation_rows=functools.partial(derivation_rows, words=words),
        markdown=render_markdown,
        slug=formats.slug,
        sentence=sentence,
        bibtex=formats.bibtex_text,
    )
    env.filters.update(formats.FILTERS)
    env.globals.update(Kind=Kind, site_title=SITE_TITLE, compared_symbols=COMPARED_SYMBOLS, line_runs=line_runs)
    env.globals.update(permalink=functools.partial(permalink, words.permalink), shaped=_included_once())
    # The family the others are described against ("How ... differs from ..."), in the build's language.
    env.globals.update(reference_family=family_in(load_choices().reference_family, language))
    # HTML of every page: its caption keeps {class_name} for the template to fill in, escaped.
    tf_words = {key: tf.html(key) for key in ("hypothetical", "lede", "aside")}
    tf_words["caption"] = Markup(tf.template("caption"))
    six_n = Markup(everywhere.template("six-n"))  # its numbers are the model's, filled in by the template
    env.globals.update(words={"footer": everywhere.html("footer"), "six_n": six_n, "tf": tf_words})
    # A total's reading for the scripts (calculator.js, check.js), where the language has one: its units and words.
    about = words_of_language.gettext("(about %(reading)s)") % {"reading": "{reading}"}
    env.globals["reading_data"] = formats.reading_data(language, about)
    env.globals.update(memory_rows=memory_rows, index_rows=functools.partial(index_rows, language=language))
    env.globals.update(compare_rows=functools.partial(compare_rows, language=language), lora_rows=lora_rows)
    env.globals.update(tuning=method_chart)  # the comparison's fine-tuning: its chart, and LoRA's rank
    env.globals.update(marks=typography.marks_of(text))  # the language's list, clause and sentence joins
    held = text.section("footprints")  # a footprint's name in words, by the name the counting gives it
    env.globals.update(
        footprints={name: held(formats.slug(name)) for name, *_ in (*memory.HELD_AS, *memory.TRAINING_STATE)}
    )
    return env


class _NoRawHtml(markdown.Extension):
    """Card prose is Markdown only: raw HTML in it is shown as text, never as markup.

    The class attributes say what may survive ``render_markdown``'s sanitizing: the elements
    plain Markdown writes, links and images to http(s) or relative addresses, nothing else.
    """

    TAGS: ClassVar[set[str]] = {
        *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code"),
        *("em", "strong", "ul", "ol", "li", "a", "img"),
    }
    ATTRIBUTES: ClassVar[dict[str, set[str]]] = {"a": {"href", "title"}, "img": {"src", "alt", "title"}}
    URL_SCHEMES: ClassVar[set[str]] = {"http", "https"}

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (the Markdown API's name)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")


# The comparison's work against the home page's (Page.cost): 0.13 against 0.05 s at 1,000 cards, in a rebuild.
COMPARE_COST = 2
# One converter, reset between texts: building one takes longer than converting a card's notes.
_MARKDOWN = markdown.Markdown(extensions=[_NoRawHtml()], output_format="html")


@functools.lru_cache(maxsize=256)
def render_markdown(text: str) -> Markup:
    """Markdown from a card, rendered and then sanitized (once per text: a family's notes recur on every page).

    Raw HTML is already shown as text, but Markdown itself writes whatever URL a link gives
    (``[x](javascript:...)``). nh3 (the Rust ammonia sanitizer) then keeps only the elements and
    attributes of plain Markdown, and only http(s) and relative URLs: no script, event handler,
    style, frame, form, ``javascript:`` or ``data:`` URL can reach a page.
    """
    converted = _MARKDOWN.reset().convert(text)
    clean = nh3.clean(
        converted,
        tags=_NoRawHtml.TAGS,
        attributes=_NoRawHtml.ATTRIBUTES,
        url_schemes=_NoRawHtml.URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
    return Markup(clean)


def model_page(
    model: Model,
    text: Text,
    related: Related | None = None,
    compute: ComputeView | None = None,
    language: str = "",
    figure: str = "",
) -> Page:
    """A model's own page: its figure, the derivation and every tensor; ``text`` is the content of the core
    pages, whose texts may give the total's reading, ``{reading}`` (1.09 亿), where the language has one."""
    words = {"title": model.card.title, "total": model.total, "class_name": model.class_name, "site": SITE_TITLE}
    words["reading"] = formats.reading(model.total, language or LANGUAGE)
    own = text.section("model")
    return Page(
        f"models/{model.id}/index.html",
        "model.html",
        own("title", **words),
        own("description", **words),
        {"model": model, "related": related or Related(), "compute": compute, "figure": Markup(figure)},
    )


def catalog_words(text: Text, root: str) -> dict[str, object]:
    """The words of the catalog's sections, in HTML: the variants', and those of each family set apart."""
    words = text.section("catalog")
    own: dict[str, object] = {key: words.html(key) for key in ("variants-heading", "variant", "variants", "start")}
    own |= {key: words.html(key) for key in ("built-by-transformers", "built-by-each")}
    own["exercises"] = words.html("exercises", root=root)
    groups = words.section("start-groups")
    own["start-groups"] = {
        key: {part: groups.section(key).html(part) for part in ("title", "line")}
        for key, _ in load_choices().start_groups
    }
    apart = words.section("apart")
    keys = ("heading", "one", "many", "built-by", "lede")
    own["apart"] = {
        name: {key: apart.section(name).html(key) for key in keys} for name in load_choices().apart_families
    }
    return own


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    """Every page about many models (every page but the models' own)."""
    text = content.load("site", language)
    compare, search = text.section("compare"), text.section("search")
    compare_words = {
        "see-also": compare.html("see-also", root="../"),
        "step": compare.html("step", root="../", batch=comparison_step.BATCH, seq=comparison_step.SEQ),
        "memory": compare.html("memory"),
    }
    result = [
        Page(
            "compare/index.html",
            "compare.html",
            compare("title", site=SITE_TITLE),
            compare("description"),
            {
                "models": models,
                "catalog": catalog(models),
                "batch": comparison_step.BATCH,
                "seq": comparison_step.SEQ,
                "catalog_words": catalog_words(text, "../"),
                "compare_words": compare_words,
            },
            cost=COMPARE_COST,
        ),
        Page(
            "search/index.html",
            "search.html",
            search("title", site=SITE_TITLE),
            search("description"),
            {"models": models, "bundles": merged_bundles([model.id for model in models])},
        ),
    ]
    for provider in discover_pages():
        result.extend(provider(models, language))
    home = Page(
        "index.html",
        "index.html",
        SITE_TITLE,
        text.section("home")("description"),
        {
            "models": models,
            "catalog": catalog(models),
            "guides": [page for page in result if page.guide],
            "catalog_words": catalog_words(text, ""),
        },
    )
    return [home, *result]


class Renderer:
    """The template environment and the build's options: turns pages and models into files."""

    def __init__(self, options: SiteOptions, templates: Path = TEMPLATES, cards: Sequence[Card] = ()) -> None:
        self.options = options
        self.related = related_pages(cards, options.language)  # gathered before any worker process starts
        self.templates = templates
        self.text = content.load("site", options.language)  # read once, before any worker process starts
        self.compute_words = Words.of(content.load("compute", options.language))
        self.figure_words = diagram_words(self.text)  # read and checked once, not once a model
        self._views: IdentityMemo[Compute, ComputeView] = IdentityMemo(SHAPES_MEMO)  # see compute_of
        self.env = environment(self.text, templates, options.language)
        # Compiled once here, before any worker process starts: model.html and what it pulls in.
        templates_of_a_model = "model.html base.html _macros.html _claims.html _memory.html _compute.html"
        for name in f"{templates_of_a_model} _checkpoint_names.html _model_toc.html _related.html".split():
            self.env.get_template(name)

    def render(self, page: Page, context: Mapping[str, Any] | None = None) -> bytes:
        template = self.env.get_template(page.template)
        site_root = page.root + "../" * self.options.prefix.count("/")  # past the edition's folder
        context = page.gather() if context is None else context
        html = template.render(page=page, root=page.root, site_root=site_root, options=self.options, **context)
        return typography.tidy_spacing(html, self.options.language).encode("utf-8")

    def model_files(self, model: Model) -> dict[str, bytes]:
        """A model's page, its architecture figure as a file of its own, and its tensors as JSON and CSV."""
        figure, words = diagram_of(model), self.figure_words
        related, language, inline = self.related.get(model.id), self.options.language, figure_svg(figure, words)
        return {
            f"models/{model.id}/index.html": self.render(
                model_page(model, self.text, related, self.compute_of(model), language, inline)
            ),
            f"models/{model.id}/architecture.svg": standalone_svg(figure, words, self.options, f"models/{model.id}/"),
            f"models/{model.id}.json": exports.to_json(model.inventory, model.compute).encode("utf-8"),
            f"models/{model.id}.csv": exports.to_csv(model.inventory).encode("utf-8"),
        }

    def model_inputs(self, card_id: str) -> str:
        """What a model's files show besides its own card, as text: the build cache keys them on it too."""
        return repr(self.related.get(card_id))

    def compute_of(self, model: Model) -> ComputeView | None:
        """The compute section's view; none for a card whose step is not measured (see comparison_step)."""
        compute = model.compute  # counted once (model_of) for the page, the JSON and the summary
        if compute is None or comparison_step.comparison_seq(model.card) < 1:
            return None  # no transformers class, an activation with no declared saved tensors, or P = 0
        found = self._views.get(compute)  # a card of a shape already shown: the same compute, the same view
        return (
            found
            if found is not None
            else self._views.keep(compute, compute_view(model.card, compute, self.compute_words))
        )

    def site_files(self, models: Sequence[Summary]) -> list[Piece]:
        """The files about many models, as independent pieces of work (a build runs them in parallel):
        each page about many models, then 404 with sitemap and robots."""
        site_pages = pages(models, self.options.language)
        work = [
            Piece(page.path, functools.partial(self._page_file, page), page.shows, page.about, page.cost)
            for page in site_pages
        ]
        urls = [page.url for page in site_pages if page.template != "search.html"]
        urls += [f"models/{model.id}/" for model in models]
        work.append(Piece("404.html", functools.partial(self._site_files, urls, models), None))
        return work

    def code_files(self) -> list[Piece]:
        """The files no card changes, as pieces of work: each page kind's data, the assets.

        They depend on the generator, its templates and options alone, so a build cache keeps
        them across edits of the cards (the calculator's documents are a second of work).
        """
        data = [piece for files in discover_files() for piece in files(self.options.language)]
        return [*data, Piece("static", self._assets)]

    def prepare(self) -> None:
        """What each page kind can work out before the models are counted (its optional ``prepare``), so
        that its pages cost less once the summaries exist: a build calls this while its workers are busy."""
        for prepare in discover_prepare():
            prepare(self.options.language)

    def _page_file(self, page: Page) -> dict[str, bytes]:
        context = page.gather()  # once, for the page and the files beside it
        return {page.path: self.render(page, context), **(page.beside(context, self.options) if page.beside else {})}

    def _site_files(self, urls: list[str], models: Sequence[Summary]) -> dict[str, bytes]:
        if self.options.prefix:  # the sitemap and robots.txt are the whole site's: its first edition writes them
            return {"404.html": self.not_found(models)}
        every = [self.options.prefix_of(language) + url for language in self.options.editions or ("",) for url in urls]
        return {
            "404.html": self.not_found(models),
            "sitemap.xml": sitemap(every, self.options).encode("utf-8"),
            "robots.txt": robots(self.options).encode("utf-8"),
        }

    def not_found(self, models: Sequence[Summary]) -> bytes:
        """404.html: served for a missing address at any depth, so its links start from the base URL (or /)."""
        words = self.text.section("not-found")
        page = Page("404.html", "404.html", words("title", site=SITE_TITLE), words("description"))
        site_root = self.options.base_url or "/"
        root = site_root + self.options.prefix
        html = self.env.get_template("404.html").render(
            page=page,
            root=root,
            site_root=site_root,
            options=self.options,
            catalog=catalog(models),
            catalog_words=catalog_words(self.text, root),
        )
        return typography.tidy_spacing(html, self.options.language).encode("utf-8")

    def _assets(self) -> dict[str, bytes]:
        static = self.templates / "static"
        return {
            f"static/{asset.relative_to(static).as_posix()}": asset.read_bytes()
            for asset in sorted(static.rglob("*"))
            if asset.is_file()
        }


def sitemap(urls: list[str], options: SiteOptions) -> str:
    """sitemap.xml, pages about many models first, then each model's.

    Its addresses are absolute only when a base URL is given (the protocol wants them).
    """
    lastmod = f"<lastmod>{options.date.isoformat()}</lastmod>" if options.date else ""
    entries = "".join(f"  <url><loc>{escape(options.absolute(url))}</loc>{lastmod}</url>\n" for url in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n"
    )


def robots(options: SiteOptions) -> str:
    """robots.txt: everything may be crawled; the sitemap is named when its address is known."""
    lines = ["User-agent: *", "Allow: /"]
    if options.base_url:
        lines.append(f"Sitemap: {options.absolute('sitemap.xml')}")
    return "\n".join(lines) + "\n"
