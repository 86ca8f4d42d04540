"""Files the site publishes beside its pages (model/site/published.py): the results for
download, the instrument's index and per-sentence data, the Vega bundle."""
from __future__ import annotations

import json

from model.instrument import LENS_LABELS, LENSES, TINY_MASS
from model.site import background, cache, published

RESULTS = {
    "default_model": "l6", "sentences": ["A cat sat.", "Dogs ran."], "stop_rule": {"threshold": 0.5},
    "models": {"l6": {"model": "minilm-l6", "n_layers": 6, "n_heads": 12},
               "l3": {"model": "minilm-l3", "n_layers": 3, "n_heads": 12}},
}
VIEWS = {"l6": [{"sentence": 0, "words": ["A", "cat", "sat", "."]}, {"sentence": 1, "words": ["Dogs", "ran", "."]}],
         "l3": [{"sentence": 0, "words": ["A", "cat", "sat", "."]}]}


def test_view_files_one_per_model_and_sentence():
    files = published.view_files(VIEWS)
    assert sorted(files) == ["assets/instrument/l3/0.json", "assets/instrument/l6/0.json", "assets/instrument/l6/1.json"]
    assert json.loads(files["assets/instrument/l6/1.json"]) == VIEWS["l6"][1]


def test_the_instrument_index_carries_the_definitions_the_script_must_not_repeat():
    index = json.loads(published.instrument_index(RESULTS))
    assert index["default_model"] == "l6" and index["sentences"] == RESULTS["sentences"]
    assert index["threshold"] == 0.5 and index["tiny_mass"] == TINY_MASS
    assert [(x["key"], x["label"]) for x in index["lenses"]] == [(k, LENS_LABELS[k]) for k in LENSES]
    assert index["models"]["l3"] == {"name": "minilm-l3", "n_layers": 3, "n_heads": 12}


def test_site_files_point_into_the_cache(tmp_path):
    results = cache.write(tmp_path, "results", "r" * 64, {cache.PAYLOAD: json.dumps(RESULTS)})
    views = cache.write(tmp_path, "views", "r" * 64, published.view_files(VIEWS))
    vega = cache.write(tmp_path, "vega", published._vega_key(), {published.VEGA_BUNDLE: "// the bundle"})
    files = published.site_files(RESULTS, results, views, tmp_path)
    assert files[published.VEGA_BUNDLE] == vega / published.VEGA_BUNDLE
    assert files["downloads/results.json"] == results / cache.PAYLOAD
    assert json.loads(files["assets/instrument/index.json"])["default_model"] == "l6"
    assert files["assets/instrument/l6/1.json"] == views / "assets/instrument/l6/1.json"
    assert len(files) == 3 + 3


def test_the_vega_bundle_is_started_beside_the_build_only_when_missing(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(background, "start", lambda name, fn, *args: started.append((name, fn, args)))
    published.start_vega(tmp_path)
    assert started == [("vega", published.bundle_vega, (tmp_path,))]
    cache.write(tmp_path, "vega", published._vega_key(), {published.VEGA_BUNDLE: "// the bundle"})
    published.start_vega(tmp_path)
    assert len(started) == 1


def test_the_vega_bundle_is_built_once_and_kept(tmp_path):
    folder = published.bundle_vega(tmp_path)
    bundle = folder / published.VEGA_BUNDLE
    assert bundle.stat().st_size > 100_000 and b"vega" in bundle.read_bytes()[:100_000].lower()
    assert cache.read(tmp_path, "vega", published._vega_key()) == folder
    stamp = bundle.stat().st_mtime_ns
    assert published.bundle_vega(tmp_path) == folder and bundle.stat().st_mtime_ns == stamp
