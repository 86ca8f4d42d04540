"""What every table needs: Markdown's table syntax, long tables folded, ranges written once.

A source's tables (livenumbers/source.py) take the page's renderer and return Markdown,
every number through `renderer.cite`, so it is recorded and locked like prose.
"""
from __future__ import annotations

COLLAPSE = 30   # rows beyond which a table is folded into a <details> block


def md_table(header: list[str], rows: list[list[str]], summary: str | None = None) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    table = "\n".join(lines) + "\n"
    if len(rows) > COLLAPSE:
        label = summary or f"{len(rows)} rows"
        return f'\n<details markdown="1">\n<summary>{label}</summary>\n\n{table}\n</details>\n'
    return table


def span(lo: str, hi: str) -> str:
    """Two formatted bounds as one range, the unit once: "23.3%", "29.2%" -> "23.3–29.2%";
    "to" when a bound is negative, where a dash would read as a minus: "-24.4 to -19.2 pp"."""
    unit = "%" if hi.endswith("%") else "×" if hi.endswith("×") else " pp" if hi.endswith(" pp") else ""
    return f"{lo.removesuffix(unit)}{' to ' if lo.startswith('-') or hi.startswith('-') else '–'}{hi}"
