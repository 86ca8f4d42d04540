"""Files the site publishes beside its pages, all derived from the results:

- `assets/javascripts/vega-bundle.js`: Vega, Vega-Lite and vega-embed, shipped with the
  site (no CDN), built once per vl-convert version and kept in the cache folder;
- `downloads/results.json`: the full results, for readers to check our numbers;
- `assets/instrument/<model>/<sentence>.json` and `assets/instrument/index.json`: the
  instrument page's data (token-level, every head; model/site/instrument_data.py),
  loaded by its script on demand;
- `assets/runtime/<model>/...`: the browser runtime's weights and tokenizer
  (model/site/runtime_export.py), exported once per weights digest into the cache
  folder and published from there.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from .. import results as results_mod
from . import cache, instrument_data, runtime_export
from .files import write_atomic
from .notebook import executed_copy, executed_path

log = logging.getLogger("mkdocs.plugins.instrument.published")
_MEMO: dict = {}
_BUNDLING: dict[Path, subprocess.Popen] = {}


def _bundle_path(cache_dir: Path) -> Path:
    return cache_dir / f"vega-bundle-{metadata.version('vl-convert-python')}.js"


def start_vega_bundle(cache_dir: Path) -> None:
    """Cold builds: bundle in a child process while the gate measures. vl-convert holds
    the GIL for ~1.5 s, so it cannot share this process without stalling it. The child
    only prints; this process writes the file, so a failed build leaves nothing behind."""
    path = _bundle_path(cache_dir)
    if not path.is_file() and path not in _BUNDLING:
        code = "import sys, vl_convert; sys.stdout.write(vl_convert.javascript_bundle())"
        _BUNDLING[path] = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def cancel_vega_bundle() -> None:
    for child in _BUNDLING.values():
        child.kill()
        child.wait()
    _BUNDLING.clear()


def vega_bundle(cache_dir: Path) -> str:
    """Vega, Vega-Lite and vega-embed in one script, built once per vl-convert version."""
    path = _bundle_path(cache_dir)
    child = _BUNDLING.pop(path, None)
    if not path.is_file():
        out = child.communicate()[0] if child is not None else b""
        if child is None or child.returncode != 0 or not out:
            import vl_convert  # no child, or it failed: build here, so a real error surfaces

            out = vl_convert.javascript_bundle().encode()
        write_atomic(path, out.decode("utf-8"))
    return path.read_text(encoding="utf-8")


def results_download(results: dict) -> str:
    """Everything but the per-head views (those are the instrument's data files)."""
    return json.dumps(results_mod.without_views(results), indent=1, sort_keys=True)


def instrument_files(results: dict) -> dict[str, str]:
    out = {}
    models = {}
    for key, m in results["models"].items():
        models[key] = {
            "name": m["model"], "title": f"{m['model']} ({m['n_layers']} layers × {m['n_heads']} heads)",
            "n_layers": m["n_layers"], "n_heads": m["n_heads"],
            "positional": {lens: s["positional_heads"] for lens, s in m["summary"].items()},
            "runtime": f"assets/runtime/{key}/manifest.json" if key in _RUNTIME_OK else None,
        }
        for view in m["views"]:
            out[f"assets/instrument/{key}/{view['sentence']}.json"] = json.dumps(view["data"], separators=(",", ":"))
    sentences = [{"text": t, "register": None, "half": None} for t in results["sentences"]]
    index = instrument_data.index_record(results["default_model"], results["stop_rule"]["threshold"], sentences, models)
    out["assets/instrument/index.json"] = json.dumps(index, separators=(",", ":"), ensure_ascii=False)
    return out


# -- the browser runtime's files ------------------------------------------------------------------

_RUNTIME_OK: set[str] = set()     # model keys whose runtime files are published
_RUNTIME_MEMO: dict[str, dict[str, Path]] = {}


def _runtime_key(sha256: str) -> str:
    """Everything the exported files depend on: the weights, the exporter, and the
    libraries whose tables the tokenizer file is read off."""
    code = hashlib.sha256(Path(runtime_export.__file__).read_bytes()).hexdigest()
    parts = [sha256, code, metadata.version("tokenizers"), unicodedata.unidata_version]
    return hashlib.sha256(":".join(parts).encode()).hexdigest()[:24]


def _write_folder(folder: Path, files: dict[str, bytes]) -> None:
    """Write `files` into a temporary folder beside `folder`, then rename it into place:
    a reader sees the whole folder or none. If another build renamed its own copy in
    first, that copy (the same bytes) is kept and ours removed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name, suffix=".tmp"))
    try:
        for path, data in files.items():
            (tmp / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp / path).write_bytes(data)
        try:
            os.replace(tmp, folder)
        except OSError:
            if not folder.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def runtime_files(results: dict, cache_dir: Path) -> dict[str, Path]:
    """Site path -> file in the cache folder, for every model the runtime supports. Each
    model's files are exported once per weights digest (`runtime_export.export`)."""
    from .. import weights

    out: dict[str, Path] = {}
    for key, m in results["provenance"]["models"].items():
        folder = cache_dir / f"runtime-{_runtime_key(m['sha256'])}"
        if key not in _RUNTIME_MEMO:
            if not folder.is_dir():
                ckpt = weights.load(m["name"])
                try:
                    files = runtime_export.export(ckpt, f"assets/runtime/{key}")
                except runtime_export.RuntimeExportError as exc:
                    log.info("no browser runtime for %s: %s", key, exc)
                    _RUNTIME_MEMO[key] = {}
                    continue
                _write_folder(folder, files)
            _RUNTIME_MEMO[key] = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
        out.update(_RUNTIME_MEMO[key])
        if _RUNTIME_MEMO[key]:
            _RUNTIME_OK.add(key)
    return out


def _serialized(results: dict) -> dict[str, str]:
    files = {"downloads/results.json": results_download(results)}
    files.update(instrument_files(results))
    return files


def generated_files(report, cache_dir: Path) -> dict[str, str]:
    """Site path -> content, memoized per results (a serve rebuild re-serializes nothing)
    and cached on disk by results and this file's code (nor does a warm build: reading
    the serialized files back costs ~10 ms, serializing the views again ~0.4 s)."""
    key = report.results_key
    if key not in _MEMO:
        _MEMO.clear()
        code = hashlib.sha256(Path(__file__).read_bytes() + Path(instrument_data.__file__).read_bytes()).hexdigest()
        # index.json names the models with a runtime: call runtime_files() first.
        disk_key = hashlib.sha256(f"{key}:{code}:{sorted(_RUNTIME_OK)}".encode()).hexdigest()
        _MEMO[key], _ = cache.get(cache_dir, "published", disk_key, lambda: _serialized(report.full_results()))
    return {"assets/javascripts/vega-bundle.js": vega_bundle(cache_dir), **_MEMO[key]}


_EXECUTING: dict[str, Future] = {}


def start_notebook(page: str, cells: dict[int, str], report, settings) -> Path:
    """`executed_notebook` without the wait: the folder the executed copy will be in,
    at once. A copy not cached yet is executed in a thread (the kernel is a process of
    its own) while MkDocs reads the other pages; `wait_notebook(page)`, called just
    before the page itself is read, waits for it and raises its error, if any."""
    args = (settings.docs_dir / page, page, cells, report.results_key, settings.cache_dir)
    path = executed_path(*args)
    if not path.is_file() and page not in _EXECUTING:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="notebook")
        _EXECUTING[page] = pool.submit(executed_copy, *args, settings.docs_dir.parent)
        pool.shutdown(wait=False)  # the thread ends with its notebook (never a daemon: the kernel is shut down)
    return Path(str(path)[: -len(page)])


def wait_notebook(page: str | None = None) -> None:
    """Wait for `page`'s execution (every started one if None); re-raise its error."""
    for name in [page] if page is not None else list(_EXECUTING):
        future = _EXECUTING.pop(name, None)
        if future is not None:
            future.result()


def executed_notebook(page: str, cells: dict[int, str], report, settings) -> Path:
    """The folder that holds the executed copy of `page` (at the same relative path)."""
    path = executed_copy(settings.docs_dir / page, page, cells, report.results_key,
                         settings.cache_dir, settings.docs_dir.parent)
    return Path(str(path)[: -len(page)])
