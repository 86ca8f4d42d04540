"""Charts: the engine's registry (livenumbers/charts.py: Vega-Lite specs whose every encoded
field exists in the data they read) and the study's charts (model/site/charts/), built from
the results."""
from __future__ import annotations

import re

import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import core as vl_schema

from conftest import ROOT
from livenumbers import charts as engine
from livenumbers import gate
from model.site.charts import CHARTS
from model.site.charts.common import bin_counts
from model.site.charts.flip import PASSES
from model.site.source import study_settings



def resolved(spec: dict) -> dict:
    """The spec with every named dataset put back inline where it is used (the build names
    its rows, Altair names them by a hash: the same chart either way)."""
    datasets = spec.get("datasets", {})

    def walk(node):
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items() if k != "datasets"}
        data = node.get("data")
        if isinstance(data, dict) and data.get("name") in datasets:
            out["data"] = {"values": datasets[data["name"]]}
        return out

    return walk(spec)

def test_check_fields_names_chart_and_field():
    spec = {"data": {"values": [{"alpha": 0.1, "norm": 0.2}]}, "mark": "point",
            "encoding": {"x": {"field": "alpha", "type": "quantitative"}, "y": {"field": "nrom", "type": "quantitative"}}}
    with pytest.raises(engine.ChartError, match=r"^chart 'sink_scatter/l6': unknown field 'nrom'; the data has \['alpha', 'norm'\]$"):
        engine.check_fields("sink_scatter/l6", spec)
    spec["encoding"]["y"]["field"] = "norm"
    engine.check_fields("sink_scatter/l6", spec)


def _one(name: str, builder) -> engine.Charts:
    """A registry of one chart taking a model (words that say nothing: not what is tested)."""
    return engine.Charts({name: engine.Chart(builder, lambda results, num, model: None, ("model",))},
                         lambda results: {"model": list(results["models"])})


def _base():
    alt = engine.altair()
    return alt, alt.Chart(alt.Data(values=[{"x": 0.1, "y": 0.2, "g": "a"}, {"x": 0.3, "y": 0.4, "g": "b"}]))


def _layered(results, model):
    alt, base = _base()
    return base.mark_point().encode(x="x:Q", y="y:Q") + base.mark_line().encode(x="x:Q", y="why:Q")


def _concatenated(results, model):
    alt, base = _base()
    return alt.hconcat(base.mark_point().encode(x="x:Q", y="y:Q"), base.mark_bar().encode(x="x:Q", y="why:Q"))


def _faceted(results, model):
    alt, base = _base()
    return base.mark_point().encode(x="x:Q", y="y:Q").facet(row="why:N")


@pytest.mark.parametrize("builder", [_layered, _concatenated, _faceted], ids=["layer", "hconcat", "facet"])
def test_a_chart_naming_an_absent_field_is_rejected_wherever_it_is(builder):
    with pytest.raises(engine.ChartError, match=r"chart 'broken/l6': unknown field 'why'"):
        _one("broken", builder).build({"models": {"l6": {}}}, "broken/l6")


def test_a_field_made_by_a_transform_is_not_an_unknown_field():
    def made(results, model):
        alt, base = _base()
        return (base.transform_calculate(why="datum.y * 2").mark_point().encode(x="x:Q", y="why:Q")
                + base.transform_aggregate(total="sum(y)", groupby=["g"]).mark_bar().encode(x="g:N", y="total:Q"))

    _one("made", made).build({"models": {"l6": {}}}, "made/l6")


@pytest.mark.parametrize("chart_id, message", [
    ("no_such_chart", "unknown chart 'no_such_chart'"),
    ("sink_scatter/l9", "chart 'sink_scatter' takes model (model: ['l6']; name: ['typical', 'survivor']; part: ['part9', 'part10'])"),
    ("sink_scatter", "chart 'sink_scatter' takes model"),
    ("depth_sink/l6", "chart 'depth_sink' takes no arguments"),
])
def test_a_chart_a_page_cannot_have_is_named(chart_id, message):
    with pytest.raises(engine.ChartError, match="^" + re.escape(message)):
        CHARTS.build({"models": {"l6": {}}}, chart_id)


