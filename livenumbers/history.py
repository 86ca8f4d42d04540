"""The lock's history: every accepted change of what the pages print, dated, with its reason.

The numbers lock (livenumbers/lock.py) holds what each cited number prints now; its
`history` holds how it came to print that, for readers. `accept` appends an entry when a
published number prints another text in some edition (a text it printed there is printed
no more: its value moved, or it is printed with other digits), when a number is no longer
cited, or when numbers are cited for the first time. A change within noise that prints the
same text is no erratum and adds nothing; neither does the first lock of a write-up
(nothing was published before it), nor a reader's local accept (`local`: their machine's
lock, nothing public).

Each entry carries a reason written for readers, at most REASON_LIMIT characters, in the
site's default language and, optionally, in its others ({"en": ..., "fr": ...}); accept
refuses to write an entry without one. An entry records, per key, the texts its citations
printed before and print after ("en pct:1" -> "26.5%"), and the pages citing it then; the
keys no longer cited, with their pages where an earlier entry knows them; and how many
were cited for the first time. Entries are numbered from 1, oldest first: a page links a
changed number to its entry as `#update-N` (livenumbers/updates.py draws them).

Entries backfilled from git (livenumbers/backfill.py) also name their `commit`; those
written from a lock that recorded no printed texts are `reformatted`: their texts are the
values printed with a later lock's formats.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import UserError

REASON_LIMIT = 200   # characters: a sentence a reader reads beside the numbers it explains


class HistoryError(UserError, ValueError):
    """A lock's history that cannot be trusted; the message names the lock and the entry."""


def language_of(slot: str) -> str:
    """The edition of one of a key's printed texts: "fr pct:1" -> "fr"."""
    return slot.split(" ", 1)[0]


@dataclass(frozen=True)
class Change:
    """One key whose printed text changed: what each of its citations printed before and
    prints after, by slot ("en pct:1" -> "26.5%"), and the pages citing it then."""
    before: dict[str, str]
    after: dict[str, str]
    pages: tuple[str, ...] = ()

    def said(self, language: str) -> list[str]:
        """What it printed in `language`'s edition, each text once, in slot order."""
        return _texts(self.before, language)

    def says(self, language: str) -> list[str]:
        return _texts(self.after, language)

    def moved_in(self, language: str) -> bool:
        """Does `language`'s edition print it otherwise: a text it printed, printed no more?"""
        return bool(set(self.said(language)) - set(self.says(language)))

    def as_json(self) -> dict:
        return {"before": dict(sorted(self.before.items())), "after": dict(sorted(self.after.items())),
                "pages": list(self.pages)}


def _texts(printed: dict[str, str], language: str) -> list[str]:
    return list(dict.fromkeys(text for slot, text in sorted(printed.items()) if language_of(slot) == language))


@dataclass(frozen=True)
class Entry:
    """One accepted change of the pages' numbers."""
    date: str                                                        # ISO, the day accept wrote it
    reason: dict[str, str]                                           # language -> the reason, for readers
    changed: dict[str, Change] = field(default_factory=dict)         # keys that print another text
    removed: dict[str, tuple[str, ...]] = field(default_factory=dict)   # keys no longer cited -> their pages then
    added: int = 0                                                   # numbers cited for the first time
    commit: str = ""          # backfilled: the commit that changed the lock (empty: written by accept)
    reformatted: bool = False   # backfilled from a lock without printed texts: its values printed with later formats

    def reason_in(self, language: str, default: str) -> tuple[str, str]:
        """(the reason a page in `language` shows, the language it is written in): its own,
        else the default language's."""
        return (self.reason[language], language) if language in self.reason else (self.reason[default], default)

    def moved(self, language: str) -> dict[str, Change]:
        """The keys `language`'s edition prints otherwise since this entry."""
        return {k: c for k, c in self.changed.items() if c.moved_in(language)}

    def as_json(self) -> dict:
        out: dict[str, Any] = {"date": self.date, "reason": dict(sorted(self.reason.items()))}
        if self.changed:
            out["changed"] = {k: c.as_json() for k, c in sorted(self.changed.items())}
        if self.removed:
            out["removed"] = {k: list(p) for k, p in sorted(self.removed.items())}
        if self.added:
            out["added"] = self.added
        if self.commit:
            out["commit"] = self.commit
        if self.reformatted:
            out["reformatted"] = True
        return out


def from_json(raw: Any, where: str) -> tuple[Entry, ...]:
    """The lock's `history` list, checked; `where` names the lock in errors."""
    if not isinstance(raw, list):
        raise HistoryError(f"{where}: 'history' must be a list of entries")
    entries = []
    for n, item in enumerate(raw, 1):
        at = f"{where}: history entry {n}"
        if not isinstance(item, dict):
            raise HistoryError(f"{at}: expected an object")
        date, reason = item.get("date"), item.get("reason")
        try:
            datetime.date.fromisoformat(date if isinstance(date, str) else "")
        except ValueError:
            raise HistoryError(f"{at}: bad date {date!r} (expected YYYY-MM-DD)") from None
        if not isinstance(reason, dict) or not reason or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                                  for k, v in reason.items()):
            raise HistoryError(f"{at} ({date}): 'reason' must map a language to its text ({{\"en\": \"...\"}})")
        changed = {}
        for key, c in (item.get("changed") or {}).items():
            if not isinstance(c, dict) or not all(_texts_ok(c.get(side, {})) for side in ("before", "after")) \
                    or not _pages_ok(c.get("pages", [])):
                raise HistoryError(f"{at} ({date}): key {key!r} needs 'before' and 'after' texts (\"en pct:1\": text) "
                                   f"and a list of 'pages'")
            changed[key] = Change(dict(c.get("before", {})), dict(c.get("after", {})), tuple(c.get("pages", [])))
        removed = item.get("removed") or {}
        if not isinstance(removed, dict) or not all(_pages_ok(p) for p in removed.values()):
            raise HistoryError(f"{at} ({date}): 'removed' must map each key to the pages that cited it")
        added = item.get("added", 0)
        if not isinstance(added, int) or isinstance(added, bool) or added < 0:
            raise HistoryError(f"{at} ({date}): 'added' must be a count, not {added!r}")
        entries.append(Entry(date, dict(reason), changed, {k: tuple(p) for k, p in removed.items()}, added,
                             str(item.get("commit", "")), bool(item.get("reformatted", False))))
    return tuple(entries)


