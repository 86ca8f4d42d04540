"""Files the site publishes beside its pages, all derived from the results:

- `assets/javascripts/vega-bundle.js`: Vega, Vega-Lite and vega-embed, shipped with the
  site (no CDN), built once per vl-convert version and kept in the cache folder;
- `downloads/results.json`: the full results, for readers to check our numbers;
- `assets/instrument/<model>/<sentence>.json` and `assets/instrument/index.json`: the
  instrument page's data (every head, every lens), loaded by its script on demand.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import json
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from .. import results as results_mod
from . import cache
from .files import write_atomic
from .notebook import executed_copy, executed_path

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
    index = {"default_model": results["default_model"], "sentences": results["sentences"], "models": {}}
    for key, m in results["models"].items():
        index["models"][key] = {"name": m["model"], "n_layers": m["n_layers"], "n_heads": m["n_heads"],
                                "threshold": results["stop_rule"]["threshold"]}
        for view in m["views"]:
            out[f"assets/instrument/{key}/{view['sentence']}.json"] = json.dumps(view, separators=(",", ":"))
    out["assets/instrument/index.json"] = json.dumps(index, separators=(",", ":"))
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
        code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
        disk_key = hashlib.sha256(f"{key}:{code}".encode()).hexdigest()
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
