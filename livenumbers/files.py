"""Writing files: so that a reader sees the old version or the new one, never half; and
publishing a file the cache holds without copying its bytes."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path` (atomic on
    POSIX). On any failure the temporary file is removed and `path` is untouched. The file
    keeps `path`'s mode, or a new file's (0o666 less the umask): not the temporary file's
    0o600, which would make a committed lock unreadable to everyone else."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def link_or_copy(src: str | Path, dst: str | Path) -> None:
    """`dst` as a hard link to `src` (no bytes copied: the site's instrument data and runtime
    weights are ~330 MB a build, all of it already in the cache), or a copy where the file
    system cannot link. `dst` is replaced, never written through: were it already a link
    to `src`, writing into it would change the cache's file."""
    src, dst = Path(src), Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:   # another file system, or links not allowed
        shutil.copyfile(src, dst)
