"""The Chinese edition's search: its own Pagefind index, which finds Chinese words that no space separates.

A small site of both editions is built from a Chinese fixture (tests/translation/zh-search.yaml over
zh.yaml) and searched in Chromium, as a reader would, through the zh search page.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_translation import CARDS, write_translation

from conftest import QuietServer, catalog_copy
from generator.cli import main
from generator.counting import texts
from generator.site import content, translation

from .conftest import WIDE, _QuietHandler

FIXTURE = Path(__file__).parents[1] / "translation" / "zh-search.yaml"
# Glossary terms (docs/translating.md) that the fixture's Chinese uses: each must find a page that shows it.
TERMS = (
    "参数量",
    "注意力",
    "层归一化",
    "嵌入层",
    "词表大小",
    "词元",
    "注意力头",
    "前馈网络",
    "池化层",
    "偏置",
    "隐藏层大小",
    "编码器",
    "任务头",
    "掩码语言模型",
    "位置嵌入",
    "查询",
    "权重",
    "自注意力",
    "片段",
    "模型族",
)


def _with_search_words(fixture: dict[str, Any]) -> None:
    """zh.yaml with the search fixture's texts laid over it."""
    for name, words in yaml.safe_load(FIXTURE.read_text("utf-8"))["content"].items():
        fixture["content"].setdefault(name, {}).update(words)


@pytest.fixture(scope="module")
def zh_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both editions of a three-card site, search index included, the zh edition from the fixtures."""
    folder = tmp_path_factory.mktemp("zh-search")
    root, locales = write_translation(folder, _with_search_words)
    out = folder / "served" / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(content, "CONTENT", root)
        patch.setattr(texts, "CONTENT", root)
        patch.setattr(translation, "LOCALES", locales)
        models = catalog_copy(folder / "models", CARDS)
        assert main(["build", "--models", str(models), "--out", str(out), "--no-cache"]) == 0
    return out


@pytest.fixture(scope="module")
def zh_url(zh_site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(zh_site.parent))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="zh-site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/site/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _results(page: Any, query: str) -> list[dict[str, str]]:
    """Each result of a search on the open search page, in order: its address below the edition's
    root, and the title and excerpt a reader sees."""
    box = page.locator("#search input").first
    box.fill(query)
    # Pagefind renders each result as its fragment arrives: wait for the count, and no result loading.
    page.wait_for_function(
        """q => {
            const message = document.querySelector('.pagefind-ui__message')?.textContent.trim() || '';
            return message.includes(q) && !message.endsWith('...') && !document.querySelector('#search .pagefind-ui__loading');
        }""",
        arg=query,
    )
    page.wait_for_timeout(400)  # and let the list settle
    found = page.locator(".pagefind-ui__result > .pagefind-ui__result-inner").evaluate_all(
        """els => els.map(e => ({
            url: e.querySelector('.pagefind-ui__result-link').href,
            title: e.querySelector('.pagefind-ui__result-title').innerText,
            excerpt: (e.querySelector('.pagefind-ui__result-excerpt') || {innerText: ''}).innerText}))"""
    )
    return [{**r, "url": re.sub(r"^.*/site/", "", r["url"])} for r in found]


def _search_page(open_page: Any, url: str) -> Any:
    page = open_page(WIDE)
    response = page.goto(url + "search/index.html")
    assert response is not None and response.ok, f"search/index.html: HTTP {response and response.status}"
    page.locator("#search input").first.wait_for(state="visible")
    return page


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("注意力", "zh/families/longformer/"),  # its differences: global attention, six projections a layer
        ("层归一化", "zh/families/mobilebert/"),  # its differences: NoNorm in place of LayerNorm
        ("参数量", "zh/calculator/"),  # the parameter calculator (参数量计算器)
    ],
)
def test_a_chinese_word_finds_the_chinese_page_about_it_first(
    open_page: Any, zh_url: str, query: str, first: str
) -> None:
    page = _search_page(open_page, zh_url + "zh/")
    found = _results(page, query)
    assert found and all(r["url"].startswith("zh/") for r in found), found
    assert found[0]["url"] == first, [r["url"] for r in found]
    assert query in found[0]["title"] + found[0]["excerpt"], found[0]
    # what a reader sees is the text, not the index's pieces: no space between two Han characters
    assert not any(re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", r["title"] + r["excerpt"]) for r in found), found


def test_each_glossary_term_finds_a_page_that_shows_it(open_page: Any, zh_url: str, zh_site: Path) -> None:
    """Each term's first result is a page whose text holds the term (Pagefind cuts the query into
    pieces: without the index's pieces, 参数量 and 层归一化 found nothing)."""
    page = _search_page(open_page, zh_url + "zh/")
    missed, shown = {}, 0
    for term in TERMS:
        found = _results(page, term)
        html = (zh_site / found[0]["url"] / "index.html").read_text("utf-8") if found else ""
        if term not in re.sub(r"<[^>]*>", "", html):
            missed[term] = found[:1]
        shown += bool(found) and term in found[0]["title"] + found[0]["excerpt"]
    print(f"glossary terms found: {len(TERMS) - len(missed)} of {len(TERMS)}; shown in the first excerpt: {shown}")
    assert not missed, missed


def test_the_english_search_page_searches_the_english_index_alone(open_page: Any, zh_url: str) -> None:
    page = _search_page(open_page, zh_url)
    found = _results(page, "LayerNorm")
    assert found and not any(r["url"].startswith("zh/") for r in found), found