def test_chart_ids_join_sorted_arguments():
    ids = CHARTS.ids({"models": {"l6": {}, "l3": {}}})
    assert {"sink_scatter/l6", "sink_scatter/l3", "depth_sink", "row_example/l3/survivor"} <= set(ids)
    assert len(ids) == len(set(ids)) == sum(2 ** len(c.args) if c.args else 1 for c in CHARTS.charts.values())
    assert engine.Charts.chart_id("row_example", {"name": "typical", "model": "l6"}) == "row_example/l6/typical"


def test_bin_counts_on_paper():
    bins = bin_counts([0.0, 0.04, 0.05, 0.12, 0.999, 1.0, -0.1], 0.05)
    assert len(bins) == 20 and bins[0] == (0.0, 3) and bins[1] == (0.05, 1) and bins[2] == (0.1, 1)
    assert bins[19] == (0.95, 2) and sum(c for _, c in bins) == 7      # 1.0 and below 0 are kept, at the ends


def test_the_sink_distribution_carries_the_held_out_rows():
    rows = {lens: {"sink_share": [0.1, 0.12, 0.9, 0.5]} for lens in ("alpha", "value_norm", "output_norm")}
    results = {"models": {"l6": {"halves": {"test": [0, 2], "fit": [1]}, "rows": {"sentence": [0, 0, 2, 1], **rows}}}}
    data = resolved(CHARTS.build(results, "sink_distribution/l6"))["data"]["values"]
    alpha = {d["from"]: d["rows"] for d in data if d["lens"] == "α" and d["rows"]}
    assert alpha == {0.1: 2, 0.9: 1}                                   # sentence 1 is in the fit half


def _rows(sink, predicted):
    return {"sentence": [0, 0, 1, 2], "word": list("abcd"), "value_norm": {"sink_share": sink, "predicted_sink": predicted}}


def test_the_survival_prediction_draws_each_models_held_out_rows():
    results = {"stop_rule": {"threshold": 0.5}, "models": {
        "l6": {"checkpoint": "x/six", "halves": {"test": [0, 2], "fit": [1]}, "rows": _rows([0.9, 0.1, 0.6, 0.2], [0.8, 0.1, 0.3, 0.2])},
        "l3": {"checkpoint": "x/three", "halves": {"test": [1], "fit": [0, 2]}, "rows": _rows([0.9, 0.1, 0.6, 0.2], [0.8, 0.1, 0.3, 0.2])}}}
    spec = resolved(CHARTS.build(results, "survival_prediction"))
    panels = spec["hconcat"]
    assert [p["layer"][2]["title"] for p in panels] == ["six", "three"]
    l6 = panels[0]["layer"][2]
    assert [(d["p"], d["o"], d["word"]) for d in l6["data"]["values"]] == [(0.8, 0.9, "a"), (0.1, 0.1, "b"), (0.2, 0.2, "d")]
    assert "datum.o > 0.5" in l6["transform"][0]["calculate"]            # the stop rule's threshold, from the results
    assert [d["word"] for d in panels[1]["layer"][2]["data"]["values"]] == ["c"]


def _variant(id_, choice, value, rows, adopted):
    return {"id": id_, "choice": choice, "value": value, "heads": [], "rows_above": {"value_norm": rows}, "adopted": adopted}


