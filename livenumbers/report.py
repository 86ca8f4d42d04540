"""What the drift gate found: every number that moved, every claim that failed, every pick
too near a tie, with the pages that cite them (`Report`), and what `accept` wrote
(`Accepted`). Their messages name key, values, tolerance and pages, and say what to do."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import lock
from .markup import Citation, Claim


@dataclass
class Drift:
    key: str
    recorded: Any
    now: Any
    tolerance: float
    pages: list[str]


@dataclass
class Fragile:
    """A cited number decided by a pick too near a tie: another machine's rounding could turn it."""
    key: str
    margin: float
    floor: float
    pages: list[str]


@dataclass
class Report:
    results: dict
    results_key: str
    charts: dict[str, dict]
    inputs_key: str = ""                                      # results, lock and bibliography: what every page reads
    rendered: dict[str, str] = field(default_factory=dict)                  # page -> text
    notebook_cells: dict[str, dict[int, str]] = field(default_factory=dict)  # page -> cell -> text
    citations: dict[str, list[Citation]] = field(default_factory=dict)      # page -> its citations, in order
    routes: dict[str, set[str]] = field(default_factory=dict)               # page -> instrument links checked
    numbers: dict = field(default_factory=dict)                             # every key's value now
    locked: dict[str, lock.Locked] = field(default_factory=dict)            # what the lock holds
    cited: dict[str, set[str]] = field(default_factory=dict)                # key -> pages
    fresh: dict[str, lock.Locked] = field(default_factory=dict)             # what accept would write
    drifts: list[Drift] = field(default_factory=list)
    unlocked: list[str] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)
    failed_claims: list[Claim] = field(default_factory=list)
    fragile: list[Fragile] = field(default_factory=list)
    provenance_changes: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)   # what the results depend on (Source.inputs): the lock records it

    @property
    def ok(self) -> bool:
        return not (self.drifts or self.unlocked or self.uncited or self.failed_claims or self.fragile)

    def pages_with_drift(self) -> dict[str, list[Drift]]:
        out: dict[str, list[Drift]] = {}
        for d in self.drifts:
            for page in d.pages:
                out.setdefault(page, []).append(d)
        return out

    def banner(self, page: str) -> str:
        """HTML to put above a page whose numbers moved or whose claims fail (`mkdocs
        serve` shows these instead of stopping); empty when the page is sound."""
        drifts = self.pages_with_drift().get(page, [])
        failed = [c for c in self.failed_claims if c.page == page]
        if not (drifts or failed):
            return ""
        items = [f"<li><code>{html.escape(d.key)}</code>: recorded {html.escape(repr(d.recorded))}, "
                 f"now {html.escape(repr(d.now))}</li>" for d in drifts]
        items += [f"<li>claim no longer holds (line {c.line}): <code>{html.escape(c.expr)}</code>"
                  f"{html.escape(c.reads_text())}</li>" for c in failed]
        return ('<div class="admonition danger drift-banner"><p class="admonition-title">'
                "Numbers on this page moved since the lock was written</p><ul>" + "".join(items) + "</ul></div>")

    def message(self, lock_path: Path) -> str:
        lines = []
        if self.drifts:
            lines.append(f"{len(self.drifts)} published number(s) moved beyond their tolerance:")
            for d in self.drifts:
                lines.append(
                    f"  {d.key}: recorded {d.recorded!r}, now {d.now!r} (tolerance {d.tolerance:g}); "
                    f"cited by {', '.join(d.pages)}"
                )
            if self.provenance_changes:
                lines.append("  what changed since the lock was written:")
                lines += [f"    {c}" for c in self.provenance_changes]
        if self.unlocked:
            lines.append(f"{len(self.unlocked)} cited number(s) are not in {lock_path.name}:")
            lines += [f"  {k} (cited by {', '.join(sorted(self.cited[k]))})" for k in self.unlocked[:20]]
            if len(self.unlocked) > 20:
                lines.append(f"  ... and {len(self.unlocked) - 20} more")
        if self.uncited:
            lines.append(f"{len(self.uncited)} locked number(s) are cited by no page:")
            lines += [f"  {k}" for k in self.uncited[:20]]
        if self.failed_claims:
            lines.append(f"{len(self.failed_claims)} claim(s) no longer hold:")
            lines += [f"  {c.page}:{c.line}: {c.expr}{c.reads_text()}" for c in self.failed_claims]
        lines += fragile_text(self.fragile)
        if self.drifts or self.unlocked or self.uncited:
            lines.append("If the new values are right, run `make accept` and commit the lock with the reason.")
        return "\n".join(lines)


def fragile_text(fragile: list[Fragile]) -> list[str]:
    if not fragile:
        return []
    lines = [f"{len(fragile)} published number(s) rest on a pick too near a tie for every machine to agree "
             f"(margin below the floor, study.yml picks.margin_floor):"]
    lines += [f"  {f.key}: margin {f.margin:.2g} < {f.floor:g}; cited by {', '.join(f.pages)}" for f in fragile[:30]]
    if len(fragile) > 30:
        lines.append(f"  ... and {len(fragile) - 30} more")
    lines.append("  Give the pick a tie rule that rounding cannot flip (model/picks.py), or, for a figure that is "
                 "rounding noise, cite it with an explicit tolerance (~TOL).")
    return lines


@dataclass
class Accepted:
    """What `accept` did: the lock's diff, one line per change, and the claims that do
    not hold (the lock cannot fix those: `make accept` exits non-zero on them)."""
    diff: list[str]
    failed_claims: list[Claim]
    fragile: list[Fragile] = field(default_factory=list)

    @property
    def text(self) -> str:
        lines = list(self.diff)
        lines += fragile_text(self.fragile)
        if self.failed_claims:
            lines.append(f"{len(self.failed_claims)} claim(s) do not hold (the lock cannot fix these; "
                         "fix the prose or the cause):")
            lines += [f"  {c.page}:{c.line}: {c.expr}{c.reads_text()}" for c in self.failed_claims]
        return "\n".join(lines) if lines else "no change"
