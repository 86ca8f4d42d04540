"""Files the study publishes beside its pages, all derived from the results (the engine adds
the Vega bundle, livenumbers/published.py):

- `downloads/results.json`: the results, for readers to check our numbers;
- `downloads/numbers.lock.json`: the numbers lock, where the "recorded" values come from;
- `assets/instrument/index.json` and `assets/instrument/<model>/<sentence>.json`: the
  instrument page's data (model/views.py), loaded by its script on demand. The
  per-sentence files are computed with the results (`view_files`), a cache entry of
  their own beside them;
- `assets/runtime/<model>/...`: the weights and tokenizer the browser runtime fetches
  for a typed sentence (runtime_export.py), for the models study.yml names, exported
  once per weights fingerprint into the cache.
"""
from __future__ import annotations

import json
import unicodedata
from importlib import metadata
from pathlib import Path

from livenumbers import cache, timing
from livenumbers.source import listed

from .. import views
from . import runtime_export

INSTRUMENT = "assets/instrument"
RUNTIME = "assets/runtime"


def view_files(model_views: dict[str, list[str]]) -> dict[str, str]:
    """model key -> per-sentence files (views.sentence_views) -> the files published with the results."""
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
              "value_zeroing_every": (m.get("ground_truth") or {}).get("value_zeroing_every"),
              "warning": warning(m)}
        for key, m in results["models"].items()
    }
    index = views.index_record(results["default_model"], results["stop_rule"]["threshold"], results["tie_tolerance"],
                               sentences, models)
    return json.dumps(index, separators=(",", ":"), ensure_ascii=False)


# The readings on alpha's head the warning can read, as the instrument's rows carry them.
WARNING_LENSES = {"output_norm_on_alpha": "output_norm", "value_norm_on_alpha": "value_norm"}


def warning(m: dict) -> dict:
    """What the instrument's warning reads on a model: the lens of the reading found fit (‖α f(x)‖
    first), or none, and the verdict, under Part 10's mean-ablation truth, the test registered to
    overturn Part 9's (model/mean_ablation/), or Part 9's registered one where Part 10 is not
    measured."""
    cal = m.get("calibration") or {}
    ma = (cal.get("mean_ablation") or {}).get("mean")
    verdict, model, truth = ((ma["verdict"], ma["model_verdict"], "mean") if ma
                             else (cal.get("verdict") or {}, cal.get("model_verdict") or {}, cal.get("primary")))
    fit = [r for r in WARNING_LENSES if verdict.get(r) == "fit"]
    return {"verdict": model.get("verdict"), "lens": WARNING_LENSES[fit[0]] if fit else None, "truth": truth}


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


def study_files(results: dict, cache_dir: Path) -> dict[str, Path | str]:
    """The instrument's index and the browser runtime's files (the per-sentence files are
    the results' own, published by the engine with them). Timed as part of the engine's
    "publishing files", which calls it."""
    files: dict[str, Path | str] = {f"{INSTRUMENT}/index.json": instrument_index(results)}
    for key in results["runtime"]["models"]:
        files.update(listed(runtime_dir(results, key, cache_dir), RUNTIME))
    return files
