"""A write-up's CITATION.cff follows its numbers: `date-released` is the date of the lock's last
history entry (livenumbers/history.py), the "as of" of the numbers a reader cites.

Citation File Format (https://citation-file-format.github.io) is what GitHub, Zenodo and
reference managers read. The write-up's file sits beside its mkdocs.yml; when accept or
backfill writes a history entry, its `date-released` lines (the work's and its preferred
citation's) take that entry's date. Nothing else in it is touched, and a write-up without
one gets none.
"""
from __future__ import annotations

import re
from pathlib import Path

from .files import write_atomic

FILE = "CITATION.cff"
_RELEASED = re.compile(r'^([ \t]*date-released:[ \t]*)("?)(\d{4}-\d{2}-\d{2})\2[ \t]*$', re.M)


def follow(root: Path, date: str | None) -> str | None:
    """Set `root`/CITATION.cff's `date-released` to `date`; a line for accept's output, or
    None where there is no such file, no date, or it already says so."""
    path = Path(root) / FILE
    if date is None or not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    updated = _RELEASED.sub(lambda m: f'{m.group(1)}"{date}"', text)
    if updated == text:
        return None
    write_atomic(path, updated)
    return f"{FILE}: date-released {date} (the lock's last update)"
