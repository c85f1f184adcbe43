"""Comparison pages: one for each declared pair (``comparison.PAIRS``), and a list of them all."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from generator.site.differences import Diff, Pairing, available_pairs
from generator.site.page import SITE_TITLE, Page
from generator.site.views import Summary

INDEX = "diffs/index.html"


def diff_path(slug: str) -> str:
    return f"diffs/{slug}/index.html"


def pages(models: Sequence[Summary]) -> list[Page]:
    if not models:
        return []
    pairings = available_pairs(models)
    result = [
        Page(
            INDEX,
            "diffs.html",
            f"Model against model · {SITE_TITLE}",
            "Pairs of models compared: configs side by side, parameters by part, and the tensors added, "
            "removed or reshaped.",
            {"diffs": pairings},
            guide="pairs of models side by side (base to large, BERT to RoBERTa, ALBERT, DistilBERT, ELECTRA, ...): "
            "what changes, tensor by tensor, and where the difference comes from",
        )
    ]
    for pairing in pairings:
        a, b = pairing.a.card.title, pairing.b.card.title
        result.append(
            Page(
                diff_path(pairing.pair.slug),
                "diff.html",
                f"{a} → {b} · {SITE_TITLE}",
                f"{a} ({pairing.a.total:,} parameters) against {b} ({pairing.b.total:,}): configs, parts and tensors.",
                functools.partial(_context, pairing),  # compared where the page is rendered
            )
        )
    return result


def _context(pairing: Pairing) -> dict[str, Diff]:
    return {"diff": pairing.compare()}
