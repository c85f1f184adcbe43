"""The "Fine-tuning methods" section of the model pages, read off the built pages.

Each method's row shows the count ``counting.methods`` gives (tests/test_fine_tuning.py holds it to
peft's); the LoRA table's rows add up to its total; a refused method shows no count. The Chinese
edition's pages hold the same values under the same anchors (tests/test_translation.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from test_fine_tuning_step import derived

from conftest import MODELS
from generator.analysis.fine_tuning import SHOWN, fine_tuning_of
from generator.cards.card import load_card
from generator.counting.compute import shows_step
from generator.counting.methods import Method

CATALOG = sorted(p.stem for p in MODELS.glob("*.yaml"))


def section(site: Path, card_id: str) -> str:
    page = (site / "models" / card_id / "index.html").read_text(encoding="utf-8")
    start = page.index('<section aria-labelledby="fine-tuning">')
    return page[start : page.index("</section>", start)]


def test_every_method_row_shows_the_engine_s_count_and_step(site: Path) -> None:
    for card_id in CATALOG:
        shown = section(site, card_id)
        ft = fine_tuning_of(load_card(MODELS / f"{card_id}.yaml"))
        if ft is None:  # no transformers class: no method but full training, and no table
            assert "fine-tuning-full" not in shown
            continue
        assert [row.id for row in ft.rows] == [f"fine-tuning-{t.method.value}" for t in SHOWN]
        for row in ft.rows:
            found = re.search(rf'<tr id="{row.id}">(.*?)</tr>', shown, re.S)
            assert found is not None, (card_id, row.id)
            values = re.findall(r'data-value="(\d+)"', found.group(1))
            sizes = [int(v) for v in re.findall(r'data-bytes="(\d+)"', found.group(1))]
            if row.tuned is None:
                assert values == sizes == [], (card_id, row.id)
                continue
            assert values == [str(row.tuned.trainable)], (card_id, row.id)
            # Gradients and Adam, then the step's bf16 activations and its training memory, bf16 mixed and fp32.
            step = row.step
            expected = [row.optimizer]
            if step is not None:
                memory = step.training_memory
                expected += [step.activations["bf16"], memory["bf16_mixed"], memory["fp32"]]
                assert memory["bf16_mixed"] == row.memory["bf16_mixed"] + step.activations["bf16"]
            assert sizes == expected, (card_id, row.id)
            # Every method a model of a family with a declared flow can take has its step on the page.
            ran = shows_step(ft.inventory.card) and row.misfit is None and ft.seq_of(row.tuning) > 0
            flows = row.tuning.method is Method.FULL or derived(ft.inventory.card)  # full's is the declared step
            assert (step is not None) == (ran and flows), (card_id, row.id)


def test_the_lora_table_adds_up_to_what_lora_trains(site: Path) -> None:
    worked = 0
    for card_id in CATALOG:
        card = load_card(MODELS / f"{card_id}.yaml")
        ft = fine_tuning_of(card)
        if ft is None or ft.lora.tuned is None:
            continue
        shown = section(site, card_id)
        table = shown[shown.index('<table class="lora stack">') :]
        table = table[: table.index("</table>")]
        body = table[table.index("<tbody>") : table.index("</tbody>")]
        rows = [int(v) for v in re.findall(r'class="n count" data-value="(\d+)"', body)]
        total = re.search(r'<tfoot>.*?data-value="(\d+)"', table, re.S)
        assert total is not None and int(total.group(1)) == ft.lora.tuned.trainable == sum(rows), card_id
        worked += 1
    assert worked > len(CATALOG) // 2  # every family with peft's defaults, or a query and a value