def _texts_ok(texts: Any) -> bool:
    return isinstance(texts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items())


def _pages_ok(pages: Any) -> bool:
    return isinstance(pages, list) and all(isinstance(p, str) for p in pages)


def as_json(entries: tuple[Entry, ...]) -> list[dict]:
    return [e.as_json() for e in entries]


# -- what accept records ------------------------------------------------------------------------

def differences(old: Mapping[str, Any], new: Mapping[str, Any], cited: Mapping[str, set[str]],
                earlier: tuple[Entry, ...] = ()) -> tuple[dict[str, Change], dict[str, tuple[str, ...]], int]:
    """(the keys printed otherwise, the keys no longer cited with their pages then, how many
    keys are new) between two locks' numbers (each a `Locked`, or anything with `printed`).
    `cited`: key -> the pages citing it now; `earlier`: the history, for a removed key's pages
    (the lock does not record pages: the last entry that named the key's pages does)."""
    changed = {}
    for key in sorted(set(old) & set(new)):
        before, after = old[key].printed, new[key].printed
        if before == after:
            continue
        languages = {language_of(s) for s in before}
        if any(set(_texts(before, lang)) - set(_texts(after, lang)) for lang in languages):
            changed[key] = Change(dict(before), dict(after), tuple(sorted(cited.get(key, ()))))
    gone = sorted(set(old) - set(new))
    known = _pages_known(earlier, set(gone))
    return changed, {k: known.get(k, ()) for k in gone}, len(set(new) - set(old))


def _pages_known(entries: tuple[Entry, ...], keys: set[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        for key in keys & set(entry.changed):
            if entry.changed[key].pages:
                found[key] = entry.changed[key].pages
    return found


def reason_problems(reason: Mapping[str, str] | None, default: str) -> list[str]:
    """What is wrong with a reason for readers: missing in the default language, empty,
    longer than REASON_LIMIT characters, or on more than one line."""
    if not reason or not (reason.get(default) or "").strip():
        return [f"no reason in the site's language ({default})"]
    problems = []
    for lang, text in sorted(reason.items()):
        if not text.strip():
            problems.append(f"the {lang} reason is empty")
        elif len(text.strip()) > REASON_LIMIT:
            problems.append(f"the {lang} reason has {len(text.strip())} characters, more than {REASON_LIMIT}: "
                            "say why in one sentence a reader reads beside the numbers")
        elif "\n" in text.strip():
            problems.append(f"the {lang} reason spans lines: make it one sentence")
    return problems


@dataclass(frozen=True)
class Recorded:
    """What accept does with the history: the history to write, the entry added (None:
    none), and why it cannot write (a reason missing or too long): empty if it can."""
    history: tuple[Entry, ...]
    entry: Entry | None = None
    problems: tuple[str, ...] = ()
    note: str = ""   # a line for accept's output


def record(history: tuple[Entry, ...], old: Mapping[str, Any], new: Mapping[str, Any],
           cited: Mapping[str, set[str]], reason: Mapping[str, str] | None, default: str,
           local: bool = False, date: str | None = None) -> Recorded:
    """The history after an accept that rewrites `old` numbers as `new` (module docstring)."""
    if local:
        return Recorded(history, note="--local: this machine's lock; nothing is recorded in its history")
    if not old:
        return Recorded(history, note="the first lock: nothing was published before it, so no entry")
    changed, removed, added = differences(old, new, cited, history)
    if not (changed or removed or added):
        note = "no published text changed: no entry in the lock's history"
        return Recorded(history, note=note + (" (the reason given is not recorded)" if reason else ""))
    what = (f"{len(changed)} number(s) print another text, {len(removed)} no longer cited, "
            f"{added} cited for the first time")
    problems = reason_problems(reason, default)
    if problems:
        return Recorded(history, problems=(what,) + tuple(problems))
    entry = Entry(date or datetime.date.today().isoformat(), {k: v.strip() for k, v in reason.items()},
                  changed, removed, added)
    return Recorded(history + (entry,), entry, note=f"history entry {len(history) + 1} ({entry.date}): {what}")


def latest(history: tuple[Entry, ...]) -> dict[str, dict[str, int]]:
    """language -> key -> the number of the last entry that changed what it prints there."""
    out: dict[str, dict[str, int]] = {}
    for n, entry in enumerate(history, 1):
        for key, change in entry.changed.items():
            for lang in {language_of(s) for s in change.before}:
                if change.moved_in(lang):
                    out.setdefault(lang, {})[key] = n
    return out
