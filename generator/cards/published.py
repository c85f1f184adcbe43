"""Published parameter figures ("110M", "14.5M", "10,152,448", "86M backbone + 98M embedding"), parsed.

A figure is one or more parts, each a number at some precision and the part of the model it
covers. The precision is what the figure's digits can say: "14.5M" is to the nearest 0.1M and a
number written out without a unit, "10,152,448", is exact. A trailing zero before the unit may or
may not be significant: "110M" reads first as 110M to the nearest 1M, and only when no count
gives that, as two significant figures (the nearest 10M). Reconciling a figure with the count
(``claims.py``) tries each reading in that order.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Scope(enum.Enum):
    """What part of the model a published number covers."""

    TOTAL = "total"
    BACKBONE = "backbone"  # everything but the embeddings
    EMBEDDINGS = "embeddings"
    ENCODER = "encoder"  # the encoder layers alone
    HEAD = "head"  # the task head alone (a classifier's weights and biases)


# Words a figure may carry after a number, and the scope each names.
SCOPE_WORDS = {
    "total": Scope.TOTAL,
    "backbone": Scope.BACKBONE,
    "embedding": Scope.EMBEDDINGS,
    "embeddings": Scope.EMBEDDINGS,
    "encoder": Scope.ENCODER,
    "head": Scope.HEAD,
}
UNITS = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "thousand": 10**3, "million": 10**6, "billion": 10**9}
_PART = re.compile(
    r"(?P<number>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?P<unit>thousand|million|billion|[kmb](?![a-z]))?\s*(?P<word>[a-z]+)?",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"\s*\+\s*|,\s+|\s+and\s+")
EXAMPLES = "110M, 14.5M, 10,152,448 or 86M backbone + 98M embedding"


@dataclass(frozen=True)
class FigurePart:
    """One number of a figure: its value, the precision its digits give, and what it covers."""

    text: str
    number: str  # the number as written, with its unit: "86M" of "86M backbone"
    value: int
    precision: int  # the finest reading: 1 for an exact figure, 100_000 for "14.5M", 1_000_000 for "110M"
    scope: Scope
    stated_scope: bool  # the figure or the card named the scope; otherwise it is taken as the total
    coarser: tuple[int, ...] = ()  # readings that take trailing zeros as not significant: (10_000_000,) for "110M"
    share: bool = False  # a percentage ("0.08%"): value and precision are in parts of SHARE_SCALE, not counts

    @property
    def exact(self) -> bool:
        return self.precision == 1

    @property
    def precisions(self) -> tuple[int, ...]:
        """Every reading of the figure's precision, the finest first."""
        return (self.precision, *self.coarser)

    @property
    def precision_text(self) -> str:
        """The finest precision as the figure's own unit would write it: 1M, 0.1M, 1K."""
        return self.text_of(self.precision)

    def text_of(self, precision: int) -> str:
        """A precision as the figure's own unit would write it: 10M, 0.1M, 1K, 0.01%."""
        if self.share:
            return percent(precision, SHARE_SCALE, share_places(precision))
        if precision == 1:
            return "1"
        for scale, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "K")):
            if precision * 1000 >= scale and self.value >= scale:
                whole, rest = divmod(precision, scale)
                if rest == 0:
                    return f"{whole}{suffix}"
                return f"{precision / scale:g}{suffix}"
        return f"{precision:,}"

    def rounded(self, count: int, precision: int) -> str:
        """A count rounded to the nearest ``precision``, in the figure's unit: 109,482,240 -> "109M"."""
        for scale, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "K")):
            if precision * 1000 >= scale and self.value >= scale:
                steps = (2 * count + precision) // (2 * precision)  # half up, as the fits test reads "nearest"
                return f"{steps * precision / scale:,.{_decimals(precision, scale)}f}{suffix}"
        return f"{count:,}"


# A share is held as an integer in parts of this: "0.08%" is 800,000,000. Twelve digits write any
# percentage to ten decimals exactly, and the checks compare it with a count's share in integers.
SHARE_SCALE = 10**12
SHARE_ALONE = "expected a share alone"  # how the error for a share beside other parts begins
_SHARE = re.compile(r"(?P<whole>\d+)(?:\.(?P<decimals>\d{1,10}))?\s*%")


