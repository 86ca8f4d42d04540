"""Accepting: the numbers lock rewritten from fresh results, and what changed, listed.

`accept` is the one writer of the lock (`python -m livenumbers accept`, or a write-up's own
command). It runs the gate (livenumbers/gate.py) without charts and refuses, writing nothing,
while anything a reader could not trust remains: a failing claim, a pick nearer a tie than
the floor, a printed text within rounding of another, a cited discrete number without a
margin, a registered settings block changed without an amendment, a change readers see
without a reason for it (livenumbers/history.py).
"""
from __future__ import annotations

import math
from dataclasses import replace

from . import citation, formats, history, lock, printed, registration
from .gate import Settings, fresh_entries, run, undecided
from .report import Accepted, Report


def steadiness(report: Report, fresh_numbers, floor: float) -> list:
    """The citations no format prints steadily (livenumbers/printed.py)."""
    margin_of = getattr(fresh_numbers, "margin", lambda key: None)
    found = {}
    for _, c in report.all_citations:
        if c.key not in found:
            u = printed.unsteady(c.key, fresh_numbers[c.key], c.requested, margin_of(c.key), floor, sorted(report.cited[c.key]))
            if u is not None:
                found[c.key] = u
    return list(found.values())


# A number that moved by less than this share of its tolerance keeps its locked value: that
# is rounding noise (another CPU: ~1e-7 relative). One that moved more is rewritten, so the
# lock stays what today's code computes and never drifts toward the edge of its tolerance,
# where the next machine's rounding would tip it over.
NOISE_SHARE = 0.1


def _keeps(old: lock.Locked, new: lock.Locked, noise_share: float) -> bool:
    """Does the lock keep `old` for a number whose fresh entry is `new`?"""
    if old.tolerance != new.tolerance or lock.moved(old, new.value):
        return False
    if isinstance(old.value, (str, bool)) or isinstance(new.value, (str, bool)):
        return True   # not moved: the same text, the same yes or no
    return abs(float(new.value) - float(old.value)) <= noise_share * old.tolerance


