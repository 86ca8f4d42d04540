"""Registration: settings fixed in advance, which the build lets change only with a stated reason.

A write-up registers blocks of a settings file (a pre-registration) in the engine's
options (mkdocs.yml, beside `source:`), and lists every later change to a block in that
file, beside it, under `amendments:` (append-only; a date and a reason each):

    registered:                            # mkdocs.yml
      file: study.yml                      # in docs/
      blocks: [calibration]                # top-level keys of that file

    amendments:                            # study.yml
      calibration:
        - date: 2026-12-01                 # required: when it was decided
          reason: the layer truth is the one measured on every sentence   # required: why
          changes: "primary: word -> layer"                               # optional: what

`accept` records each block in the lock (`registrations`): the sha256 of its parsed content
(comments and layout do not count), the commit that first registered it and the commit that
gave it its present content, with their dates (from git; "unknown" without git or a checkout;
accept refuses a block not committed as it is, since its registration is that commit), and its
amendments. Every gate
run then fails on a registered block changed with no new amendment saying why, a recorded
amendment removed or edited, or a registered block gone; a new amendment (or block) fails
it as not accepted yet, until accept records it.

A source says which keys are read under a block (`Source.registered_keys`). A page citing
such a key of a block with amendments must state them, `{{ registration("calibration") }}`:
"Registered in commit `abc1234` (2026-11-02). Amended on 2026-12-01: the reason. Settings in this
form since commit `def5678` (2026-12-01)." The first registration leads: it is what the amendments amend.
"""
from __future__ import annotations

import datetime
import fnmatch
import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from .buildinfo import UNKNOWN, git
from .errors import UserError
from .formats import NumberError, did_you_mean, md_text
from .i18n import CLOSE, OPEN

FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's: the settings are read on every serve rebuild
AMENDMENTS = "amendments"   # the settings file's key listing each registered block's amendments
OPTION_FIELDS = ("file", "blocks")
AMENDMENT_FIELDS = ("date", "reason", "changes")


class RegistrationError(UserError, ValueError):
    """Registration the engine cannot check as written; the message says what to fix."""


@dataclass(frozen=True)
class Declared:
    """What a write-up registers: blocks (top-level keys) of one settings file in docs/."""
    file: str
    blocks: tuple[str, ...]


def declared(option) -> Declared | None:
    """The engine's `registered:` option, checked; None when nothing is registered."""
    if not option:
        return None
    if (not isinstance(option, dict) or set(option) != set(OPTION_FIELDS) or not isinstance(option["file"], str)
            or not isinstance(option["blocks"], list) or not option["blocks"]
            or not all(isinstance(b, str) for b in option["blocks"])):
        raise RegistrationError(f"live numbers: `registered: {option!r}`: write it as `registered: {{file: "
                                "study.yml, blocks: [name, ...]}` (a settings file in docs/ and its top-level keys)")
    if AMENDMENTS in option["blocks"]:
        raise RegistrationError(f"live numbers: `registered:` lists {AMENDMENTS!r}, where the amendments are kept; "
                                "register the blocks they amend")
    return Declared(option["file"], tuple(option["blocks"]))


@dataclass(frozen=True)
class Amendment:
    date: str          # ISO, "2026-12-01"
    reason: str
    changes: str = ""  # what changed, in a few words

    def as_json(self) -> dict:
        return {"date": self.date, "reason": self.reason} | ({"changes": self.changes} if self.changes else {})


@dataclass(frozen=True)
class Registration:
    """A registered block as the lock records it."""
    file: str          # relative to docs/
    sha256: str        # of its content (`digest`)
    commit: str        # the commit that gave it this content ("unknown" without git)
    date: str          # that commit's date
    amendments: tuple[Amendment, ...] = ()
    first_commit: str = ""   # the commit that first registered the block ("" when it is `commit`)
    first_date: str = ""

    def as_json(self) -> dict:
        return {"file": self.file, "sha256": self.sha256, "commit": self.commit, "date": self.date,
                "amendments": [a.as_json() for a in self.amendments]} | (
            {"first_commit": self.first_commit, "first_date": self.first_date} if self.first_commit else {})

    def since(self) -> str:
        """"commit abc1234, 2026-12-01": where the registration is."""
        return f"commit {short(self.commit)}, {self.date}"

    def first(self) -> tuple[str, str]:
        """(commit, date) of the block's first registration."""
        return (self.first_commit, self.first_date) if self.first_commit else (self.commit, self.date)


