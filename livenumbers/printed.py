"""What a reader sees of a number, and how near the number is to showing something else.

The lock records, for every cited key, the text each of its formats prints in each edition
("en pct:1" -> "26.5%", "fr pct:1" -> "26,5 %"); a build whose text differs fails as a moved
number does. So the printed text must not be decided by another machine's rounding. A value
is *steady* in a format when every value within its noise prints the same. Its noise:

- a figure cited as a bound (`below:B`): the value itself (rounding noise can double on
  another machine, so the figure must sit under half its bound);
- a discrete number (a count, a share of counts, a pick: the source records a margin and a
  finite step for it): nothing, when its decision is farther from turning than the floor
  (its value is the same integer arithmetic everywhere); one step, when it is nearer;
- any other float: the floor, relative to the value (another CPU's rounding is far below it).

A citation with a stated tolerance (`~TOL`) prints the value the lock recorded, which every
machine reproduces to within TOL (the build fails otherwise): its text is the same
everywhere by construction, provided its noise is within TOL.

`accept` records, for a citation that is not steady in its page's format, that format with
its noise as a stated tolerance (the lock's `shown`: "pct:1" -> "pct:1~3e-05"), so that
every machine prints the value of record, the digits the page asked for. It refuses a pick
whose value would change past any tolerance if it turned (a word, a head near a tie), a
bound its figure comes too near, and a stated tolerance below the noise; each is named.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import formats

BOUND_HEADROOM = 2.0   # a bound's figure must sit below 1/2 of it (`below:B`)


def slot(language: str, fmt: str) -> str:
    """The lock's name for one printed form of a key: "en pct:1"."""
    return f"{language} {fmt}"


def stated(fmt: str) -> bool:
    """Does the format state a tolerance, printing the lock's value (`pct:1~0.01`)?"""
    return formats.parse_format(fmt)[0] != "below" and formats.parse_format(fmt)[2] is not None


@dataclass(frozen=True)
class Unsteady:
    """A citation whose printed text another machine's rounding could change."""
    key: str
    fmt: str
    value: Any
    noise: float
    distance: float   # to the nearest value that prints differently
    pages: tuple[str, ...] = ()

    def __str__(self) -> str:
        if formats.parse_format(self.fmt)[0] == "below":
            why = f"a bound's figure must sit below 1/{BOUND_HEADROOM:g} of it"
        elif stated(self.fmt):
            why = f"its stated tolerance is below its noise {self.noise:.2g}"
        else:
            why = f"its noise {self.noise:.2g} could change it past any tolerance"
        return f"  {self.key} as {self.fmt!r}: {self.value!r}, {why}; cited by {', '.join(self.pages)}"


def edge_distance(value: Any, fmt: str) -> float:
    """How far `value` may move before `fmt` prints it otherwise (inf for text, yes/no; the
    bound's headroom for `below:B`)."""
    kind, digits, noise = formats.parse_format(fmt)
    if isinstance(value, (str, bool)) or kind in ("text", "yesno"):
        return math.inf
    x = float(value)
    if kind == "below":
        return noise - x
    if kind in ("int", "ord"):
        return 1.0   # a whole number prints otherwise as soon as it moves
    if kind == "about":   # the nearest counts outside its rounding bucket (half up)
        unit, half = 10 ** digits, 10 ** digits // 2
        first = (int(x) + half) // unit * unit - half          # the bucket's smallest count
        return float(min(int(x) - first + 1, first + unit - int(x)))
    scale = 100.0 if kind in ("pct", "pp") else 1.0
    units = [10.0 ** -digits / scale]
    if kind == "sci" and x != 0:
        exponent = int(f"{x:.{digits}e}".split("e")[1])
        units = [10.0 ** (e - digits) for e in (exponent - 1, exponent, exponent + 1)]
    plain = fmt.split("~")[0]
    text = formats.format_value("", x, plain)
    nearest = math.inf
    for unit in units:   # the half-units either side of x on each grid; keep those that change the text
        base = math.floor(x / unit + 0.5)
        for edge in ((base - 0.5) * unit, (base + 0.5) * unit):
            if any(formats.format_value("", side, plain) != text
                   for side in (math.nextafter(edge, -math.inf), math.nextafter(edge, math.inf))):
                nearest = min(nearest, abs(x - edge))
    return nearest


def noise(value: Any, fmt: str, margin_step: tuple[float, float] | None, floor: float) -> float:
    """How far another machine may move `value` as this citation reads it (module docstring)."""
    if formats.parse_format(fmt)[0] == "below":
        return abs(float(value)) * (BOUND_HEADROOM - 1.0)
    if isinstance(value, (str, bool)):
        return 0.0 if margin_step is None or margin_step[0] >= floor else math.inf
    if margin_step is not None and margin_step[0] < floor:
        step = margin_step[1]
        return step if isinstance(value, int) or math.isinf(step) else max(step, floor * abs(float(value)))
    if margin_step is not None and math.isfinite(margin_step[1]) or isinstance(value, int):
        return 0.0   # discrete, its decision clear of the floor: the same arithmetic everywhere
    return floor * abs(float(value))


def steady_format(value: Any, fmt: str, margin_step, floor: float) -> str | None:
    """The format a citation asking for `fmt` prints in: `fmt` itself if `value` is steady in
    it; else `fmt` with its noise as a stated tolerance (the lock's value is printed); None
    where neither holds (module docstring)."""
    n = noise(value, fmt, margin_step, floor)
    kind = formats.parse_format(fmt)[0]
    if stated(fmt):
        return fmt if n <= formats.parse_format(fmt)[2] else None
    if n == 0 or edge_distance(value, fmt) > n:
        return fmt
    if kind in ("below", "text", "yesno") or not math.isfinite(n):
        return None
    return f"{fmt}~{float(f'{n:.2g}'):g}"


def unsteady(key: str, value: Any, fmt: str, margin_step, floor: float, pages=()) -> Unsteady | None:
    """The citation, if no format prints it steadily (`steady_format`)."""
    if steady_format(value, fmt, margin_step, floor) is not None:
        return None
    return Unsteady(key, fmt, value, noise(value, fmt, margin_step, floor), edge_distance(value, fmt), tuple(pages))
