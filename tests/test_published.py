"""Files the site publishes beside its pages: the results for download, the instrument's
index and per-sentence data (model/site/published.py, through the study's source), the
Vega bundle (livenumbers/published.py)."""
from __future__ import annotations

import json

from livenumbers import background, cache
from livenumbers import published as engine
from model.instrument import LENS_LABELS, LENSES, TINY_MASS
from model.site import published
from model.site.source import StudySource

POSITIONAL = {lens: [[0, 1]] for lens in LENSES}
RESULTS = {
    "default_model": "l6", "sentences": ["A cat sat.", "Dogs ran."], "registers": ["news", "fiction"],
    "stop_rule": {"threshold": 0.5}, "tie_tolerance": 1e-3, "runtime": {"models": ["l6"], "tolerance": 1e-4},
    "models": {k: {"model": name, "checkpoint": f"org/{name}", "n_layers": L, "n_heads": 12,
                   "halves": {"fit": [1], "test": [0]}, "positional_heads": POSITIONAL}
               for k, name, L in (("l6", "minilm-l6", 6), ("l3", "minilm-l3", 3))},
}
VIEWS = {"l6": ['{"sentence":0}', '{"sentence":1}'], "l3": ['{"sentence":0}']}   # views.sentence_views' texts


def test_view_files_one_per_model_and_sentence():
    files = published.view_files(VIEWS)
    assert sorted(files) == ["assets/instrument/l3/0.json", "assets/instrument/l6/0.json", "assets/instrument/l6/1.json"]
    assert files["assets/instrument/l6/1.json"] == VIEWS["l6"][1]


def test_the_instrument_index_carries_the_definitions_the_script_must_not_repeat():
    index = json.loads(published.instrument_index(RESULTS))
    assert index["default_model"] == "l6"
    assert index["sentences"] == [{"text": "A cat sat.", "register": "news", "half": "test"},
                                  {"text": "Dogs ran.", "register": "fiction", "half": "fit"}]
    assert index["threshold"] == 0.5 and index["tie_tolerance"] == 1e-3 and index["tiny_mass"] == TINY_MASS
    assert [(x["key"], x["label"]) for x in index["lenses"]] == [(k, LENS_LABELS[k]) for k in LENSES]
    assert index["models"]["l3"] == {"name": "minilm-l3", "title": "minilm-l3 (3 layers × 12 heads)", "n_layers": 3,
                                     "n_heads": 12, "positional": POSITIONAL, "runtime": None, "value_zeroing_every": None,
                                     "warning": {"verdict": None, "lens": None, "truth": None}}   # no Part 9 measured
    assert index["models"]["l6"]["runtime"] == "assets/runtime/l6/manifest.json"   # study.yml's runtime models


def test_the_instruments_warning_follows_the_registered_verdict():
    """The lens of the reading found fit (‖α f(x)‖ before ‖α v‖), the model's verdict, the truth."""
    cal = {"primary": "word", "model_verdict": {"verdict": "fit"},
           "verdict": {"alpha": "not fit", "value_norm_on_alpha": "fit", "output_norm_on_alpha": "fit"}}
    assert published.warning({"calibration": cal}) == {"verdict": "fit", "lens": "output_norm", "truth": "word"}
    cal["verdict"]["output_norm_on_alpha"] = "undetermined"
    assert published.warning({"calibration": cal})["lens"] == "value_norm"
    cal["verdict"] = {"alpha": "fit", "value_norm_on_alpha": "not fit", "output_norm_on_alpha": "not fit"}
    assert published.warning({"calibration": cal | {"model_verdict": {"verdict": "not fit"}}})["lens"] is None   # α is no lens


def test_site_files_point_into_the_cache(tmp_path):
    results = cache.write(tmp_path, "results", "r" * 64, {cache.PAYLOAD: json.dumps(RESULTS)})
    views = cache.write(tmp_path, "files", "r" * 64, published.view_files(VIEWS))
    source = StudySource(tmp_path / "study.yml")
    plain = {**RESULTS, "runtime": {"models": [], "tolerance": 1e-4}}
    files = source.published(plain, results, views, tmp_path, None)
    assert files["downloads/results.json"] == results / cache.PAYLOAD
    assert json.loads(files["assets/instrument/index.json"])["default_model"] == "l6"
    assert files["assets/instrument/l6/1.json"] == views / "assets/instrument/l6/1.json"
    assert len(files) == 2 + 3
    lock = tmp_path / "numbers.lock.json"                  # the lock, published when there is one
    lock.write_text("{}")
    with_lock = source.published(plain, results, views, tmp_path, lock)
    assert with_lock["downloads/numbers.lock.json"] == lock and len(with_lock) == len(files) + 1


def test_the_vega_bundle_is_started_beside_the_build_only_when_missing(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(background, "start", lambda name, fn, *args: started.append((name, fn, args)))
    engine.start_vega(tmp_path)
    assert started == [("vega", engine.bundle_vega, (tmp_path,))]
    cache.write(tmp_path, "vega", engine._vega_key(), {engine.VEGA_BUNDLE: "// the bundle"})
    engine.start_vega(tmp_path)
    assert len(started) == 1


def test_the_vega_bundle_is_built_once_and_kept(tmp_path):
    folder = engine.bundle_vega(tmp_path)
    bundle = folder / engine.VEGA_BUNDLE
    assert bundle.stat().st_size > 100_000 and b"vega" in bundle.read_bytes()[:100_000].lower()
    assert cache.read(tmp_path, "vega", engine._vega_key()) == folder
    stamp = bundle.stat().st_mtime_ns
    assert engine.bundle_vega(tmp_path) == folder and bundle.stat().st_mtime_ns == stamp
