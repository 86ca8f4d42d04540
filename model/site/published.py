"""Files the site publishes beside its pages, all derived from the results:

- `assets/javascripts/vega-bundle.js`: Vega, Vega-Lite and vega-embed, shipped with the
  site (no CDN), built once per vl-convert version and kept in the cache;
- `downloads/results.json`: the results, for readers to check our numbers;
- `downloads/numbers.lock.json`: the numbers lock, where the "recorded" values come from;
- `assets/instrument/index.json` and `assets/instrument/<model>/<sentence>.json`: the
  instrument page's data (model/views.py), loaded by its script on demand. The
  per-sentence files are the `views` cache entry the measurement writes;
- `assets/runtime/<model>/...`: the weights and tokenizer the browser runtime fetches
  for a typed sentence (runtime_export.py), for the models study.yml names, exported
  once per weights fingerprint into the cache.

`site_files` lists them all as site path -> a file to copy (a `Path`) or content.
"""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import unicodedata
from importlib import metadata
from pathlib import Path

from .. import timing, views
from . import background, cache, runtime_export

log = logging.getLogger("mkdocs.plugins.instrument.published")

VEGA_BUNDLE = "assets/javascripts/vega-bundle.js"
INSTRUMENT = "assets/instrument"
RUNTIME = "assets/runtime"


def view_files(model_views: dict[str, list[str]]) -> dict[str, str]:
    """model key -> per-sentence files (views.sentence_views) -> the `views` entry's files."""
    return {f"{INSTRUMENT}/{key}/{i}.json": text for key, texts in model_views.items() for i, text in enumerate(texts)}


def instrument_index(results: dict) -> str:
    """What the instrument's script reads first: the sentences, the models, and the
    definitions it must not repeat (lens labels, thresholds)."""
    halves = {i: half for half, idx in next(iter(results["models"].values()))["halves"].items() for i in idx}
    sentences = [{"text": t, "register": reg, "half": halves.get(i)}
                 for i, (t, reg) in enumerate(zip(results["sentences"], results["registers"]))]
    models = {
        key: {"name": m["model"],
              "title": f"{m['checkpoint'].split('/')[-1]} ({m['n_layers']} layers × {m['n_heads']} heads)",
              "n_layers": m["n_layers"], "n_heads": m["n_heads"], "positional": m["positional_heads"],
              "runtime": f"{RUNTIME}/{key}/manifest.json" if key in results["runtime"]["models"] else None,
              # part 8: value zeroing is measured on every n-th corpus sentence
              "value_zeroing_every": (m.get("ground_truth") or {}).get("value_zeroing_every")}
        for key, m in results["models"].items()
    }
    index = views.index_record(results["default_model"], results["stop_rule"]["threshold"], results["tie_tolerance"],
                               sentences, models)
    return json.dumps(index, separators=(",", ":"), ensure_ascii=False)


def _vega_key() -> str:
    return cache.key("vega", metadata.version("vl-convert-python"))


@timing.stage("Vega bundle")
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


@timing.stage("runtime export")
def runtime_dir(results: dict, key: str, cache_dir: Path) -> Path:
    """The cache entry of one model's runtime files, exported if missing. Keyed by the
    weights' fingerprint, the exporter's code, and the tables the tokenizer file is read
    off (`tokenizers`, and Python's Unicode database)."""
    from .. import weights

    m = results["provenance"]["models"][key]
    entry = cache.key("runtime", m["sha256"], Path(runtime_export.__file__).read_text(encoding="utf-8"),
                      metadata.version("tokenizers"), unicodedata.unidata_version)
    folder = cache.read(cache_dir, "runtime", entry)
    if folder is None:
        files = runtime_export.export(weights.load(m["name"]), f"{RUNTIME}/{key}")
        folder = cache.write(cache_dir, "runtime", entry, files)
    return folder


def _listed(folder: Path, under: str) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted((folder / under).rglob("*")) if p.is_file()}


@timing.stage("publishing files")
def site_files(results: dict, results_entry: Path, views_entry: Path, cache_dir: Path,
               lock: Path | None = None) -> dict[str, Path | str]:
    """Site path -> the file to copy there (a Path into the cache) or its content."""
    background.wait("vega")
    files: dict[str, Path | str] = {VEGA_BUNDLE: bundle_vega(cache_dir) / VEGA_BUNDLE}
    files["downloads/results.json"] = results_entry / cache.PAYLOAD
    if lock is not None and lock.is_file():
        files["downloads/numbers.lock.json"] = lock
    files[f"{INSTRUMENT}/index.json"] = instrument_index(results)
    files.update(_listed(views_entry, INSTRUMENT))
    for key in results["runtime"]["models"]:
        files.update(_listed(runtime_dir(results, key, cache_dir), RUNTIME))
    return files
