"""Files the site publishes beside its pages, all derived from the results:

- `assets/javascripts/vega-bundle.js`: Vega, Vega-Lite and vega-embed, shipped with the
  site (no CDN), built once per vl-convert version and kept in the cache folder;
- `downloads/results.json`: the full results, for readers to check our numbers;
- `assets/instrument/<model>/<sentence>.json` and `assets/instrument/index.json`: the
  instrument page's data (every head, every lens), loaded by its script on demand.
"""
from __future__ import annotations

import json
import os
import tempfile
from importlib import metadata
from pathlib import Path

from .notebook import executed_copy

_MEMO: dict = {}


def vega_bundle(cache_dir: Path) -> str:
    path = cache_dir / f"vega-bundle-{metadata.version('vl-convert-python')}.js"
    if not path.is_file():
        import vl_convert

        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(vl_convert.javascript_bundle())
        os.replace(tmp, path)
    return path.read_text(encoding="utf-8")


def results_download(results: dict) -> str:
    """Everything but the per-head views (those are the instrument's data files)."""
    slim = {**results, "models": {k: {f: v for f, v in m.items() if f != "views"} for k, m in results["models"].items()}}
    return json.dumps(slim, indent=1, sort_keys=True)


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


def generated_files(report, cache_dir: Path) -> dict[str, str]:
    """Site path -> content, memoized per results (a serve rebuild re-serializes nothing)."""
    key = report.results_key
    if key not in _MEMO:
        _MEMO.clear()
        files = {"downloads/results.json": results_download(report.results)}
        files.update(instrument_files(report.results))
        _MEMO[key] = files
    return {"assets/javascripts/vega-bundle.js": vega_bundle(cache_dir), **_MEMO[key]}


def executed_notebook(page: str, cells: dict[int, str], report, settings) -> Path:
    """The folder that holds the executed copy of `page` (at the same relative path)."""
    path = executed_copy(settings.docs_dir / page, page, cells, report.results_key,
                         settings.cache_dir, settings.docs_dir.parent)
    return Path(str(path)[: -len(page)])
