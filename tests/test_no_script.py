"""No script from a card: a corpus of XSS payloads in every field that reaches a page.

Each payload goes into a card's title, its Markdown notes, the figure and text of its claims and
the title of its sources (and into the claim and source URLs, after the http(s):// validation
demands). The id cannot carry one: it is validated (tests/test_bad_input.py). The site built from
those cards is then checked twice:

- in the HTML: no script element but the site's own, no event-handler attribute, no
  ``javascript:``/``data:`` URL, no frame, form, object, base or style injection; and the
  payload is still there, shown as text;
- in Chromium (Debian's, driven by Playwright): every English page, a sample of the Chinese ones
  (``browsed_pages``), and the search page with payload queries, open without a dialog, without a
  payload's flag set on ``window``, and without a payload's request reaching the server.

The browser half skips on a machine without Chromium or Playwright, and fails when CI=true.
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import io
import os
import random
import re
import threading
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml
from markupsafe import escape

from conftest import QuietServer
from generator.cli import main
from generator.site.render import render_markdown

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

# Each payload, run, would call alert(), set window.__pwned or request a /pwned-N address.
PAYLOADS = [
    "<script>alert(1)</script>",
    '"><script>alert(2)</script>',
    "'><img src=x onerror=alert(3)>",
    '<img src="x" onerror="window.__pwned=4">',
    "<svg onload=alert(5)>",
    "<svg><script>alert(6)</script></svg>",
    "<svg><a xlink:href=\"javascript:alert(7)\"><text y='20'>svg link</text></a></svg>",
    "<svg><animate onbegin=alert(8) attributeName=x dur=1s>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(9)>",
    '<math href="javascript:alert(10)">math link</math>',
    "<math><maction actiontype=statusline xlink:href=javascript:alert(11)>x</maction></math>",
    '<iframe src="javascript:alert(12)"></iframe>',
    '<iframe srcdoc="<script>parent.alert(13)</script>"></iframe>',
    '<form action="javascript:alert(14)"><button>go</button></form>',
    '<a href="javascript:alert(15)">html link</a>',
    "[markdown link](javascript:alert(16))",
    "[markdown link](JaVaScRiPt:alert(17))",
    "[markdown link](java&#x73;cript:alert(18))",
    "[markdown link](&#106;avascript:alert(19))",
    "[markdown link](  javascript:alert(20))",
    "[markdown link](<javascript:alert(21)>)",
    "[reference link][r21]\n\n[r21]: javascript:alert(22)",
    '![image](x" onerror="alert(23))',
    "![image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMjQpPg==)",
    "[data link](data:text/html,<script>alert(25)</script>)",
    "[vbscript link](vbscript:msgbox(26))",
    '<div style="background:url(javascript:alert(27))">styled</div>',
    "<style>body{display:none}</style>",
    "</title><script>alert(28)</script>",
    "</textarea></noscript></style><script>alert(29)</script>",
    "<!--<script>alert(30)</script>-->",
    '<object data="javascript:alert(31)"></object>',
    '<embed src="javascript:alert(32)">',
    "<details open ontoggle=alert(33)>",
    "<body onload=alert(34)>",
    '<base href="javascript:alert(35)//">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(36)">',
    '<link rel="stylesheet" href="data:text/css,body{display:none}">',
    "<<script>script>alert(37)<</script>/script>",
    "<scr<script>ipt>alert(38)</script>",
    '" onmouseover="alert(39)" x="',
    "' onfocus='alert(40)' autofocus '",
    "`<img src=x onerror=alert(41)>`",
    "    <script>alert(42)</script>",
    '<http://example.org/"onmouseover="alert(43)>',
    '[title breakout](https://example.org "t\\" onmouseover=\\"alert(44)")',
    "\u202e<script>alert(45)</script>",
    '<noscript><p title="</noscript><img src=x onerror=alert(46)>">',
    "<template><script>alert(47)</script></template>",
    "<input onfocus=alert(48) autofocus>",
    "<video><source onerror=alert(49)></video>",
    '<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:alert(50)">entities</a>',
    "javascript:alert(51)",
    "{{ 7*7 }} {% for x in [1] %}{{ x }}{% endfor %} ${alert(52)}",
    "*<img src=x onerror=alert(53)>*",
    "<img src=x onerror=\"fetch('/pwned-54')\">",
    "<script>new Image().src='/pwned-55'</script>",
    '<a href="jav\tascript:alert(56)">tab</a>',
    "[encoded scheme](%6Aavascript:alert(57))",
    "<svg><style>*{background:url(/pwned-58)}</style></svg>",
]
# URLs must start with http(s)://; what follows may still try to break out of the attribute.
URL_PAYLOADS = [
    'https://example.org/"><script>alert(101)</script>',
    "https://example.org/' onmouseover='alert(102)",
    "https://example.org/?q=<svg onload=alert(103)>",
    'http://example.org/" autofocus onfocus="alert(104)',
    "https://example.org/#javascript:alert(105)",
]
CONFIG = {
    "vocab_size": 100,
    "hidden_size": 8,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 16,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
}
MARKER = re.compile(r"alert\((\d+)\)|__pwned=(\d+)|/pwned-(\d+)")


def payload_cards(payloads: list[str] = PAYLOADS, urls: list[str] = URL_PAYLOADS) -> dict[str, dict[str, Any]]:
    """One card per payload, as its title; notes, claims and sources rotate through every payload."""
    cards = {}
    count = len(payloads)
    for index, payload in enumerate(payloads):
        others = [payloads[(index + step) % count] for step in range(4)]
        cards[f"xss-{index:02d}"] = {
            "title": payload,
            "family": "bert",
            "head": "base",
            "config": CONFIG,
            "claims": [
                {"figure": others[0], "source": others[1], "url": urls[index % len(urls)]},
                {"figure": others[2], "source": others[3]},
            ],
            "sources": [
                {"title": others[1], "url": urls[(index + 1) % len(urls)]},
                {"title": others[2], "url": "https://example.org/"},
            ],
            "notes": "\n\n".join(others),
        }
    cards["xss-all"] = {
        "title": "Every payload",
        "family": "bert",
        "head": "base",
        "config": CONFIG,
        "claims": [{"figure": p, "source": p, "url": u} for p, u in zip(payloads, urls * 20, strict=False)],
        "sources": [{"title": p, "url": "https://example.org/"} for p in payloads],
        "notes": "\n\n".join(payloads),
    }
    return cards


def control_cards() -> dict[str, dict[str, Any]]:
    """The same cards with harmless text: what the templates themselves put on the pages."""
    plain = [f"Plain text {index}" for index in range(len(PAYLOADS))]
    return payload_cards(plain, [f"https://example.org/{index}" for index in range(len(URL_PAYLOADS))])


def missing(tool: str, how: str) -> NoReturn:
    message = f"{tool} is not available ({how})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; CI=true, so this is a failure, not a skip", pytrace=False)
    pytest.skip(message)


def build_site(work: Path, cards: dict[str, dict[str, Any]]) -> Path:
    models = work / "models"
    models.mkdir()
    for card_id, data in cards.items():
        (models / f"{card_id}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    out = work / "site"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = main(["build", "--models", str(models), "--out", str(out)])
    assert status == 0, stderr.getvalue()
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the payload cards, with its search index."""
    return build_site(tmp_path_factory.mktemp("xss"), payload_cards())