def test_the_sensitivity_chart_plots_the_stop_rules_count_per_choice():
    results = {"stop_rule": {"lenses": ["value_norm"], "threshold": 0.5, "max_rows_above": 0}, "models": {"l6": {
        "checkpoint": "x/six", "sensitivity": [_variant("registered", "registered", "", 102, False),
                                               _variant("ties_0", "tie_tolerance", "0", 100, False),
                                               _variant("rule_largest_content_mass", "head_rule", "largest_content_mass", 0, True)]}}}
    spec = resolved(CHARTS.build(results, "sensitivity"))
    data = spec["layer"][1]["data"]["values"]
    assert [(d["choice"], d["rows"], d["verdict"]) for d in data] == [
        ("registered rule", 102, "not adopted"), ("tie tolerance 0", 100, "not adopted"),
        ("the most content (least sink)", 0, "adopted")]
    assert spec["layer"][0]["data"]["values"] == [{"x": 0}]               # the rule adopts at max_rows_above
    words = CHARTS.describe(results, "sensitivity", lambda k, f: k)
    assert "adopted only under: the most content (least sink)" in words.alt
    assert "l6.sens.registered.value_norm.rows_above" in words.alt and "l6.sens.rule_largest_content_mass.value_norm.rows_above" in words.alt


def test_the_rollout_baselines_chart_has_every_guess_and_its_interval():
    ro = {"agrees_with_instrument": 0.3, "baseline_last_punct": 0.1, "baseline_other_word": 0.2, "baseline_sentence_mean": 0.25,
          "baseline_next_word": 0.4, "baseline_previous_word": 0.15, "chance_agreement": 0.05, "best_baseline": "next_word"}
    ro |= {f"{k}_lo": v - 0.01 for k, v in list(ro.items()) if k.startswith(("agrees", "baseline_"))}
    ro |= {f"{k}_hi": v + 0.01 for k, v in list(ro.items()) if k.startswith(("agrees", "baseline_")) and not k.endswith("_lo")}
    results = {"models": {"l6": {"checkpoint": "x/six", "rollout": ro}}, "bootstrap": {"level": 0.95}}
    spec = resolved(CHARTS.build(results, "rollout_baselines"))
    panel = spec["vconcat"][0]
    # Altair lifts data that layers share to their parent: read it where it ended up.
    data = next(node["data"]["values"] for node in (panel["layer"][0], panel, spec) if "data" in node)
    wide, positional = "lazy guess, sentence-wide", "lazy guess, positional"
    assert [(d["share"], d["kind"]) for d in data] == [(0.3, "rollout, this word"), (0.1, wide), (0.2, wide), (0.25, wide),
                                                       (0.4, positional), (0.15, positional), (0.05, "chance")]
    assert data[0]["lo"] == pytest.approx(0.29) and data[6]["lo"] == data[6]["hi"] == 0.05   # chance: no interval
    words = CHARTS.describe(results, "rollout_baselines", lambda k, f: k)
    assert "the best lazy guess (the next word) l6.rollout.baseline_next_word" in words.alt


def test_rule_layers_draws_alphas_layers_and_picks():
    m = {"checkpoint": "x/six", "n_layers": 2, "summary": {"alpha": {"layer_picks": [3, 7]}},
         "per_layer": [{"layer": 0, "lens": "alpha", "stats": {"median_sink": 0.1}}, {"layer": 0, "lens": "value_norm", "stats": {"median_sink": 0.9}},
                       {"layer": 1, "lens": "alpha", "stats": {"median_sink": 0.4}}]}
    spec = resolved(CHARTS.build({"models": {"l6": m}}, "rule_layers/l6"))
    assert spec["vconcat"][0]["data"]["values"] == [{"layer": 0, "median": 0.1}, {"layer": 1, "median": 0.4}]
    assert spec["vconcat"][1]["data"]["values"] == [{"layer": 0, "rows": 3}, {"layer": 1, "rows": 7}]
    words = CHARTS.describe({"models": {"l6": m}}, "rule_layers/l6", lambda k, f: k)
    assert "lowest in layer 0 (l6.layer0.alpha.median_sink)" in words.alt and "opens layer 1 most often" in words.alt


