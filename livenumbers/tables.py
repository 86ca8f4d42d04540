"""What every table needs: Markdown's table syntax, long tables folded, ranges written once.

A source's tables (livenumbers/source.py) take the page's renderer and return Markdown,
every number through `renderer.cite`, so it is recorded and locked like prose.
"""
from __future__ import annotations

from .i18n import CLOSE, unmark

COLLAPSE = 30   # rows beyond which a table is folded into a <details> block


def md_table(header: list[str], rows: list[list[str]], summary: str | None = None) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    table = "\n".join(lines) + "\n"
    if len(rows) > COLLAPSE:
        label = summary or f"{len(rows)} rows"
        return f'\n<details markdown="1">\n<summary>{label}</summary>\n\n{table}\n</details>\n'
    return table


_UNITS = ("\u202f%", "%", "×", " pp", "\u00a0points", "\u00a0point")   # as livenumbers/formats.py prints them


def span(lo: str, hi: str, to: str = "to") -> str:
    """Two formatted bounds as one range, the unit once: "23.3%", "29.2%" -> "23.3–29.2%";
    `to` when a bound is negative, where a dash would read as a minus: "-24.4 to -19.2 pp"
    (French: "−24,4 à −19,2").
    A bound marked for translation (livenumbers/i18n.py) keeps its mark."""
    bare_lo, bare_hi = unmark(lo), unmark(hi)
    unit = next((u for u in _UNITS if bare_hi.endswith(u)), "")
    own = next((u for u in _UNITS if bare_lo.endswith(u)), "")   # "0,5 point" before "3,0 points"
    if unit and own:
        lo = lo[:-len(own) - 1] + CLOSE if lo.endswith(own + CLOSE) else lo.removesuffix(own)
    negative = bare_lo.startswith(("-", "\u2212")) or bare_hi.startswith(("-", "\u2212"))
    return f"{lo}{f' {to} ' if negative else '–'}{hi}"
