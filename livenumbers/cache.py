"""The build's disk cache: what was computed, keyed by everything it depends on.

One key recipe, one on-disk format, one reader, one memo (the shape of mkdocs-material's
social plugin):

- `key(*parts)`: a sha256 over the parts (strings, numbers, dicts: anything JSON can
  write). Every entry's key is built with it from all its inputs: the results' from
  their provenance, a page's from the results' key, the site code and its source.
- An entry is a folder `<cache_dir>/<kind>/<key>/` of files at the paths they will have
  in the site (or any relative path), with `manifest.json` listing each file's size and
  sha256. It is written complete in a temporary folder beside it and renamed into
  place, so a reader sees a whole entry or none, and two builds writing the same entry
  at once each rename a complete one (the second rename loses, harmlessly).
- `read` returns an entry's folder if its manifest matches what is on disk (sizes
  always; digests for JSON payloads, which are parsed anyway); anything else is logged
  and recomputed. A folder whose files' sizes and modification times have not changed
  since their digests last matched is not hashed again (the instrument's data is hundreds
  of MB, read on every build). `load_json`/`get_json` are the common case, one JSON file, memoized
  in process: under `mkdocs serve` the hooks live across rebuilds, and a prose edit
  reuses everything without reading the disk.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("mkdocs.plugins.live_numbers.cache")

MANIFEST = "manifest.json"
PAYLOAD = "payload.json"
_MEMO: dict[tuple[str, str], Any] = {}
_VERIFIED: dict[Path, tuple] = {}   # entry folder -> its files' (size, mtime, inode) when their digests matched


def code_digest(folder: Path, leave_out: tuple[str, ...] = ()) -> str:
    """Digest of the Python sources in `folder` and its subfolders, but for the subfolders
    or files named in `leave_out`: a code version."""
    h = hashlib.sha256()
    sources = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*.py")}
    for name, path in sorted(sources.items()):
        if name.split("/", 1)[0] not in leave_out:
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def key(*parts: Any) -> str:
    """The one key recipe: sha256 of the parts, as canonical JSON."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def entry_dir(cache_dir: Path, kind: str, k: str) -> Path:
    return cache_dir / kind / k[:32]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(cache_dir: Path, kind: str, k: str, files: dict[str, str | bytes]) -> Path:
    """Store `files` (relative path -> content) as the entry (kind, k); returns its folder."""
    final = entry_dir(cache_dir, kind, k)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=final.name + ".", suffix=".tmp"))
    try:
        manifest = {"key": k, "files": {}}
        for rel, content in files.items():
            data = content.encode("utf-8") if isinstance(content, str) else content
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            manifest["files"][rel] = [len(data), _digest(data)]
        (tmp / MANIFEST).write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
        if final.exists():
            if read(cache_dir, kind, k) is not None:  # another build wrote it whole first: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
                return final
            shutil.rmtree(final, ignore_errors=True)  # an unusable entry being replaced
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / MANIFEST).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another build wrote the same entry first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read(cache_dir: Path, kind: str, k: str) -> Path | None:
    """The entry's folder, or None if absent, partial, corrupt or for another key."""
    folder = entry_dir(cache_dir, kind, k)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest["key"] != k:
            raise ValueError("written for another key")
        stats = []
        for rel, (size, _) in manifest["files"].items():
            st = (folder / rel).stat()
            if st.st_size != size:
                raise ValueError(f"{rel} has the wrong size")
            stats.append((st.st_size, st.st_mtime_ns, st.st_ino))
        if _VERIFIED.get(folder) != tuple(stats):
            for rel, (_, digest) in manifest["files"].items():
                if rel.endswith(".json") and _digest((folder / rel).read_bytes()) != digest:
                    raise ValueError(f"{rel} does not match its digest")
            # Trusted by its stats only once its files are older than the clock's step: a
            # same-size edit within a few ms of a write could keep the same mtime.
            if not stats or time.time() - max(m for _, m, _ in stats) / 1e9 > 2.0:
                _VERIFIED[folder] = tuple(stats)
        return folder
    except FileNotFoundError:
        if folder.exists():
            log.info("cache entry %s is incomplete; recomputing", folder)
        return None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        log.info("cache entry %s is unusable (%s); recomputing", folder, exc)
        return None


def load_json(cache_dir: Path, kind: str, k: str) -> Any | None:
    """The JSON payload of entry (kind, k), from the memo or the disk; None if absent."""
    if (kind, k) in _MEMO:
        return _MEMO[(kind, k)]
    folder = read(cache_dir, kind, k)
    if folder is None:
        return None
    try:
        payload = json.loads((folder / PAYLOAD).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.info("cache entry %s is unusable (%s); recomputing", folder, exc)
        return None
    _MEMO[(kind, k)] = payload
    return payload


def store_json(cache_dir: Path, kind: str, k: str, payload: Any, extra: dict[str, str | bytes] | None = None) -> Any:
    """Write a JSON payload (plus `extra` files) as entry (kind, k); returns the payload
    as read back from its JSON, so a fresh payload equals a cached one exactly."""
    # Insertion order is kept (the results list their models in study.yml's order), and it
    # is deterministic: the same computation writes the same text.
    text = json.dumps(payload, separators=(",", ":"), default=_plain)
    write(cache_dir, kind, k, {PAYLOAD: text, **(extra or {})})
    _MEMO[(kind, k)] = json.loads(text)
    return _MEMO[(kind, k)]


def _plain(value: Any) -> Any:
    """What json cannot write as is: a NumPy scalar or array as the number or list it holds;
    anything else is the source's error, named by where it sits in the payload."""
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} {value!r:.60} as JSON")


def not_json(payload: Any, path: str = "") -> str | None:
    """Where `payload` holds what JSON cannot carry as it is, and what: "models.l6.rows[3]
    (NaN: ...)". JSON has no NaN or infinity (Python writes them, and a reader's JSON.parse
    refuses the file), its keys are text (an integer key would come back as a string, a tuple
    key fails), and it writes no other types (NumPy scalars and arrays are converted). None
    if there is nothing."""
    where = path or "(the payload itself)"
    if isinstance(payload, dict):
        for k, v in payload.items():
            at = f"{path}.{k}" if path else str(k)
            if not isinstance(k, str):
                return f"{at} (a key of type {type(k).__name__}, {k!r}: JSON's keys are text; write it as one)"
            found = not_json(v, at)
            if found:
                return found
        return None
    if isinstance(payload, (list, tuple)):
        for i, v in enumerate(payload):
            found = not_json(v, f"{path}[{i}]")
            if found:
                return found
        return None
    if payload is None or isinstance(payload, (str, int, bool)):
        return None
    if isinstance(payload, float):
        return None if math.isfinite(payload) else \
            f"{where} ({payload!r}: JSON has no NaN or infinity; write None, or leave the entry out)"
    try:
        converted = _plain(payload)
    except TypeError:
        return f"{where} (a {type(payload).__name__}: JSON cannot write it; make it a number, text, list or dict)"
    return not_json(converted, path)


def get_json(cache_dir: Path, kind: str, k: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
    """(payload, hit): the cached payload, or compute it, store it and return it."""
    payload = load_json(cache_dir, kind, k)
    if payload is not None:
        return payload, True
    return store_json(cache_dir, kind, k, compute()), False