def accept(settings: Settings, exact: bool = False, reason: dict[str, str] | None = None, local: bool = False,
           date: str | None = None) -> Accepted:
    """Rewrite the lock from fresh results. A number that moved by less than NOISE_SHARE of
    its tolerance keeps its recorded value (a CPU's float noise is not a change); every
    other change is written, and listed. With `exact`, every value as computed here, noise
    included, margins too (the machine that writes the lock changed). Nothing is written
    while a claim fails, a pick is nearer a tie than the floor, a printed text is within
    rounding of another, a cited discrete number has no margin, or a registered settings
    block changed with no amendment or is not committed: the lock stays as it was, and what
    to fix is listed. A change readers see (a printed text, a number added or removed)
    needs a `reason` ({language: text}), recorded in the lock's history with the date
    (`date`, default today), unless `local` (a reader's own machine: nothing recorded)."""
    report = run(settings, with_charts=False)
    old_lock = lock.read(settings.lock)
    old = old_lock.numbers
    floor = report.margin_floor
    report.fresh = fresh_entries(report.all_citations, report.numbers, floor, steady=True)
    share = 0.0 if exact else NOISE_SHARE
    # A kept entry keeps its margin too (it is the writer's); a new one, or one without, takes today's.
    new = {k: replace(old[k] if (old[k].margin is not None and not exact) or v.margin is None
                      else replace(old[k], margin=v.margin), printed=v.printed, shown=v.shown)
           if k in old and _keeps(old[k], v, share) else v for k, v in report.fresh.items()}
    # A stated tolerance prints the value of record: the one written now.
    texts = fresh_entries(report.all_citations, report.numbers, floor, steady=True,
                          recorded={k: v.value for k, v in new.items()})
    new = {k: replace(v, printed=texts[k].printed) for k, v in new.items()}
    diff = []
    number = lambda e: (e.value, e.tolerance)   # what a reader sees; a margin is the lock's note on it
    for key in sorted(set(old) | set(new)):
        if key not in new:
            diff.append(f"- {key}: {old[key].value!r} (no longer cited)")
        elif key not in old:
            diff.append(f"+ {key}: {new[key].value!r} (tolerance {new[key].tolerance:g})")
        elif old[key].value != new[key].value:
            diff.append(f"~ {key}: {old[key].value!r} -> {new[key].value!r} (tolerance {new[key].tolerance:g})")
        elif old[key].tolerance != new[key].tolerance:
            diff.append(f"~ {key}: tolerance {old[key].tolerance:g} -> {new[key].tolerance:g}")
        for where in sorted(set(old[key].printed) | set(new[key].printed) if key in old and key in new else ()):
            before, after = old[key].printed.get(where), new[key].printed.get(where)
            if before != after and before is not None:
                diff.append(f"~ {key} ({where}): printed {before!r} -> {after!r}" if after is not None
                            else f"- {key} ({where}): printed {before!r} (no longer cited so)")
    both = sorted(set(old) & set(new))
    within = [k for k in both if number(old[k]) != number(new[k]) and not lock.moved(old[k], new[k].value)]
    noise = [k for k in both if number(old[k]) == number(new[k]) and old[k].value != report.fresh[k].value]
    noted = [k for k in both if old[k].margin != new[k].margin]
    texts = sum(len(set(new[k].printed) - set(old[k].printed)) for k in both)
    if within or noise:
        diff.append(f"{len(within)} number(s) moved within their tolerance by more than {share:g} of it "
                    f"and were rewritten (~ above); {len(noise)} moved by less (rounding noise) and kept their locked value")
    if noted:
        diff.append(f"{len(noted)} pick margin(s) recorded beside their numbers")
    if texts:
        diff.append(f"{texts} printed text(s) recorded beside numbers already locked")
    registrations, changes, unrecordable = registration.record(
        registration.read(settings.docs_dir, settings.registered), old_lock.registrations, settings.docs_dir)
    accepted = Accepted(diff + changes, report.failed_claims, report.fragile,
                        [u for u in steadiness(report, report.numbers, floor) if u.key not in {f.key for f in report.fragile}],
                        undecided(report, report.numbers), unrecordable)
    of_record = sorted((k, a, f) for k, v in new.items() for a, f in v.shown.items()
                       if k not in old or old[k].shown.get(a) != f)
    if of_record:
        accepted.diff.append(f"{len(of_record)} more citation(s) print their value of record, checked on every machine to "
                             "within their noise, since another machine's rounding could print them otherwise (the "
                             "lock's 'shown'): " + ", ".join(f"{k} {a} -> {f}" for k, a, f in of_record[:10])
                             + (" ..." if len(of_record) > 10 else ""))
    accepted.notes = overprinted(report)
    recorded = history.record(old_lock.history, old, new, report.cited, reason, settings.languages.default,
                              local=local, date=date)
    accepted.reason = list(recorded.problems)
    accepted.diff += [recorded.note] if recorded.note and (accepted.diff or reason) else []   # else: "no change"
    if not accepted.refused:
        lock.write(settings.lock, new, report.provenance, registrations, recorded.history)
        cff = citation.follow(settings.docs_dir.parent, recorded.entry.date if recorded.entry else None)
        accepted.diff += [cff] if cff else []
    return accepted


# A printed unit below this share of an interval's half-width is a digit the interval denies.
OVERPRINT = 0.01


def overprinted(report: Report) -> list[str]:
    """Citations printed to digits their own interval (`key_lo`, `key_hi`) says nothing of:
    `fixed:9` on a value known to +-0.07. A note, not a refusal: the author decides."""
    notes = []
    for key, fmt in sorted({(c.key, c.fmt) for _, c in report.all_citations}):
        lo, hi, value = report.numbers.get(f"{key}_lo"), report.numbers.get(f"{key}_hi"), report.numbers[key]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi, value)):
            continue
        kind, _, stated = formats.parse_format(fmt)
        unit = 2 * formats.tolerance(fmt, value)
        half = (float(hi) - float(lo)) / 2
        if stated is None and kind in ("pct", "pp", "fixed", "ratio", "sci") and 0 < unit < OVERPRINT * half:
            notes.append(f"{key} is printed to {unit:g} ({fmt}) but its interval is +-{half:.2g}: "
                         f"{math.floor(math.log10(half / unit))} of its digits say nothing (print fewer)")
    return notes
