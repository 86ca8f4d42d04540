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
from pathlib import Path
from typing import Any, Callable

from .files import write_atomic

log = logging.getLogger("mkdocs.plugins.instrument.cache")


def _digest(payload_text: str) -> str:
    return hashlib.sha256(payload_text.encode()).hexdigest()


def entry_path(cache_dir: Path, kind: str, key: str) -> Path:
    return cache_dir / f"{kind}-{key[:32]}.json"


def _entry_text(key: str, payload_text: str) -> str:
    # Byte for byte what json.dump({"key", "payload", "sha256"}, sort_keys=True) writes,
    # built from the payload's text so a big payload is serialized once, not three times.
    return f'{{"key": {json.dumps(key)}, "payload": {payload_text}, "sha256": "{_digest(payload_text)}"}}'


_TAIL = len(', "sha256": "') + 64 + len('"}')


def _read_fast(text: str, key: str) -> Any | None:
    """The payload of an entry laid out as `_entry_text` lays it, checked on its raw text
    (no re-serialization of a big payload just to check it); None if laid out otherwise."""
    head = f'{{"key": {json.dumps(key)}, "payload": '
    if not (text.startswith(head) and text.endswith('"}') and text[-_TAIL:].startswith(', "sha256": "')):
        return None
    payload_text, digest = text[len(head):-_TAIL], text[-_TAIL + len(', "sha256": "'):-2]
    if _digest(payload_text) != digest:
        raise ValueError("key or digest mismatch")
    return json.loads(payload_text)


def read(cache_dir: Path, kind: str, key: str) -> Any | None:
    """The cached payload, or None if absent, partial, corrupt or for another key."""
    path = entry_path(cache_dir, kind, key)
    try:
        text = path.read_text(encoding="utf-8")
        payload = _read_fast(text, key)
        if payload is not None:
            return payload
        entry = json.loads(text)
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
    return _write_text(cache_dir, kind, key, json.dumps(payload, sort_keys=True))


def _write_text(cache_dir: Path, kind: str, key: str, payload_text: str) -> Path:
    path = entry_path(cache_dir, kind, key)
    write_atomic(path, _entry_text(key, payload_text))
    return path


def get(cache_dir: Path, kind: str, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
    """(payload, hit): the cached payload, or compute it, store it and return it."""
    payload = read(cache_dir, kind, key)
    if payload is not None:
        return payload, True
    # Round-trip through JSON so a fresh payload equals a cached one exactly; the same
    # text is what the entry stores (one serialization of a big payload, not three).
    payload_text = json.dumps(compute(), sort_keys=True)
    _write_text(cache_dir, kind, key, payload_text)
    return json.loads(payload_text), False
