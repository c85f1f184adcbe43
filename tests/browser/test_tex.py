"""The "TeX" button beside each formula (static/tex.js): named, it copies the formula's annotation; a
table's buttons are one tab stop, the arrow keys move between them; without script there is none, and
with it nothing on the page moves when the buttons appear."""

from __future__ import annotations

from typing import Any

from .conftest import PHONE, WIDE

MODEL = "models/bert-base-uncased/index.html"


def test_each_formula_has_a_named_button_that_copies_its_tex(browser: Any, edition_url: str) -> None:
    for edition, label, copied in (("", "Copy TeX: ", "TeX copied: "), ("zh/", "复制 TeX：", "已复制 TeX：")):
        context = browser.new_context(viewport={"width": WIDE, "height": 800})
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        try:
            page = context.new_page()
            page.goto(edition_url + edition + MODEL)
            formulas = page.evaluate(
                """() => [...document.querySelectorAll('span.math')].map(span => ({
                    alt: span.querySelector('math').getAttribute('alttext'),
                    tex: span.querySelector('annotation').textContent,
                    label: span.querySelector('button.copy-tex')?.getAttribute('aria-label') ?? null,
                }))"""
            )
            assert len(formulas) > 100
            assert [f["label"] for f in formulas] == [label + f["alt"] for f in formulas]
            # A derivation line's button: Tab reaches its table's first button, the arrow keys the others.
            formula = page.locator('[id="d-embeddings-token-embeddings"] span.math').first
            tex = formula.locator("annotation").text_content()
            table = formula.locator("xpath=ancestor::table[1]")
            first = table.locator("button.copy-tex").first
            first.focus()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement") == first.evaluate("b => b")
            buttons = table.locator("button.copy-tex")
            target = buttons.evaluate_all(
                "(all, b) => all.indexOf(b)", formula.locator("button.copy-tex").element_handle()
            )
            for _ in range(target):
                page.keyboard.press("ArrowDown")
            assert page.evaluate("document.activeElement.closest('tr').id") == "d-embeddings-token-embeddings"
            # Tab leaves the table and Shift+Tab comes back to the button last used, its table's one stop.
            assert buttons.evaluate_all("all => all.filter(b => b.tabIndex === 0).length") == 1
            assert page.evaluate("document.activeElement.getAttribute('aria-describedby')") == "copy-tex-hint"
            page.keyboard.press("Enter")
            page.wait_for_function("document.querySelector('.copied').textContent !== ''")
            assert page.locator(".copied").text_content() == copied + tex
            assert page.evaluate("navigator.clipboard.readText()") == tex
        finally:
            context.close()


def test_a_page_of_a_hundred_formulas_costs_the_keyboard_one_stop_per_table(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + MODEL)
    found = page.evaluate(
        """() => {
            const buttons = [...document.querySelectorAll('button.copy-tex')];
            const stops = buttons.filter(b => b.tabIndex === 0);
            const groups = new Set(buttons.map(b => b.closest('table, section, main')));
            return {buttons: buttons.length, stops: stops.length, groups: groups.size,
                    hint: document.getElementById('copy-tex-hint').textContent};
        }"""
    )
    assert found["buttons"] > 100 and found["stops"] == found["groups"] < 20, found
    assert found["hint"] == "Arrow keys move between the formulas of this table or section"


def test_without_script_no_button_and_the_formula_keeps_its_tex(browser: Any, site_url: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": WIDE, "height": 800})
    try:
        page = context.new_page()
        page.goto(site_url + MODEL)
        assert page.locator("button.copy-tex").count() == 0
        assert page.locator("span.math").count() == page.locator('annotation[encoding="application/x-tex"]').count()
        assert page.locator("span.math").first.evaluate("span => getComputedStyle(span).paddingRight") == "0px"
    finally:
        context.close()


def test_nothing_moves_when_the_buttons_appear(open_page: Any, site_url: str) -> None:
    """Each button's room is kept from the first paint (style.css): every formula is where it was before."""
    places = "() => [...document.querySelectorAll('math')].map(m => JSON.stringify(m.getBoundingClientRect()))"
    for width in (WIDE, PHONE):
        before = open_page(width)
        before.route("**/static/tex.js", lambda route: route.abort())
        before.goto(site_url + MODEL)
        after = open_page(width)
        after.goto(site_url + MODEL)
        assert before.locator("button.copy-tex").count() == 0
        assert after.locator("button.copy-tex").count() == after.locator("span.math").count()
        assert before.evaluate(places) == after.evaluate(places), width


def test_the_calculators_formulas_carry_their_tex_and_buttons(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "calculator/index.html?family=bert&head=base")
    page.wait_for_selector("#calc-closed button.copy-tex")
    found = page.evaluate(
        """() => [...document.querySelectorAll('span.math')].map(span => [
            span.querySelectorAll('annotation[encoding="application/x-tex"]').length,
            span.querySelectorAll('button.copy-tex').length])"""
    )
    assert len(found) > 20 and set(map(tuple, found)) == {(1, 1)}
