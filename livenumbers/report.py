"""What the drift gate found: every number that moved, every claim that failed, every pick
too near a tie, with the pages that cite them (`Report`), and what `accept` wrote
(`Accepted`). Their messages name key, values, tolerance and pages, and say what to do."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import lock, registration
from .history import REASON_LIMIT
from .rendered import Citation, Claim
from .printed import Unsteady


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
class Reprinted:
    """A citation whose printed text is not the one the lock recorded (None: not recorded)."""
    key: str
    slot: str          # "en pct:1": the edition's language and the format
    recorded: str | None
    now: str
    pages: list[str]


@dataclass
class Report:
    results: dict
    results_key: str
    charts: dict[str, dict]
    inputs_key: str = ""                                      # results, lock and bibliography: what every page reads
    rendered: dict[str, str] = field(default_factory=dict)                  # page -> text
    sources: dict[str, str] = field(default_factory=dict)                   # page -> its file's text, as the gate read it
    notebook_cells: dict[str, dict[int, str]] = field(default_factory=dict)  # page -> cell -> text
    citations: dict[str, list[Citation]] = field(default_factory=dict)      # page -> its citations, in order
    all_citations: list[tuple[str, Citation]] = field(default_factory=list)  # (language, citation), every page's
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
    reprinted: list[Reprinted] = field(default_factory=list)
    unsteady: list[Unsteady] = field(default_factory=list)   # printed text within rounding of another (printed.py)
    undecided: dict[str, list[str]] = field(default_factory=dict)   # a cited discrete key with no margin -> pages
    provenance_changes: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)   # what the results depend on (Source.inputs): the lock records it
    margin_floor: float = 0.0   # the margin a published decision must clear (Source.margin_floor)
    registrations: registration.Findings = field(default_factory=registration.Findings)   # registered settings

    @property
    def ok(self) -> bool:
        return not (self.drifts or self.unlocked or self.uncited or self.failed_claims or self.fragile
                    or self.reprinted or self.unsteady or self.undecided or self.registrations.broken
                    or self.registrations.pending)

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
        reprinted = [r for r in self.reprinted if page in r.pages and r.recorded is not None]
        if not (drifts or failed or reprinted):
            return ""
        items = [f"<li><code>{html.escape(d.key)}</code>: recorded {html.escape(repr(d.recorded))}, "
                 f"now {html.escape(repr(d.now))}</li>" for d in drifts]
        items += [f"<li><code>{html.escape(r.key)}</code> ({html.escape(r.slot)}): printed "
                  f"{html.escape(repr(r.recorded))}, now {html.escape(repr(r.now))}</li>" for r in reprinted]
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
        changed = [r for r in self.reprinted if r.recorded is not None]
        if changed:
            lines.append(f"{len(changed)} published number(s) print another text than the lock recorded:")
            lines += [f"  {r.key} ({r.slot}): printed {r.recorded!r}, now {r.now!r}; cited by {', '.join(r.pages)}"
                      for r in changed[:30]]
            if len(changed) > 30:
                lines.append(f"  ... and {len(changed) - 30} more")
        new = [r for r in self.reprinted if r.recorded is None]
        if new:
            lines.append(f"{len(new)} printed form(s) of locked numbers are not in {lock_path.name} yet:")
            lines += [f"  {r.key} ({r.slot}): {r.now!r}; cited by {', '.join(r.pages)}" for r in new[:20]]
            if len(new) > 20:
                lines.append(f"  ... and {len(new) - 20} more")
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
        lines += fragile_text(self.fragile) + unsteady_text(self.unsteady) + undecided_text(self.undecided)
        if self.registrations.broken:
            lines.append("registered settings changed as no accept can record; fix the settings file "
                         "(livenumbers/registration.py):")
            lines += [f"  {line}" for line in self.registrations.broken]
        if self.registrations.pending:
            lines.append(f"registered settings changed since {lock_path.name} recorded them:")
            lines += [f"  {line}" for line in self.registrations.pending]
        if self.drifts or self.unlocked or self.uncited or self.reprinted or self.registrations.pending:
            lines.append(f"If the new values are right, accept them ({ACCEPT_COMMAND}) and commit the lock with the reason.")
        return "\n".join(lines)


# How a reader of a message is told to rewrite the lock (a write-up's own command may wrap it).
ACCEPT_COMMAND = "python -m livenumbers accept"


def unsteady_text(unsteady: list[Unsteady]) -> list[str]:
    if not unsteady:
        return []
    lines = [f"{len(unsteady)} citation(s) print a text that another machine's rounding could change "
             "(livenumbers/printed.py):"]
    lines += [str(u) for u in unsteady[:30]]
    if len(unsteady) > 30:
        lines.append(f"  ... and {len(unsteady) - 30} more")
    lines.append("  Print each with fewer digits, or, for a figure that is rounding noise, as the bound it stays "
                 "under (below:B).")
    return lines


def undecided_text(undecided: dict[str, list[str]]) -> list[str]:
    if not undecided:
        return []
    lines = [f"{len(undecided)} cited discrete number(s) have no recorded margin (no margin for them: how near "
             "the float decisions behind them came to turning):"]
    lines += [f"  no margin for {k}; cited by {', '.join(pages)}" for k, pages in sorted(undecided.items())[:30]]
    if len(undecided) > 30:
        lines.append(f"  ... and {len(undecided) - 30} more")
    lines.append("  Compute it with a primitive that returns its margin, or declare it exact by construction "
                 "(a count of inputs) where the source builds its keys.")
    return lines


def fragile_text(fragile: list[Fragile]) -> list[str]:
    if not fragile:
        return []
    lines = [f"{len(fragile)} published number(s) rest on a pick too near a tie for every machine to agree "
             f"(margin below the floor):"]
    lines += [f"  {f.key}: margin {f.margin:.2g} < {f.floor:g}; cited by {', '.join(f.pages)}" for f in fragile[:30]]
    if len(fragile) > 30:
        lines.append(f"  ... and {len(fragile) - 30} more")
    lines.append("  Give the pick a tie rule that rounding cannot flip, or cite what it decides so that either "
                 "outcome prints the same.")
    return lines


@dataclass
class Accepted:
    """What `accept` did: the lock's diff, one line per change; or, when something the lock
    cannot fix stands in the way (a claim that does not hold, a pick too near a tie, a printed
    text rounding could change, a discrete number with no margin, a registered settings block
    edited with no amendment or not committed, a change readers see with no reason for it),
    nothing written and why."""
    diff: list[str]
    failed_claims: list[Claim]
    fragile: list[Fragile] = field(default_factory=list)
    unsteady: list[Unsteady] = field(default_factory=list)
    undecided: dict[str, list[str]] = field(default_factory=dict)
    registrations: list[str] = field(default_factory=list)   # a registered block edited silently, or not committed
    reason: list[str] = field(default_factory=list)   # a change readers see, with no reason (or a bad one) for it
    notes: list[str] = field(default_factory=list)   # said, refusing nothing (digits beyond an interval)

    @property
    def refused(self) -> bool:
        return bool(self.failed_claims or self.fragile or self.unsteady or self.undecided or self.registrations
                    or self.reason)

    @property
    def text(self) -> str:
        notes = [f"note: {n}" for n in self.notes]
        if not self.refused:
            return "\n".join((self.diff or ["no change"]) + notes)
        lines = ["the lock was not written (it is unchanged): fix these first, then accept again"]
        lines += fragile_text(self.fragile) + unsteady_text(self.unsteady) + undecided_text(self.undecided)
        if self.registrations:
            lines.append("registered settings accept cannot record (livenumbers/registration.py):")
            lines += [f"  {line}" for line in self.registrations]
        if self.reason:
            lines.append("readers will see this change, so the lock's history records it with a reason "
                         "(livenumbers/history.py):")
            lines += [f"  {line}" for line in self.reason]
            lines.append('  Accept again with --reason "why, for readers" (one sentence, at most '
                         f'{REASON_LIMIT} characters); or, for a lock of this machine only, --local.')
        if self.failed_claims:
            lines.append(f"{len(self.failed_claims)} claim(s) do not hold (the lock cannot fix these; "
                         "fix the prose or the cause):")
            lines += [f"  {c.page}:{c.line}: {c.expr}{c.reads_text()}" for c in self.failed_claims]
        if self.diff:
            lines.append("what accept would have written:")
            lines += [f"  {line}" for line in self.diff]
        return "\n".join(lines + notes)


def published_text(report: Report) -> dict[str, str]:
    """What a reader reads of each page the gate rendered: its text with every chart's data
    left out (a drawing's coordinates are not text; its caption and text alternative stay),
    and every number measured here (it varies by run and machine).
    Notebooks: their markdown cells, in order."""
    import re

    # A number measured here (livenumbers/here.py) is this run's, not the text's: left out.
    strip = lambda text: re.sub(r'<span class="measured-here" data-measured-here="[^"]*">.*?</span>', "",
                                re.sub(r' data-spec="[^"]*"', "", text))
    pages = {page: strip(text) for page, text in report.rendered.items()}
    pages |= {page: "\n\n".join(strip(cells[i]) for i in sorted(cells)) for page, cells in report.notebook_cells.items()}
    return pages


def text_differences(a: dict[str, str], b: dict[str, str], limit: int = 20) -> list[str]:
    """Where two builds' published texts differ: "page: 'line here' != 'line there'", page
    by page (a page only one has, too); at most `limit` lines."""
    out = []
    for page in sorted(set(a) | set(b)):
        if page not in a or page not in b:
            out.append(f"{page}: only in {'the first' if page in a else 'the second'} build")
            continue
        for x, y in zip(a[page].split("\n"), b[page].split("\n")):
            if x != y:
                out.append(f"{page}: {x.strip()[:160]!r} != {y.strip()[:160]!r}")
        if a[page].count("\n") != b[page].count("\n"):
            out.append(f"{page}: {a[page].count(chr(10)) + 1} lines != {b[page].count(chr(10)) + 1}")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])
