"""Template filters for the comparison pages: bytes in binary units, signed differences, shares.

Registered in ``render.environment`` with the other filters; they only format numbers that
the inventory (or arithmetic on it) produced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

MINUS = "\u2212"
NO_SHARE = "\u2014"  # an em dash: the share of a total of 0 is not defined
BINARY_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
# Languages whose readers count large numbers in myriads (10⁴), largest unit first. English counts in
# thousands: it has no reading, and its pages show the figure alone.
MYRIADS = {"zh": ((10**12, "万亿"), (10**8, "亿"), (10**4, "万"))}
READING_DIGITS = 3  # significant digits of a reading: 109,482,240 is read 1.09 亿


def binary(size: int) -> str:
    """Bytes in the largest binary unit that leaves at least 1: 417.6 MiB, 1.63 GiB (1 GiB = 2³⁰ bytes)."""
    for unit, scale in BINARY_UNITS:
        if size >= scale:
            value = size / scale
            return f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"
    return f"{size:,} bytes"


def count(number: int | None) -> str:
    """A whole number with its thousands separated (109,482,240); a dash for a value the card leaves out."""
    return NO_SHARE if number is None else f"{number:,}"


def reading(number: int, language: str) -> str:
    """A large count as a reader of ``language`` says it: 1.09 亿, 439 万, 33.5 亿 (three significant digits).

    Rounded half up before the unit is chosen, so 99,995,000 reads 1 亿, not 10000 万. Empty for a
    language that counts in thousands, and for a count under the smallest unit, which is read as written.
    A page writes the words around it (约, "about"): they are its translation's, not this function's."""
    units = MYRIADS.get(language, ())
    if not units or number < units[-1][0]:
        return ""
    step = 10 ** max(len(str(number)) - READING_DIGITS, 0)
    near = (number + step // 2) // step * step
    scale, unit = next((scale, unit) for scale, unit in units if near >= scale)
    return f"{decimal(Fraction(near, scale), '')} {unit}"


def reading_data(language: str, about: str) -> str:
    """The reading's units (exponents of ten) and its words (``about``, with ``{reading}``) as JSON for the
    scripts; empty for a language that has no reading, whose pages carry none."""
    units = MYRIADS.get(language, ())
    if not units:
        return ""
    exponents = {unit: len(str(scale)) - 1 for scale, unit in units}
    return json.dumps({"units": exponents, "about": about}, ensure_ascii=False, separators=(",", ":"))


def signed(number: int) -> str:
    """A difference with its sign: +15,119,616, −97,799,424, 0 (a true minus sign, not a hyphen)."""
    if number > 0:
        return f"+{number:,}"
    if number < 0:
        return f"{MINUS}{-number:,}"
    return "0"


def percent(value: Fraction | float | int, total: int | None = None) -> str:
    """A share as a percentage, rounded on its own: 23.74% -> "23.7%", never "0.0%" for a part that is not zero.

    The one rule for every share and difference on the site: a tenth of a percent, rounded half
    up; a share that is not zero but under 0.05% gets two significant digits (98,304 of
    335,141,888 is "0.029%"), and one short of the whole that would show 100.0% gets the digits
    it takes to fall short ("99.97%"). Shares rounded this way need not add up to 100.0%.
    A share of nothing (``total`` 0: a card 0 wide does no FLOPs) has no percentage: a dash.
    """
    if total == 0:
        return NO_SHARE
    if isinstance(value, int) and isinstance(total, int):  # the usual case, without making a Fraction
        top, bottom, negative = abs(value), abs(total), (value < 0) != (total < 0)
    else:
        share = Fraction(value) if total is None else Fraction(value) / total
        top, bottom, negative = abs(share.numerator), share.denominator, share < 0
    # The share is top / bottom, and 100 times that in hundredths.
    decimals = 1
    if 0 < top * 2000 < bottom:  # not zero, but under 0.05%
        while top * 100 * 10**decimals < 10 * bottom:  # until two digits are significant
            decimals += 1
    elif top < bottom:  # under 100%: as many decimals as it takes not to round up to 100
        while _steps(top, bottom, decimals) >= 100 * 10**decimals:
            decimals += 1
    whole, rest = divmod(_steps(top, bottom, decimals), 10**decimals)
    sign = MINUS if negative and (whole or rest) else ""
    return f"{sign}{whole}.{rest:0{decimals}d}%"


def _steps(top: int, bottom: int, decimals: int) -> int:
    """The share top / bottom in hundredths, in units of 10^-decimals, rounded half up (whole numbers only)."""
    scale: int = 10**decimals
    return (200 * top * scale + bottom) // (2 * bottom)


def times(ratio: Fraction | float) -> str:
    """A ratio as a multiple: 3.06×, 0.08×."""
    value = float(ratio)
    return f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def ratio(value: int, base: int, places: int = 5) -> str:
    """``value`` over ``base`` to ``places`` decimals (2.00000); a dash when ``base`` is 0, like a share of nothing."""
    return f"{value / base:.{places}f}" if base else NO_SHARE


def decimal(value: Fraction | int, separator: str = ",") -> str:
    """A rational figure, exact where its decimals end (654,315,520; 1,232.5), else to 2 places after "≈".

    ``separator=""`` writes it plain, for a ``data-value`` a script reads as a number.
    """
    value = Fraction(value)
    if value < 0:  # a plain figure keeps the hyphen-minus a script's Number() reads
        return (MINUS if separator else "-") + decimal(-value, separator)
    whole, rest = divmod(value.numerator, value.denominator)
    grouped = f"{whole:,}".replace(",", separator)
    digits, remainder = "", Fraction(rest, value.denominator)
    while remainder and len(digits) < 12:
        remainder *= 10
        digits += str(int(remainder))
        remainder -= int(remainder)
    if remainder:
        return f"≈{float(value):,.2f}".replace(",", separator) if separator else f"{float(value):.6f}"
    return f"{grouped}.{digits}" if digits else grouped


FILTERS: dict[str, Callable[..., Any]] = {
    "binary": binary,
    "signed": signed,
    "percent": percent,
    "times": times,
    "ratio": ratio,
    "decimal": decimal,
}


def bibtex_text(text: str) -> str:
    """Text safe inside a BibTeX field: braces balanced away, TeX specials escaped."""
    for char in "\\{}":
        text = text.replace(char, "")
    return re.sub(r"([&%$#_])", r"\\\1", text)


def slug(text: str) -> str:
    """A stable anchor fragment from a name: 'feed-forward in' -> 'feed-forward-in'."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")
