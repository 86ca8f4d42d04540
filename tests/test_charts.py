"""Charts (model/site/charts.py): Vega-Lite specs whose every encoded field exists in
the data they read, built from the results."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from model.site import charts, gate


def test_check_fields_names_chart_and_field():
    spec = {"data": {"values": [{"alpha": 0.1, "norm": 0.2}]}, "mark": "point",
            "encoding": {"x": {"field": "alpha", "type": "quantitative"}, "y": {"field": "nrom", "type": "quantitative"}}}
    with pytest.raises(charts.ChartError, match=r"^chart 'sink_scatter/l6': unknown field 'nrom'; the data has \['alpha', 'norm'\]$"):
        charts.check_fields("sink_scatter/l6", spec)
    spec["encoding"]["y"]["field"] = "norm"
    charts.check_fields("sink_scatter/l6", spec)


def _base():
    alt = charts._alt()
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
def test_a_chart_naming_an_absent_field_is_rejected_wherever_it_is(monkeypatch, builder):
    monkeypatch.setitem(charts.CHARTS, "broken", (builder, ("model",)))
    with pytest.raises(charts.ChartError, match=r"chart 'broken/l6': unknown field 'why'"):
        charts.build({"models": {"l6": {}}}, "broken/l6")


def test_a_field_made_by_a_transform_is_not_an_unknown_field(monkeypatch):
    def made(results, model):
        alt, base = _base()
        return (base.transform_calculate(why="datum.y * 2").mark_point().encode(x="x:Q", y="why:Q")
                + base.transform_aggregate(total="sum(y)", groupby=["g"]).mark_bar().encode(x="g:N", y="total:Q"))

    monkeypatch.setitem(charts.CHARTS, "made", (made, ("model",)))
    charts.build({"models": {"l6": {}}}, "made/l6")


@pytest.mark.parametrize("chart_id, message", [
    ("no_such_chart", "unknown chart 'no_such_chart'"),
    ("sink_scatter/l9", "chart 'sink_scatter' takes model; models: ['l6']"),
    ("sink_scatter", "chart 'sink_scatter' takes model"),
    ("depth_sink/l6", "chart 'depth_sink' takes no arguments"),
])
def test_a_chart_a_page_cannot_have_is_named(chart_id, message):
    with pytest.raises(charts.ChartError, match="^" + re.escape(message)):
        charts.build({"models": {"l6": {}}}, chart_id)


def test_chart_ids_join_sorted_arguments():
    ids = charts.chart_ids({"models": {"l6": {}, "l3": {}}})
    assert {"sink_scatter/l6", "sink_scatter/l3", "depth_sink", "row_example/l3/survivor"} <= set(ids)
    assert len(ids) == len(set(ids)) == sum(2 ** len(args) if args else 1 for _, args in charts.CHARTS.values())


def test_binned_counts_on_paper():
    bins = charts._binned([0.0, 0.04, 0.05, 0.12, 0.999, 1.0, -0.1], 0.05)
    assert len(bins) == 20 and bins[0] == (0.0, 3) and bins[1] == (0.05, 1) and bins[2] == (0.1, 1)
    assert bins[19] == (0.95, 2) and sum(c for _, c in bins) == 7      # 1.0 and below 0 are kept, at the ends


def test_the_sink_distribution_carries_the_held_out_rows():
    rows = {lens: {"sink_share": [0.1, 0.12, 0.9, 0.5]} for lens in ("alpha", "value_norm", "output_norm")}
    results = {"models": {"l6": {"halves": {"test": [0, 2], "fit": [1]}, "rows": {"sentence": [0, 0, 2, 1], **rows}}}}
    data = charts.build(results, "sink_distribution/l6")["data"]["values"]
    alpha = {d["from"]: d["rows"] for d in data if d["lens"] == "α" and d["rows"]}
    assert alpha == {0.1: 2, 0.9: 1}                                   # sentence 1 is in the fit half


def test_flip_heads_marks_the_passing_heads_and_merges_equal_counts():
    heads = lambda f, o, pc: {"layer": [1, 1, 2, 2], "head": [0, 1, 0, 1], "follows": f, "opposes": o,
                              "p_corrected": pc, "alpha": 0.05, "null_max_follows": 6.0}
    flips = {"lenses": {"alpha": {"heads": heads([9, 2, 2, 9], [0, 1, 1, 0], [0.01, 1.0, 1.0, 0.2])}},
             "null": {"lenses": {"alpha": {"heads": heads([1, 0, 0, 0], [1, 0, 0, 0], [1.0] * 4)}}}}
    spec = charts.build({"models": {"l6": {"flips": flips}}}, "flip_heads/l6", validate=True)
    flip_panel, null_panel = spec["hconcat"]
    points = next(layer for layer in flip_panel["layer"] if layer["mark"]["type"] == "point")["data"]["values"]
    assert sorted((d["follows"], d["opposes"], d["n_heads"], d["heads"], d["test"] == charts.PASSES[0]) for d in points) == [
        (2, 1, 2, "L1H1, L2H0", False), (9, 0, 1, "L1H0", True), (9, 0, 1, "L2H1", False)]   # same counts, another verdict
    rules = [layer for layer in flip_panel["layer"] if layer["mark"]["type"] == "rule"]
    assert rules[0]["data"]["values"] == [{"y": 6.0}]                                # the swap null's 95th percentile
    assert null_panel["title"] == "null pairs"


@pytest.fixture(scope="module")
def session_charts(session_cache, session_results):
    """Every chart of the real results, built once into the session's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIVE_NUMBERS_CACHE", str(session_cache))
        return gate.load_charts(gate.Settings.at(ROOT), *session_results)


def test_every_chart_of_the_real_results_is_built_and_checked(session_charts, session_results):
    results, _ = session_results
    assert sorted(session_charts) == sorted(charts.chart_ids(results))
    for chart_id in session_charts:  # the build skips Altair's schema validation; here it runs
        assert charts.build(results, chart_id, validate=True) == session_charts[chart_id], chart_id
    for chart_id, spec in session_charts.items():
        charts.check_fields(chart_id, spec)
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), chart_id
    test = set(results["models"]["l6"]["halves"]["test"])
    n_test = sum(s in test for s in results["models"]["l6"]["rows"]["sentence"])
    values = session_charts["sink_distribution/l6"]["data"]["values"]
    assert sum(d["rows"] for d in values if d["lens"] == "α") == n_test