def short(commit: str) -> str:
    return commit if commit == UNKNOWN else commit[:7]


def from_lock(raw) -> dict[str, Registration]:
    """The lock's `registrations` object (block -> entry); a ValueError names a malformed one."""
    if not isinstance(raw, dict):
        raise ValueError("'registrations' is not an object")
    out = {}
    for block, entry in raw.items():
        try:
            out[block] = Registration(entry["file"], entry["sha256"], entry["commit"], entry["date"],
                                      tuple(Amendment(**a) for a in entry["amendments"]),
                                      entry.get("first_commit", ""), entry.get("first_date", ""))
        except (TypeError, KeyError) as exc:
            raise ValueError(f"registration {block!r} is malformed ({exc!r}); restore it from git") from exc
    return out


def digest(block) -> str:
    """The sha256 of a block's parsed content: its comments and layout do not count."""
    return hashlib.sha256(json.dumps(block, sort_keys=True, default=str).encode()).hexdigest()


def read_amendment(item) -> Amendment:
    """One item of an `amendments:` list, checked (ValueError: what is wrong with it)."""
    if not isinstance(item, dict):
        raise ValueError(f"{item!r} is not a mapping {{date: YYYY-MM-DD, reason: why}}")
    for name in item:
        if name not in AMENDMENT_FIELDS:
            raise ValueError(f"unknown field {name!r}" + did_you_mean(str(name), list(AMENDMENT_FIELDS))
                             + f" (fields: {', '.join(AMENDMENT_FIELDS)})")
    date, reason, changes = item.get("date"), item.get("reason"), item.get("changes", "")
    try:
        date = datetime.date.fromisoformat(date) if isinstance(date, str) else date
    except ValueError:
        pass
    if not isinstance(date, datetime.date):
        raise ValueError(f"no date (date: YYYY-MM-DD, the day it was decided; got {date!r})")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("no reason (reason: why the registered settings changed)")
    if not isinstance(changes, str):
        raise ValueError(f"changes: {changes!r} is not text")
    return Amendment(f"{date:%Y-%m-%d}", reason.strip(), changes.strip())


@dataclass
class Current:
    """The registered blocks as the settings file holds them now."""
    declared: Declared
    label: str                                    # "docs/study.yml", for messages
    digests: dict[str, str]                       # block present -> its `digest`
    amendments: dict[str, tuple[Amendment, ...]]  # block -> the amendments the file lists
    problems: dict[str, list[str]]                # block -> its amendments not written as they must be