@pytest.fixture(scope="module")
def control_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("control"), control_cards())


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


# --- the HTML ---------------------------------------------------------------------------------

FORBIDDEN_ELEMENTS = {
    *("iframe", "frame", "frameset", "object", "embed", "applet", "form", "input", "button", "textarea"),
    *("select", "base", "style", "svg", "template", "video", "audio", "source", "marquee", "isindex"),
}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster", "background", "cite", "xlink:href"}
# The site's own script files, from a page's folder (../static/) or, on 404.html, served at any depth, from the
# root of its edition (/static/, /zh/static/).
SITE_SCRIPTS = re.compile(r"^(/([a-z]{2}/)?|(\.\./)*)(static|pagefind)/[\w.-]+\.js$")


def url_scheme(value: str) -> str | None:
    """The scheme a browser would see: entities decoded, whitespace and control characters dropped."""
    cleaned = re.sub(r"[\x00-\x20\x7f-\x9f]", "", html.unescape(value))
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", cleaned)
    return match.group(1).lower() if match else None


class Audit(HTMLParser):
    """Everything on a page that could run script, load a frame or restyle it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.in_script = False
        self.in_body = False  # the templates' own <head> may hold a stylesheet; card text is in <body>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.in_body = self.in_body or tag == "body"
        if tag in FORBIDDEN_ELEMENTS and (self.in_body or tag != "style"):
            self.found.append(f"<{tag}>")
        if tag == "script":
            self.in_script = True
            if not SITE_SCRIPTS.match(values.get("src", "")):
                self.found.append(f"<script src={values.get('src')!r}>")
        if tag == "meta" and "http-equiv" in values:
            self.found.append(f"<meta http-equiv={values['http-equiv']!r}>")
        if tag == "link" and values.get("rel") not in ("stylesheet", "icon", "canonical"):
            self.found.append(f"<link rel={values.get('rel')!r}>")
        for name, value in values.items():
            if name.startswith("on") or name in ("style", "srcdoc", "formaction"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name in URL_ATTRIBUTES and url_scheme(value) not in (None, "http", "https"):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.found.append(f"inline script {data[:60]!r}")


def test_the_payload_cards_are_built(site: Path) -> None:
    assert len(list((site / "models").glob("*/index.html"))) == len(PAYLOADS) + 1


def audit(page: Path) -> Counter[str]:
    found = Audit()
    found.feed(page.read_text(encoding="utf-8"))
    found.close()
    return Counter(found.found)


def test_no_dangerous_construct_survives_in_any_page(site: Path, control_site: Path) -> None:
    # The templates' own constructs (the search form, the search page's scripts) are on the control
    # pages too; anything more on a payload page came from a card.
    found = {}
    for page in pages(site):
        relative = page.relative_to(site)
        extra = audit(page) - audit(control_site / relative)
        if extra:
            found[str(relative)] = sorted(extra)[:10]
    assert found == {}


TABLE_PAGES = {"index.html", "compare/index.html"}


def test_the_control_pages_hold_only_the_templates_own_constructs(control_site: Path) -> None:
    allowed = {"<form>", "<input>", "<button>"}  # the search box in the header
    # The charts page's, every model and family page's own inline SVG (site/svg.py, diagram.py), drawn at build time.
    charts = {"<svg>"}
    tools = {"<select>"}  # the sort and filter form of the index and the comparison (static/tables.js)
    for page in pages(control_site):
        relative = re.sub(r"^[a-z]{2}/", "", page.relative_to(control_site).as_posix())  # zh/compare/ is compare/
        drawn = page.parent.name == "charts" or page.parent.parent.name in ("models", "families")
        own = charts if drawn else tools if relative in TABLE_PAGES else set()
        assert set(audit(page)) <= allowed | own, page


@pytest.mark.parametrize("index", range(len(PAYLOADS)))
def test_a_payload_title_is_shown_as_text(site: Path, index: int) -> None:
    page = (site / "models" / f"xss-{index:02d}" / "index.html").read_text(encoding="utf-8")
    shown = str(escape(PAYLOADS[index]))
    assert f'<h1 id="top">{shown}</h1>' in page or f">{shown}</h1>" in page
    assert f"<title>{shown}: " in page
    index_page = (site / "index.html").read_text(encoding="utf-8")
    assert f">{shown}</a>" in index_page


def test_claims_and_sources_are_shown_as_text(site: Path) -> None:
    page = (site / "models" / "xss-all" / "index.html").read_text(encoding="utf-8")
    for payload in PAYLOADS:
        assert f"<strong>{escape(payload)}</strong>" in page  # the claim's figure
        assert f">{escape(payload)}</a>" in page  # the claim's source and the source's title


@pytest.mark.parametrize("payload", PAYLOADS + URL_PAYLOADS)
def test_markdown_is_sanitized_after_rendering(payload: str) -> None:
    found = Audit()
    found.feed(str(render_markdown(payload)))
    found.close()
    assert found.found == []


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[a](https://example.org/x)", '<p><a href="https://example.org/x" rel="noopener noreferrer">a</a></p>'),
        (
            "[a](../bert-base-uncased/index.html)",
            '<p><a href="../bert-base-uncased/index.html" rel="noopener noreferrer">a</a></p>',
        ),
        ("[a](#tensors)", '<p><a href="#tensors" rel="noopener noreferrer">a</a></p>'),
        ("[a](javascript:alert(1))", '<p><a rel="noopener noreferrer">a</a></p>'),
        ("[a](mailto:me@example.org)", '<p><a rel="noopener noreferrer">a</a></p>'),
        ("![d](data:image/png;base64,AAAA)", '<p><img alt="d"></p>'),
        ("**bold** *it* `code`", "<p><strong>bold</strong> <em>it</em> <code>code</code></p>"),
        ("<b>raw</b>", "<p>&lt;b&gt;raw&lt;/b&gt;</p>"),
    ],
)
def test_links_keep_only_http_and_relative_urls(markdown: str, expected: str) -> None:
    assert str(render_markdown(markdown)) == expected


# --- in a real browser ------------------------------------------------------------------------


class _Recorder(http.server.SimpleHTTPRequestHandler):
    requests: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        self.requests.append(self.path)


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[tuple[str, list[str]]]:
    """The payload site on 127.0.0.1, and every path requested from it."""
    requests: list[str] = []
    handler = type("Recorder", (_Recorder,), {"requests": requests})
    server = QuietServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# Run in the page after it loaded: whatever in the live DOM could still run script.
DOM_AUDIT = """() => {
  const found = [];
  const search = document.querySelector("#search");
  for (const el of document.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    const inSearchUi = search !== null && search.contains(el);  // Pagefind's own widgets
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) found.push(`${tag} ${name}`);
      if (["href", "src", "action", "formaction", "data", "xlink:href"].includes(name)) {
        const value = attr.value.replace(/[\\x00-\\x20\\x7f-\\x9f]/g, "").toLowerCase();
        const pagefindForm = inSearchUi && value === "javascript:void(0);";  // the search box's own form
        if (/^(javascript|data|vbscript):/.test(value) && !pagefindForm) found.push(`${tag} ${name}=${attr.value}`);
      }
      if (name === "srcdoc") found.push(`${tag} srcdoc`);
    }
    const siteChart = tag === "svg" && ((el.classList.contains("chart") && el.closest("figure.chart-figure") !== null)
      || (el.classList.contains("diagram")  // a model or family page's figure, and a family's switch figures
          && el.closest("figure#architecture, details.diagram-variant > figure.diagram") !== null));
    if (!inSearchUi && !siteChart && ["iframe", "frame", "object", "embed", "base", "template", "svg"].includes(tag))
      found.push(tag);
    if (tag === "script" && !/\\/(static|pagefind)\\/[\\w.-]+\\.js$/.test(el.src)) found.push("script " + el.src);
  }
  return found;
}"""


class Visitor:
    """One browser page that opens addresses and collects every sign that a payload ran."""

    def __init__(self, browser: Any, requests: list[str]) -> None:
        self.context = browser.new_context(service_workers="block")
        self.page = self.context.new_page()
        self.requests = requests
        self.signs: list[str] = []
        self.results = 0
        self.page.on("dialog", self._dialog)
        self.page.on("console", self._console)

    def _dialog(self, dialog: Any) -> None:
        self.signs.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if MARKER.search(message.text):
            self.signs.append(f"console: {message.text}")

    def visit(self, url: str, *, query: str | None = None) -> list[str]:
        """Open a page (and type a search), focus and point at it, and return what ran."""
        self.signs = []
        seen = len(self.requests)
        page = self.page
        page.goto(url, wait_until="load")
        if query is not None:
            page.fill("#search input", query)
            with contextlib.suppress(Exception):
                page.wait_for_selector(".pagefind-ui__result", timeout=5_000)
            self.results = page.locator(".pagefind-ui__result").count()
        page.keyboard.press("Tab")
        page.mouse.move(200, 200)
        # Past a zero-delay timer queued after load, a rendering step (where autofocus is applied,
        # before animation frames: HTML "update the rendering") and another timer: whatever the page
        # queued at load, on focus or on pointing has run by then, with no fixed wait.
        page.evaluate(SETTLED)
        flag = page.evaluate("() => window.__pwned")
        if flag is not None:
            self.signs.append(f"window.__pwned = {flag}")
        self.signs.extend(f"DOM: {item}" for item in page.evaluate(DOM_AUDIT))
        paths = [urllib.parse.urlsplit(path).path for path in self.requests[seen:]]
        self.signs.extend(f"request: {path}" for path in paths if "pwned" in path)
        return self.signs

    def close(self) -> None:
        self.context.close()


SETTLED = "() => new Promise(done => setTimeout(() => requestAnimationFrame(() => setTimeout(done, 0)), 0))"
SEARCH_QUERIES = ["alert", "script onerror", "javascript", "pwned"]
ADDRESS_PAYLOADS = PAYLOADS[:12]
CANARY = (
    "<!doctype html><title>canary</title><p>text</p><img src=x onerror=alert(1)>"
    "<script>window.__pwned = 2; new Image().src = '/pwned-3';</script>"
    '<a href="javascript:alert(4)">link</a><iframe srcdoc="x"></iframe>'
)


@pytest.fixture(scope="module")
def browsed(site: Path, served: tuple[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every visit made once, in Chromium: {what: (signs, search results)}.

    Playwright's sync API runs in a thread of its own: the suite's other browser tests keep a
    session-long Playwright (and its event loop) in the main thread, and two cannot share one.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright", "pip install -e '.[test]'")
    if not CHROMIUM.is_file():
        missing(f"Chromium at {CHROMIUM}", "apt-get install chromium")
    base, requests = served
    canary = tmp_path_factory.mktemp("canary") / "canary.html"
    canary.write_text(CANARY, encoding="utf-8")
    visits: dict[str, tuple[str, str | None]] = {"canary": (canary.as_uri(), None)}
    for page in browsed_pages(site):
        relative = page.relative_to(site).as_posix()
        visits[relative] = (base + relative, None)
    if (site / "pagefind").is_dir():
        for query in SEARCH_QUERIES:
            visits[f"search: {query}"] = (base + "search/index.html", query)
    if (site / "search" / "index.html").is_file():
        for payload in ADDRESS_PAYLOADS:
            visits[f"?q={payload}"] = (base + "search/index.html?q=" + urllib.parse.quote(payload), None)
    results: dict[str, Any] = {}
    failures: list[BaseException] = []

    def run() -> None:
        try:
            with sync_playwright() as playwright:
                launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                visitor = Visitor(launched, requests)
                try:
                    for name, (url, query) in visits.items():
                        results[name] = (list(visitor.visit(url, query=query)), visitor.results)
                finally:
                    visitor.close()
                    launched.close()
        except BaseException as error:
            failures.append(error)

    worker = threading.Thread(target=run, name="chromium")
    worker.start()
    worker.join()
    if failures:
        raise failures[0]
    return results


BROWSE_SEED = 1205  # the sample of the second edition's pages that Chromium opens; fixed, so a failure reproduces


def browsed_pages(site: Path) -> list[Path]:
    """The pages Chromium opens: every page of the first edition, and of each other edition one page of
    each kind (its first folder), drawn with BROWSE_SEED, besides the pages of the card that holds every
    payload and of its family. An edition's pages come from the same templates and scripts, with each
    payload in the same place; the HTML check above reads every page of both."""
    chosen: list[Path] = []
    kinds: dict[tuple[str, ...], list[Path]] = {}
    for page in pages(site):
        parts = page.relative_to(site).parts
        if not re.fullmatch(r"[a-z]{2}", parts[0]) or parts[1:3] in (("models", "xss-all"), ("families", "bert")):
            chosen.append(page)
        else:
            kinds.setdefault(parts[:2], []).append(page)
    rng = random.Random(BROWSE_SEED)
    return sorted(chosen + [rng.choice(group) for group in kinds.values()])


def test_the_browser_check_sees_a_payload_that_runs(browsed: dict[str, Any]) -> None:
    # The control: the same checks on a page where payloads do run must report each of them.
    signs = browsed["canary"][0]
    assert "dialog: 1" in signs
    assert "window.__pwned = 2" in signs
    assert any(sign.startswith("DOM: a href=javascript:alert(4)") for sign in signs), signs
    assert any(sign.startswith("DOM: iframe") for sign in signs), signs


def test_no_page_runs_a_payload_in_chromium(browsed: dict[str, Any], site: Path) -> None:
    found = {name: signs for name, (signs, _) in browsed.items() if signs and in_site(site, name)}
    assert len([name for name in browsed if in_site(site, name)]) == len(browsed_pages(site))
    assert found == {}


def in_site(site: Path, name: str) -> bool:
    return (site / name).is_file()


@pytest.mark.parametrize("query", SEARCH_QUERIES)
def test_search_results_run_no_payload_in_chromium(browsed: dict[str, Any], site: Path, query: str) -> None:
    if not (site / "pagefind").is_dir():
        pytest.skip("this build has no search index")
    signs, results = browsed[f"search: {query}"]
    assert signs == []
    assert results > 0, "the search found no payload page, so it showed no payload"


@pytest.mark.parametrize("payload", ADDRESS_PAYLOADS)
def test_a_payload_in_the_search_address_runs_nothing(browsed: dict[str, Any], site: Path, payload: str) -> None:
    if not (site / "search" / "index.html").is_file():
        pytest.skip("this build has no search page")
    assert browsed[f"?q={payload}"][0] == []
