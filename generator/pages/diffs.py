"""Comparison pages: one for each declared pair (``comparison.PAIRS``), and a list of them all."""

from __future__ import annotations

from collections.abc import Sequence

from generator.comparison import diffs
from generator.site import SITE_TITLE, Page
from generator.views import Summary

INDEX = "diffs/index.html"


def diff_path(slug: str) -> str:
    return f"diffs/{slug}/index.html"


def pages(models: Sequence[Summary]) -> list[Page]:
    if not models:
        return []
    compared = diffs(models)
    result = [
        Page(
            INDEX,
            "diffs.html",
            f"Model against model · {SITE_TITLE}",
            "Pairs of models compared: configs side by side, parameters by part, and the tensors added, "
            "removed or reshaped.",
            {"diffs": compared},
            guide="pairs of models side by side (base to large, BERT to RoBERTa, ALBERT, DistilBERT, ELECTRA, ...): "
            "what changes, tensor by tensor, and where the difference comes from",
        )
    ]
    for diff in compared:
        a, b = diff.a.card.title, diff.b.card.title
        result.append(
            Page(
                diff_path(diff.pair.slug),
                "diff.html",
                f"{a} → {b} · {SITE_TITLE}",
                f"{a} ({diff.a.total:,} parameters) against {b} ({diff.b.total:,}): configs, parts and tensors.",
                {"diff": diff},
            )
        )
    return result