def read(docs_dir: Path, registered: Declared | None) -> Current | None:
    """The settings file's registered blocks and amendments (None if nothing is registered)."""
    if registered is None:
        return None
    label = f"{docs_dir.name}/{registered.file}"
    try:
        data = yaml.load((docs_dir / registered.file).read_text(encoding="utf-8"), Loader=FAST_LOADER) or {}
    except FileNotFoundError as exc:
        raise RegistrationError(f"{label}: not found (mkdocs.yml's `registered:` names it)") from exc
    except yaml.YAMLError as exc:
        raise RegistrationError(f"{label}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise RegistrationError(f"{label}: expected a mapping of settings, whose blocks mkdocs.yml registers")
    digests = {b: digest(data[b]) for b in registered.blocks if b in data}
    listed = data.get(AMENDMENTS) or {}
    if not isinstance(listed, dict):
        raise RegistrationError(f"{label}: {AMENDMENTS} is not a mapping (block: [{{date: YYYY-MM-DD, reason: why}}])")
    amendments, problems = {}, {}
    for block, items in listed.items():
        where = f"{label}: {AMENDMENTS}.{block}"
        if block not in registered.blocks:
            problems[block] = [f"{where}: {block!r} is not registered" + did_you_mean(str(block), list(registered.blocks))]
        elif not isinstance(items, list):
            problems[block] = [f"{where} is not a list of amendments ([{{date: YYYY-MM-DD, reason: why}}, ...])"]
        else:
            amendments[block] = []
            for i, item in enumerate(items, 1):
                try:
                    amendments[block].append(read_amendment(item))
                except ValueError as exc:
                    problems.setdefault(block, []).append(f"{where}, amendment {i}: {exc}")
    return Current(registered, label, digests, {b: tuple(a) for b, a in amendments.items()}, problems)


@dataclass
class Findings:
    """What the gate found of the registered blocks."""
    broken: list[str] = field(default_factory=list)    # fails the gate, and accept: the file must be fixed
    pending: list[str] = field(default_factory=list)   # fails the gate until accept records it


def check(now: Current | None, locked: dict[str, Registration]) -> Findings:
    """The registered blocks now against the lock's record of them."""
    found = Findings(broken=[p for problems in now.problems.values() for p in problems] if now else [])
    blocks = now.declared.blocks if now else ()
    for block in blocks:
        if block in now.problems:
            continue   # its amendments cannot be read: that alone is reported
        entry, listed = locked.get(block), now.amendments.get(block, ())
        if block not in now.digests:
            found.broken.append(f"{now.label}: the registered block {block!r} is gone"
                                + (f" (registered in {entry.since()})" if entry else "")
                                + ": restore it; a registered block is amended, never removed")
        elif entry is None:
            found.pending.append(f"{now.label}: the registered block {block!r} is not in the lock yet")
        elif listed[:len(entry.amendments)] != entry.amendments:
            gone = next(a for i, a in enumerate(entry.amendments) if listed[i:i + 1] != (a,))
            found.broken.append(f"{now.label}: amendments.{block} no longer lists the amendment of {gone.date} "
                                f"({gone.reason!r}) as the lock recorded it: amendments are append-only; restore it "
                                "and add a new one")
        elif now.digests[block] != entry.sha256 and len(listed) == len(entry.amendments):
            found.broken.append(f"{now.label}: the registered block {block!r} changed since it was registered "
                                f"({entry.since()}) and no amendment says why: add one under {AMENDMENTS}.{block} "
                                "with its date and reason")
        else:
            found.pending += [f"{now.label}: the amendment of {block!r} of {a.date} ({a.reason!r}) is not in the "
                              "lock yet" for a in listed[len(entry.amendments):]]
            if entry.file != now.declared.file:
                found.pending.append(f"{now.label}: the registered block {block!r} moved here from {entry.file}")
    found.pending += [f"the lock records the registered block {b!r}, which mkdocs.yml no longer registers"
                      for b in sorted(set(locked) - set(blocks))]
    return found


def introduced(path: Path, block: str, sha256: str) -> tuple[str, str] | None:
    """(commit, date) of the commit that gave `block` of `path` the content `sha256` (the
    first of the run of commits holding it up to the last that touched the file);
    ("unknown", "unknown") without git or a checkout; None if no commit holds it as it is."""
    log = git(path.parent, "log", "--format=%H %cs", "--", path.name)
    if log is None:
        return UNKNOWN, UNKNOWN
    found = None
    for line in log.splitlines():
        commit, date = line.split()
        try:
            data = yaml.safe_load(git(path.parent, "show", f"{commit}:./{path.name}") or "")
        except yaml.YAMLError:
            break
        if not isinstance(data, dict) or block not in data or digest(data[block]) != sha256:
            break
        found = commit, date
    return found


def first_registered(path: Path, block: str) -> tuple[str, str]:
    """(commit, date) of the oldest commit whose `path` holds `block`: its first registration;
    ("unknown", "unknown") without git or a checkout, or if no commit holds it."""
    log = git(path.parent, "log", "--reverse", "--format=%H %cs", "--", path.name)
    for line in (log or "").splitlines():
        commit, date = line.split()
        try:
            data = yaml.safe_load(git(path.parent, "show", f"{commit}:./{path.name}") or "")
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and block in data:
            return commit, date
    return UNKNOWN, UNKNOWN


def record(now: Current | None, locked: dict[str, Registration], docs_dir: Path) -> tuple[dict[str, Registration],
                                                                                       list[str], list[str]]:
    """What accept writes: (the lock's registrations, a diff line per change, why it cannot,
    if it cannot). A block whose content is as recorded keeps its commit."""
    broken = check(now, locked).broken
    if broken:
        return locked, [], broken
    entries, diff, refusals = {}, [], []
    for block in now.declared.blocks if now else ():
        entry, listed, sha256 = locked.get(block), now.amendments.get(block, ()), now.digests[block]
        if entry is not None and entry.sha256 == sha256:
            since = entry.commit, entry.date
        elif (since := introduced(docs_dir / now.declared.file, block, sha256)) is None:
            refusals.append(f"{now.label}: the registered block {block!r} is not committed as it is now: commit it, "
                            "then accept (its registration is the commit that gives it this content)")
            continue
        first = entry.first() if entry is not None and entry.first_commit else (
            first_registered(docs_dir / now.declared.file, block) if listed else ("", ""))
        entries[block] = Registration(now.declared.file, sha256, *since, listed,
                                      *(("", "") if first[0] == since[0] else first))
        if entries[block] != entry:
            new = listed[len(entry.amendments):] if entry else ()
            diff.append(f"{'~' if entry else '+'} registration {block!r}: {entries[block].since()}"
                        + "".join(f"; amended {a.date} ({a.reason!r})" for a in new))
    diff += [f"- registration {b!r} (no longer registered)" for b in sorted(set(locked) - set(entries))
             if not now or b not in now.declared.blocks]
    return entries, diff, refusals


def call(block: str) -> str:
    """A page's call of `registration(block)`, as the renderer records it (`Rendered.calls`)."""
    return f"registration({block!r})"


def statement(registrations: dict[str, Registration | None], block: str, words: Callable[[str], str],
              date: Callable[[str], str] = str) -> str:
    """What `registration(block)` prints: the registration's commit and date, and each
    amendment's date, reason and what it changed; `words` puts each sentence in the page's
    language (an amendment's reason and changes too, as the catalogue gives them), `date` a
    date (ISO, "2026-12-03")."""
    if block not in registrations:
        raise NumberError(f"unknown registered block {block!r}" + did_you_mean(block, list(registrations))
                          + f" (registered: {', '.join(registrations) or 'none'})")
    entry = registrations[block]
    if entry is None:
        return words("Registration not accepted yet.")
    if not entry.amendments:
        return words(f"Registered; in this form since commit {OPEN}`{short(entry.commit)}`{CLOSE} ({OPEN}{date(entry.date)}{CLOSE}).")
    first, first_date = entry.first()
    sentences = [words(f"Registered in commit {OPEN}`{short(first)}`{CLOSE} ({OPEN}{date(first_date)}{CLOSE}).")]
    for a in entry.amendments:
        reason = words(a.reason)
        reason = md_text(reason) + ("" if reason.endswith((".", "!", "?")) else ".")
        sentences.append(words(f"Amended on {OPEN}{date(a.date)}{CLOSE}: {OPEN}{reason}{CLOSE}"))
        if a.changes:   # what changed, as the amendment lists it: settings' names in code, unless
            changes = words(a.changes)   # the page's language says it in words (its catalogue)
            raw = changes == a.changes and "`" not in changes
            sentences.append(words(f"What changed: {OPEN}{f'`{changes}`' if raw else md_text(changes)}{CLOSE}."))
    # Amendments may leave the settings as they were: this is the commit that last changed them.
    sentences.append(words(f"Settings in this form since commit {OPEN}`{short(entry.commit)}`{CLOSE} ({OPEN}{date(entry.date)}{CLOSE})."))
    return " ".join(sentences)


def unstated(rendered: list, reads: dict[str, str], now: Current | None) -> list[tuple[str, int, str]]:
    """(page, line, message) for each page that cites a key read under an amended block
    (`reads`: key pattern -> block, `Source.registered_keys`) and does not call
    `registration(block)`; `rendered` holds each page's `Rendered` (a notebook's, one per cell)."""
    blocks = now.declared.blocks if now else ()
    unknown = sorted(set(reads.values()) - set(blocks))
    if unknown:
        raise RegistrationError(f"the source reads keys under the registered block {unknown[0]!r}, which "
                                "mkdocs.yml's `registered:` does not list" + did_you_mean(unknown[0], list(blocks)))
    amended = {pattern: b for pattern, b in reads.items() if now.amendments.get(b)}
    if not amended:
        return []
    calls: dict[str, set[str]] = {}
    for out in rendered:
        calls.setdefault(out.page, set()).update(out.calls)
    found = []
    patterns = tuple(amended.items())
    for out in rendered:
        for c in out.citations:
            block = _amended_block(c.key, patterns)
            if block is not None and call(block) not in calls[out.page]:
                found.append((out.page, c.line, f"{out.page} cites {c.key}, read under the amended registration "
                              f"{block!r}, but does not state the amendment: call registration(\"{block}\") on the page"))
                calls[out.page].add(call(block))   # once per page and block
    return found


@functools.lru_cache(maxsize=1 << 16)
def _amended_block(key: str, patterns: tuple[tuple[str, str], ...]) -> str | None:
    """The amended block whose key pattern `key` matches first, or None. Kept across builds: a
    key is cited many times, and `mkdocs serve` asks again on every save (6,300 keys here)."""
    return next((block for pattern, block in patterns if fnmatch.fnmatchcase(key, pattern)), None)
