"""The bench's one table: sections of (what, figure, target, met) rows, aligned as plain text."""
from __future__ import annotations


def status(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "MISSED")


class Table:
    def __init__(self) -> None:
        self._rows: list[tuple[str, ...]] = []

    def section(self, title: str) -> None:
        self._rows.append(("", title))

    def note(self, text: str) -> None:
        """A line of its own under the rows, not aligned with them."""
        self._rows.append(("  ", text))

    def row(self, what: str, figure: str = "", target: str = "", met: bool | None = None) -> None:
        self._rows.append((what, figure, target, status(met)))

    def render(self, header: list[str]) -> str:
        rows = [r for r in self._rows if len(r) == 4]
        w = [max((len(r[i]) for r in rows), default=0) for i in range(3)]
        lines = []
        for r in self._rows:
            if len(r) == 2:
                lines += [r[0] + r[1]] if r[0] else ["", r[1]]
            else:
                lines.append(f"  {r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}".rstrip())
        rule = "=" * max(len(line) for line in lines + header)
        return "\n".join([rule, *header, rule, *lines, rule])


def s(x: float | None, digits: int = 2) -> str:
    """Seconds, or a dash for a stage that did not run."""
    return "—" if x is None else f"{x:.{digits}f} s"


def mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:.1f} MB"
