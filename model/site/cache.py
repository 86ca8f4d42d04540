"""A disk cache for computed results, keyed by everything they depend on.

An entry is one JSON file `<kind>-<key>.json` holding the key, a sha256 of the payload
and the payload. It is written to a temporary file in the same folder and renamed into
place (atomic on POSIX), so a reader sees a whole entry or none; two builds writing the
same entry at once each rename a complete file. An entry that fails to parse, carries
another key, or whose digest does not match its payload is ignored and recomputed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("mkdocs.plugins.instrument.cache")


def _digest(payload_text: str) -> str:
    return hashlib.sha256(payload_text.encode()).hexdigest()


def entry_path(cache_dir: Path, kind: str, key: str) -> Path:
    return cache_dir / f"{kind}-{key[:32]}.json"


def read(cache_dir: Path, kind: str, key: str) -> Any | None:
    """The cached payload, or None if absent, partial, corrupt or for another key."""
    path = entry_path(cache_dir, kind, key)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        payload_text = json.dumps(entry["payload"], sort_keys=True)
        if entry["key"] != key or entry["sha256"] != _digest(payload_text):
            raise ValueError("key or digest mismatch")
        return entry["payload"]
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        log.info("cache entry %s is unusable (%s); recomputing", path, exc)
        return None


def write(cache_dir: Path, kind: str, key: str, payload: Any) -> Path:
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = entry_path(cache_dir, kind, key)
    payload_text = json.dumps(payload, sort_keys=True)
    entry = {"key": key, "sha256": _digest(payload_text), "payload": payload}
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def get(cache_dir: Path, kind: str, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
    """(payload, hit): the cached payload, or compute it, store it and return it."""
    payload = read(cache_dir, kind, key)
    if payload is not None:
        return payload, True
    payload = compute()
    # Round-trip through JSON so a fresh payload equals a cached one exactly.
    payload = json.loads(json.dumps(payload, sort_keys=True))
    write(cache_dir, kind, key, payload)
    return payload, False
