"""What hosting and linking need: base URL only where absolute, sitemap, robots, 404, permalinks,
a citation, reproducible dates, search, and a Pages workflow that uses the README's command
(`serve`, the local preview, is tested with the command line in tests/test_cli.py)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import MODELS, ROOT, card_by_id, reference_for
from generator.build.pipeline import build
from generator.counting.derivation import derive
from generator.counting.inventory import count_parameters
from generator.site.render import SiteOptions

GOLDEN = Path(__file__).resolve().parent / "golden"
BASE = "https://example.github.io/atlas/"


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hosted") / "site"
    build(MODELS, out, SiteOptions(base_url=BASE, date=None, search=False))
    return out


@pytest.fixture(scope="module")
def local(site: Path) -> Path:
    """The shared build of the catalog (tests/conftest.py): no base URL, no date."""
    return site


def read(site: Path, page: str) -> str:
    return (site / page).read_text(encoding="utf-8")


def test_base_url_is_used_only_for_absolute_addresses(hosted: Path, local: Path) -> None:
    page = read(hosted, "models/bert-base-uncased/index.html")
    assert f'<link rel="canonical" href="{BASE}models/bert-base-uncased/">' in page
    assert f'<meta property="og:url" content="{BASE}models/bert-base-uncased/">' in page
    assert '<link rel="stylesheet" href="../../static/style.css">' in page
    # Apart from canonical, Open Graph, the citation and the addresses paper prints after the links inside the
    # site, the hosted and local builds are the same.
    local_page = read(local, "models/bert-base-uncased/index.html")
    strip = re.compile(
        r'<link rel="canonical"[^>]*>|<meta property="og:url"[^>]*>|<section aria-labelledby="cite".*?</section>'
        r'| data-address="[^"]*"',
        re.S,
    )

    def normal(html: str) -> str:
        return "\n".join(line for line in strip.sub("", html).splitlines() if line.strip())

    assert normal(page) == normal(local_page)
    # A canonical address must be absolute; without a base URL there is none to give.
    assert '<link rel="canonical"' not in local_page


def test_sitemap_and_robots(hosted: Path, local: Path) -> None:
    sitemap = read(hosted, "sitemap.xml")
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert locs[:2] == [BASE, f"{BASE}compare/"]
    assert f"{BASE}models/bert-base-uncased/" in locs
    # one address per model page; page kinds in generator/site/pages/ add their own
    assert len([loc for loc in locs if "/models/" in loc]) == len(list(MODELS.glob("*.yaml")))
    assert read(hosted, "robots.txt") == f"User-agent: *\nAllow: /\nSitemap: {BASE}sitemap.xml\n"
    assert read(local, "robots.txt") == "User-agent: *\nAllow: /\n"


def test_not_found_page_works_at_any_depth(hosted: Path, local: Path) -> None:
    page = read(hosted, "404.html")
    assert f'<a href="{BASE}compare/index.html">' in page and "<style>" in page and 'rel="stylesheet"' not in page
    assert f'<a href="{BASE}models/bert-base-uncased/">' in page  # every model, grouped by family
    assert f'action="{BASE}search/index.html"' in page  # the header's search
    assert '<a href="/compare/index.html">' in read(local, "404.html")


def test_every_page_has_title_description_canonical_and_favicon(hosted: Path) -> None:
    local = hosted  # canonical links need the base URL
    titles = set()
    for page in sorted(local.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        title = re.search(r"<title>([^<]+)</title>", html)
        assert title, page
        titles.add(title.group(1))
        assert re.search(r'<meta name="description" content="[^"]{20,}">', html), page
        if page.name != "404.html":
            assert '<link rel="canonical"' in html and 'rel="icon"' in html, page
    assert len(titles) == len(list(local.rglob("*.html")))
    assert (local / "static" / "favicon.svg").read_text(encoding="utf-8").startswith("<svg")


@pytest.mark.parametrize(
    ("page", "name"),
    [("models/bert-base-uncased/index.html", "bert-base-uncased"), ("exercises/index.html", "exercises")],
)
def test_anchors_are_pinned(local: Path, page: str, name: str) -> None:
    """Links from course materials point at these (a model's rows, a lecturer's #answer-<id>); changing them must
    be deliberate.

    Regenerate after a deliberate change with: UPDATE_GOLDEN=1 make test
    """
    html = read(local, page)
    anchors = "\n".join(re.findall(r' id="([^"]+)"', html)) + "\n"
    golden = GOLDEN / f"{name}.anchors"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(anchors, encoding="utf-8")
    assert anchors == golden.read_text(encoding="utf-8")


def test_permalinks_are_visible_and_named(local: Path) -> None:
    html = read(local, "models/bert-base-uncased/index.html")
    row = re.search(r'<tr id="t-encoder\.layer\.0\.attention\.self\.query\.weight">(.*?)</tr>', html, re.S)
    assert row is not None
    assert (
        '<a class="permalink" href="#t-encoder.layer.0.attention.self.query.weight" '
        'aria-label="Link to encoder.layer.0.attention.self.query.weight">#</a>'
    ) in row.group(1)
    assert (
        '<h2 id="derivation">Derivation <a class="permalink" href="#derivation" aria-label="Link to Derivation">#</a></h2>'
        in html
    )
    assert 'id="d-layer-feed-forward-in"' in html


def test_citation(hosted: Path, tmp_path: Path) -> None:
    date_site, models = tmp_path / "dated", tmp_path / "models"
    models.mkdir()
    shutil.copy(MODELS / "bert-base-uncased.yaml", models)  # the one page read: no catalog build needed
    os.environ["SOURCE_DATE_EPOCH"] = "1763683200"  # 2025-11-21 00:00 UTC
    try:
        build(models, date_site, SiteOptions.from_environment(BASE, search=False))
    finally:
        del os.environ["SOURCE_DATE_EPOCH"]
    html = read(date_site, "models/bert-base-uncased/index.html")
    assert (
        'BERT Parameter Atlas. "BERT-Base, uncased: 109,482,240 parameters." '
        f"{BASE}models/bert-base-uncased/ (version of 2025-11-21)."
    ) in html
    assert "@misc{bert-atlas-bert-base-uncased,\n  title        = {BERT-Base, uncased: 109,482,240 parameters}," in html
    assert f"  url          = {{{BASE}models/bert-base-uncased/}},\n  year         = {{2025}}," in html
    assert "Version of 2025-11-21." in html  # the footer
    assert "Version of" not in read(hosted, "models/bert-base-uncased/index.html")  # no epoch, no date


def test_a_citation_without_a_base_url_gives_no_address(local: Path) -> None:
    """A build without --base-url does not know where the site will be: "models/bert-base-uncased/" is no address."""
    cite = re.search(
        r'<section aria-labelledby="cite".*?</section>', read(local, "models/bert-base-uncased/index.html"), re.S
    )
    assert cite is not None
    total = f"{reference_for('bert-base-uncased')['total']:,}"
    blocks = re.findall(r'<pre class="cite"><code>(.*?)</code></pre>', cite[0], re.S)
    assert blocks == [
        f'BERT Parameter Atlas. "BERT-Base, uncased: {total} parameters."',
        "@misc{bert-atlas-bert-base-uncased,\n"
        f"  title        = {{BERT-Base, uncased: {total} parameters}},\n"
        "  howpublished = {BERT Parameter Atlas},\n"
        "}",
    ]


def test_formulas_are_mathml_core_with_text_alternatives(local: Path) -> None:
    html = read(local, "models/albert-base-v2/index.html")
    maths = re.findall(r"<math[ >].*?</math>", html, re.S)
    derivation = derive(count_parameters(card_by_id("albert-base-v2")))
    # Two per step (symbolic, substituted) unless it only reuses tied tensors, one per block,
    # one more per repeated block, and the closed form with and without numbers.
    steps = sum(2 for b in derivation.blocks for s in b.lines if not s.tied)
    blocks = len(derivation.blocks) + sum(1 for b in derivation.blocks if b.block.repeat)
    # The compute section, after the parameters' sections, has formulas of its own (tests/test_compute_page.py).
    before = html.split('<section aria-labelledby="compute">')[0]
    assert len(re.findall(r"<math[ >].*?</math>", before, re.S)) == steps + blocks + 2
    tags = {tag for m in maths for tag in re.findall(r"<([a-z]+)", m)}
    assert tags <= {"math", "semantics", "mrow", "mi", "mn", "mo", "msup", "annotation"}
    assert all(re.match(r'<math alttext="[^"]+"><semantics>', m) for m in maths)
    assert all(m.endswith("</annotation></semantics></math>") for m in maths)


def test_search_page_works_without_javascript(local: Path) -> None:
    html = read(local, "search/index.html")
    # the box Pagefind mounts in, naming the model shards it merges (the catalog's models fit in one)
    assert '<div id="search" class="search" data-bundles="models-0"></div>' in html
    assert (local / "pagefind" / "models-0" / "pagefind-entry.json").is_file()
    assert "<noscript>" in html
    assert html.count('<li><a href="../models/') == len(list(MODELS.glob("*.yaml")))

    # Content pages load no script, but for enhancements: sorting the index and the comparison, copying
    # a model page's permalinks, and copying a formula's TeX, only where there are formulas. Each works without it.
    def tex(root: str) -> str:
        label = (
            'data-label="Copy TeX: {formula}" data-copied="TeX copied: {tex}" '
            'data-hint="Arrow keys move between the formulas of this table or section"'
        )
        return f'<script src="{root}static/tex.js" {label} defer></script>'

    scripts = {
        "index.html": ['<script src="static/tables.js" defer></script>'],
        "compare/index.html": ['<script src="../static/tables.js" defer></script>'],
        "models/bert-base-uncased/index.html": [
            tex("../../"),
            '<script src="../../static/permalink.js" defer></script>',
        ],
        "charts/index.html": [tex("../")],
        "errata/index.html": [tex("../")],
        "diffs/index.html": [],
    }
    for page, expected in scripts.items():
        assert re.findall(r"<script[^>]*>.*?</script>", read(local, page), re.S) == expected, page


def test_pages_workflow_uses_the_readme_command() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert workflow["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    build_steps = workflow["jobs"]["build"]["steps"]
    uses = [step.get("uses", "") for step in build_steps + workflow["jobs"]["deploy"]["steps"]]
    for action in ("actions/configure-pages@", "actions/upload-pages-artifact@", "actions/deploy-pages@"):
        assert any(u.startswith(action) for u in uses), action
    assert any(step.get("run", "").startswith("make site ") for step in build_steps)