def percent(count: int, of: int, decimals: int) -> str:
    """``count`` as a percentage of ``of``, to ``decimals`` places, halves up: 272,384 of 335,141,888 is 0.0813%."""
    steps = (2 * count * 100 * 10**decimals + of) // (2 * of)
    whole, rest = divmod(steps, 10**decimals)
    return f"{whole}.{rest:0{decimals}d}%" if decimals else f"{whole}%"


def share_places(precision: int) -> int:
    """How many decimals a share's precision has in percent: 0.01% has 2."""
    decimals = 0
    while precision * 10**decimals < SHARE_SCALE // 100:
        decimals += 1
    return decimals


def _share(chunk: str) -> FigurePart | None:
    """A figure written as a percentage ("0.08%"), or None when it is not one."""
    match = _SHARE.fullmatch(chunk)
    if match is None:
        return None
    decimals = match["decimals"] or ""
    precision = SHARE_SCALE // 100 // 10 ** len(decimals)
    value = int(match["whole"]) * SHARE_SCALE // 100 + int(decimals or "0") * precision
    return FigurePart(chunk, chunk.replace(" ", ""), value, precision, Scope.TOTAL, False, share=True)


def parse_figure(text: str, counts: str | None = None) -> tuple[FigurePart, ...]:
    """Split a figure into parts; ``counts`` names each part's scope ("backbone + embeddings").

    Raises ValueError with a message for the card author when the figure cannot be read.
    """
    chunks = [c for c in _SEPARATOR.split(text.strip()) if c]
    if not chunks:
        raise ValueError(f"expected a figure such as {EXAMPLES}, found {text!r}")
    scopes: list[Scope | None] = [None] * len(chunks)
    if counts is not None:
        words = [w for w in _SEPARATOR.split(counts.strip().lower()) if w]
        unknown = [w for w in words if w not in SCOPE_WORDS]
        if unknown:
            raise ValueError(f"counts: expected {', '.join(sorted(SCOPE_WORDS))}, found {unknown[0]!r}")
        if len(words) != len(chunks):
            raise ValueError(f"counts names {len(words)} part(s), but the figure {text!r} has {len(chunks)}")
        scopes = [SCOPE_WORDS[w] for w in words]
    shares = [share for chunk in chunks if (share := _share(chunk)) is not None]
    if shares:
        if len(chunks) > 1 or counts is not None:
            raise ValueError(f"{SHARE_ALONE}, such as 0.08%, without counts, found {text!r}")
        return tuple(shares)
    parts = []
    for chunk, given in zip(chunks, scopes, strict=True):
        match = _PART.fullmatch(chunk)
        if match is None:
            raise ValueError(f"expected a figure such as {EXAMPLES}, found {text!r}")
        word = (match["word"] or "").lower()
        if word in ("parameters", "params"):
            word = ""
        if word and word not in SCOPE_WORDS:
            known = ", ".join(sorted(SCOPE_WORDS))
            raise ValueError(f"expected one of {known} after a number in {text!r}, found {word!r}")
        named = SCOPE_WORDS[word] if word else None
        if given is not None and named is not None and given is not named:
            raise ValueError(f"counts says {given.value} but the figure says {word!r}")
        value, precision, coarser = _number(match["number"], (match["unit"] or "").lower())
        scope = given or named
        number = match["number"] + (match["unit"] or "")
        parts.append(FigurePart(chunk, number, value, precision, scope or Scope.TOTAL, scope is not None, coarser))
    return tuple(parts)


def _number(digits: str, unit: str) -> tuple[int, int, tuple[int, ...]]:
    """The value, finest precision and coarser readings of "110" with unit "m": 110M, 1M, (10M,)."""
    scale = UNITS[unit]
    plain = digits.replace(",", "")
    if scale == 1 and "." not in plain:  # every digit written out, as in "10,152,448": an exact count
        return int(plain), 1, ()
    if "." in plain:
        whole, decimals = plain.split(".")
        precision = scale // 10 ** len(decimals) if scale >= 10 ** len(decimals) else 1
        return int(whole) * scale + int(decimals) * precision, max(precision, 1), ()
    stripped = plain.rstrip("0")
    zeros = len(plain) - len(stripped) if stripped else 0
    return int(plain) * scale, scale, tuple(10**n * scale for n in range(1, zeros + 1))


def _decimals(precision: int, scale: int) -> int:
    """How many decimals write a multiple of ``precision`` in units of ``scale``: 0.1M needs 1."""
    decimals = 0
    while precision * 10**decimals < scale:
        decimals += 1
    return decimals
