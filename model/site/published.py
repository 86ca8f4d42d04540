"""Files the site publishes beside its pages, all derived from the results:

- `assets/javascripts/vega-bundle.js`: Vega, Vega-Lite and vega-embed, shipped with the
  site (no CDN), built once per vl-convert version and kept in the cache;
- `downloads/results.json`: the results, for readers to check our numbers;
- `assets/instrument/index.json` and `assets/instrument/<model>/<sentence>.json`: the
  instrument page's data, loaded by its script on demand. The per-sentence files are
  the `views` cache entry the measurement writes.

`site_files` lists them all as site path -> a file to copy (a `Path`) or content.
"""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ..instrument import LENS_LABELS, LENS_TITLES, LENSES, TINY_MASS
from . import background, cache

VEGA_BUNDLE = "assets/javascripts/vega-bundle.js"
INSTRUMENT = "assets/instrument"


def view_files(views: dict[str, list[dict]]) -> dict[str, str]:
    """model key -> per-sentence views (views.py) -> the files of the `views` entry."""
    return {
        f"{INSTRUMENT}/{key}/{view['sentence']}.json": json.dumps(view, separators=(",", ":"))
        for key, model_views in views.items() for view in model_views
    }


def instrument_index(results: dict) -> str:
    """What the instrument's script reads first: the sentences, the models, and the
    definitions it must not repeat (lens labels, thresholds)."""
    return json.dumps({
        "default_model": results["default_model"],
        "sentences": results["sentences"],
        "threshold": results["stop_rule"]["threshold"],
        "tiny_mass": TINY_MASS,
        "lenses": [{"key": k, "label": LENS_LABELS[k], "title": LENS_TITLES[k]} for k in LENSES],
        "models": {
            key: {"name": m["model"], "n_layers": m["n_layers"], "n_heads": m["n_heads"]}
            for key, m in results["models"].items()
        },
    }, separators=(",", ":"))


def _vega_key() -> str:
    return cache.key("vega", metadata.version("vl-convert-python"))


def bundle_vega(cache_dir: Path) -> Path:
    """The cache entry holding the Vega bundle, built in a child process if missing
    (vl-convert holds the GIL for ~1.5 s; `start_vega` runs this beside the build)."""
    key = _vega_key()
    folder = cache.read(cache_dir, "vega", key)
    if folder is None:
        code = "import sys, vl_convert; sys.stdout.write(vl_convert.javascript_bundle())"
        out = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, check=True)
        folder = cache.write(cache_dir, "vega", key, {VEGA_BUNDLE: out.stdout})
    return folder


def start_vega(cache_dir: Path) -> None:
    """Cold builds: bundle Vega while the gate measures."""
    if cache.read(cache_dir, "vega", _vega_key()) is None:
        background.start("vega", bundle_vega, cache_dir)


def site_files(results: dict, results_entry: Path, views: Path, cache_dir: Path) -> dict[str, Path | str]:
    """Site path -> the file to copy there (a Path into the cache) or its content."""
    background.wait("vega")
    files: dict[str, Path | str] = {VEGA_BUNDLE: bundle_vega(cache_dir) / VEGA_BUNDLE}
    files["downloads/results.json"] = results_entry / cache.PAYLOAD
    files[f"{INSTRUMENT}/index.json"] = instrument_index(results)
    for path in sorted((views / INSTRUMENT).rglob("*.json")):
        files[path.relative_to(views).as_posix()] = path
    return files