def test_the_mutant_chart_draws_every_row_of_the_corpus():
    rows = [{"sink_share": 0.1 * i, "wrong_sink_share": 0.1 * i, "wrong_row_sum": 1.0, "word": "w", "n_subwords": 1 + i % 2,
             "sentence": i} for i in range(4)]
    spec = resolved(CHARTS.build({"models": {"l6": {"halves": {"test": [0], "fit": [1, 2, 3]},
                                                    "mutant": {"wrong_agg": {"rows": rows}}}}}, "mutant_sinks/l6"))
    assert len(spec["layer"][1]["data"]["values"]) == 4                    # both halves: the table counts them all


def test_flip_heads_marks_the_passing_heads_and_merges_equal_counts():
    heads = lambda f, o, pc: {"layer": [1, 1, 2, 2], "head": [0, 1, 0, 1], "follows": f, "opposes": o,
                              "p_corrected": pc, "alpha": 0.05, "null_max_follows": 6.0}
    flips = {"lenses": {"alpha": {"heads": heads([9, 2, 2, 9], [0, 1, 1, 0], [0.01, 1.0, 1.0, 0.2])}},
             "null": {"lenses": {"alpha": {"heads": heads([1, 0, 0, 0], [1, 0, 0, 0], [1.0] * 4)}}}}
    spec = CHARTS.build({"models": {"l6": {"flips": flips}}}, "flip_heads/l6", validate=True)
    flip_panel, null_panel = spec["hconcat"]
    points = next(layer for layer in flip_panel["layer"] if layer["mark"]["type"] == "point")["data"]["values"]
    assert sorted((d["follows"], d["opposes"], d["n_heads"], d["heads"], d["test"] == PASSES[0]) for d in points) == [
        (2, 1, 2, "L1H1, L2H0", False), (9, 0, 1, "L1H0", True), (9, 0, 1, "L2H1", False)]   # same counts, another verdict
    rules = [layer for layer in flip_panel["layer"] if layer["mark"]["type"] == "rule"]
    assert rules[0]["data"]["values"] == [{"y": 6.0}]                                # the swap null's 95th percentile
    assert null_panel["title"] == "null pairs"


@pytest.fixture(scope="module")
def session_charts(session_cache, session_results):
    """Every chart of the real results, built once into the session's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIVE_NUMBERS_CACHE", str(session_cache))
        return gate.load_charts(study_settings(ROOT), *session_results)


def test_every_chart_of_the_real_results_is_built_and_checked(session_charts, session_results):
    results, _ = session_results
    assert sorted(session_charts) == sorted(CHARTS.ids(results))
    # The build skips Altair's schema validation; here each published spec is validated
    # against the Vega-Lite schema Altair ships, its datasets cut to their first rows (rows
    # are plain objects: the schema's checks are on the spec; validating thousands of rows
    # one by one costs a minute and checks nothing more).
    schema = vl_schema.load_schema()
    for chart_id, spec in session_charts.items():
        assert resolved(CHARTS.build(results, chart_id)) == resolved(spec), chart_id   # the cache holds today's
        validate_jsonschema({**spec, "datasets": {k: v[:3] for k, v in spec.get("datasets", {}).items()}}, schema)
    with pytest.raises(Exception, match="pointy"):   # the validation can fail
        validate_jsonschema({"$schema": session_charts["sink_scatter/l6"]["$schema"], "mark": "pointy",
                             "data": {"values": [{"a": 1}]}}, schema)
    for chart_id, spec in session_charts.items():
        engine.check_fields(chart_id, spec)
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), chart_id
    test = set(results["models"]["l6"]["halves"]["test"])
    n_test = sum(s in test for s in results["models"]["l6"]["rows"]["sentence"])
    values = resolved(session_charts["sink_distribution/l6"])["data"]["values"]
    assert sum(d["rows"] for d in values if d["lens"] == "α") == n_test
