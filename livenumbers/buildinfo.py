"""What a build was made from, for a page to print (a suggested citation, say):

    {{ build_info("commit") }}        the git commit, short: "d706d0e" ("d706d0e-dirty" if
                                      tracked files had uncommitted changes)
    {{ build_info("date") }}          that commit's date, "2026-12-03" (on a page in another
                                      language, as it writes a date: "3 décembre 2026")
    {{ build_info("year") }}          its year
    {{ build_info("lock_sha256") }}   the sha256 of the numbers lock, the file as published
    {{ build_info("updated") }}       the date of the lock's last history entry (livenumbers/history.py):
                                      the numbers "as of" (a page in another language writes it
                                      as that language does)

These change with every commit: they are not numbers, never cited, locked or gated, and
never part of a cached page. A page's rendered text carries a placeholder for each, and
`BuildInfo.fill` puts the values in on every build, after the cache. Without git or a
git checkout (a tarball, say) the commit, date and year read "unknown"; a lock with no
history, its "updated" too. Every page of a write-up whose lock has a history ends with the
version a citation names: the lock's digest and "updated" (livenumbers/updates.py).
"""
from __future__ import annotations

import functools
import hashlib
import re
import subprocess
from pathlib import Path

from .formats import NumberError, did_you_mean, long_date

FIELDS = ("commit", "date", "year", "lock_sha256", "updated")
UNKNOWN = "unknown"
_MARK = "\ue004"
_PLACEHOLDER = re.compile(f"{_MARK}([a-z0-9_]+)(?:@([a-z_A-Z]+))?{_MARK}")


def placeholder(field: str, lang: str | None = None) -> str:
    """What `build_info(field)` prints until the build fills it in (`lang`: the page's
    language where it is not the site's default; a date is written in it)."""
    if field not in FIELDS:
        raise NumberError(f"unknown build_info field {field!r}" + did_you_mean(field, list(FIELDS))
                          + f" (fields: {', '.join(FIELDS)})")
    return f"{_MARK}{field}{'@' + lang if lang else ''}{_MARK}"


def _in_language(field: str, value: str, lang: str | None) -> str:
    return long_date(value, lang) if field in ("date", "updated") and lang and value != UNKNOWN else value


def git(folder: Path, *args: str) -> str | None:
    """git's output in `folder`, or None where there is no git or no checkout."""
    try:
        proc = subprocess.run(["git", "--no-optional-locks", "-C", str(folder), *args],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


class BuildInfo:
    """The values of one build, read when a page first needs them (git runs once per build)."""

    def __init__(self, folder: Path, lock: Path, updated: str | None = None):
        self.folder, self.lock, self.updated = Path(folder), Path(lock), updated   # updated: the last entry's date

    @functools.cached_property
    def values(self) -> dict[str, str]:
        head = git(self.folder, "log", "-1", "--format=%h %cs")
        commit, date = head.split() if head else (UNKNOWN, UNKNOWN)
        if head and git(self.folder, "status", "--porcelain", "--untracked-files=no"):
            commit += "-dirty"
        digest = hashlib.sha256(self.lock.read_bytes()).hexdigest() if self.lock.is_file() else "none (no numbers lock)"
        return {"commit": commit, "date": date, "year": date[:4] if head else UNKNOWN, "lock_sha256": digest,
                "updated": self.updated or UNKNOWN}

    def in_language(self, lang: str | None) -> dict[str, str]:
        """Every field, as a page in `lang` prints it (None: the site's default language)."""
        return {f: _in_language(f, v, lang) for f, v in self.values.items()}

    def fill(self, text: str) -> str:
        """`text` with every placeholder replaced by its value."""
        if _MARK not in text:
            return text
        return _PLACEHOLDER.sub(lambda m: _in_language(m.group(1), self.values[m.group(1)], m.group(2)), text)
