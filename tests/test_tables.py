"""Generated tables: the engine's Markdown (livenumbers/tables.py) and the study's tables
(model/site/tables/), on a small results dict made by hand and a renderer that records what
is cited; then every table over the real results."""
from __future__ import annotations

import itertools

import pytest

from livenumbers import formats
from livenumbers.markup import Renderer
from livenumbers.tables import md_table, span
from model.instrument import LENSES
from model.site import numbers
from model.site.source import StudySource
from model.site.tables import TABLES
from model.site.tables.common import ci_cell

SOURCE = StudySource("study.yml")   # its interval label and tables (nothing read from disk)


class Recorder:
    """The part of a Renderer tables use: cite (recording the key), data, numbers, results."""

    def __init__(self, values: dict, results: dict | None = None):
        self.source = SOURCE
        self.results = results or {}
        self.numbers = numbers.Numbers(values, self.results)
        self.cited: list[str] = []

    def cite(self, key: str, fmt: str) -> str:
        self.cited.append(key)
        value = self.numbers[key]
        out = formats.format_value(key, value, fmt)
        return formats.md_text(out) if isinstance(value, str) else out

    def data(self, text: str) -> str:   # the results' own text, as English prints it
        return text

    def route_link(self, fragment: str) -> str:
        return f"instrument.md#{fragment}"

    def locked_text(self, key, fmt):
        return "recorded"

    def interval_label(self) -> str:
        return f"{round(self.source.interval_level(self.results) * 100)}% CI"


def cells(table: str) -> list[list[str]]:
    lines = [l for l in table.splitlines() if l.startswith("|")]
    return [[c.strip() for c in l.strip("|").split(" | ")] for l in lines[2:]]


def test_short_tables_stay_open_long_ones_fold():
    rows = [[str(i), "x"] for i in range(31)]
    assert md_table(["a", "b"], rows[:30]).startswith("| a | b |\n|---|---|\n| 0 | x |")
    folded = md_table(["a", "b"], rows)
    assert folded.startswith('\n<details markdown="1">\n<summary>31 rows</summary>\n\n| a | b |')
    assert folded.rstrip().endswith("</details>") and "| 30 | x |" in folded
    assert "<summary>All of them</summary>" in md_table(["a"], rows, summary="All of them")


STATS = ["median_sink", "worst_sink", "above_50_share", "above_90_share", "worse_share", "same_head_share", "median_punct"]


def test_lens_summary_cites_a_number_and_its_interval_per_lens():
    values = {"l6.alpha.n_rows": 120, "l6.n_test_sentences": 9}
    for (k, (lens, stat)) in enumerate(itertools.product(LENSES, STATS), start=1):
        if stat in ("worse_share", "same_head_share") and lens == "alpha":
            continue  # not defined for alpha against itself
        values[f"l6.{lens}.{stat}"] = k / 100
        if stat != "worst_sink":                             # a maximum's interval says nothing: none shown
            values |= {f"l6.{lens}.{stat}_lo": k / 200, f"l6.{lens}.{stat}_hi": k / 50}
    r = Recorder(values, {"bootstrap": {"level": 0.95}})
    table = TABLES["lens_summary"](r, "l6")
    assert table.splitlines()[0] == "| 120 rows, 9 held-out sentences | α | 95% CI | ‖α v‖ | 95% CI | ‖α f(x)‖ | 95% CI |"
    assert set(r.cited) == set(values)                       # every number shown is cited, none is skipped
    worse = cells(table)[4]
    assert worse[:3] == ["Share of rows worse than under α", "—", "—"]
    k = len(STATS) + STATS.index("worse_share") + 1          # value_norm's worse_share was made with k = 12
    assert worse[3:5] == [f"{k:.1f}%", f"{k / 2:.1f}–{2 * k:.1f}%"]
    assert cells(table)[1][2] == "—"                          # worst row: no interval


def test_a_share_of_zero_everywhere_has_no_interval():
    r = Recorder({"k": 0.0, "k_lo": 0.0, "k_hi": 0.0})
    assert ci_cell(r, "k", "pct:1") == "none seen"


SENTENCES = ["A <b>cat</b> sat.", "Dogs ran.", "Birds flew."]
RESULTS = {
    "sentences": SENTENCES,
    "models": {"l6": {"halves": {"fit": [2], "test": [0, 1]}, "rows": {
        "sentence": [0, 0, 1, 2], "word_index": [0, 1, 0, 0], "word": ["A", "cat", "Dogs", "Birds"],
        "alpha": {"sink_share": [0.9, 0.2, 0.6, 0.95], "layer": [0, 0, 1, 1], "head": [1, 2, 3, 4],
                  "content_mass": [0.1, 0.8, 0.4, 0.05]},
        "value_norm": {"sink_share": [0.7, 0.4, 0.55, 0.99], "layer": [1, 1, 2, 0], "head": [3, 3, 4, 0],
                       "predicted_sink": [0.65, 0.3, 0.5, 0.9]},
        "output_norm": {"sink_share": [0.1, 0.2, 0.3, 0.4], "layer": [0, 0, 0, 0], "head": [0, 0, 0, 0]},
    }}},
}
HEAD_RATIOS = {f"l6.headratio.l{l}h{h}.cls_v": 1.0 + l + h / 10 for l in range(3) for h in range(5)}


def test_survivors_are_the_held_out_rows_above_half():
    r = Recorder(HEAD_RATIOS, RESULTS)
    rows = cells(TABLES["survivors"](r, "l6"))
    assert [row[1:] for row in rows] == [["A", "L1H3", "2.30×", "65.0%", "70.0%"],    # 0.4 and the fit half's row: out
                                         ["Dogs", "L2H4", "3.40×", "50.0%", "55.0%"]]
    # Each row links to the instrument, titled with its sentence, escaped once.
    assert rows[0][0] == f'[0](instrument.md#l6/0/0/value_norm "{formats.md_text(SENTENCES[0])}")'
    assert "l6.row.s0.w0.value_norm.predicted_sink" in r.cited


def test_worst_rows_by_alpha_sink_held_out_half_only():
    r = Recorder({}, RESULTS)
    rows = cells(TABLES["worst_rows"](r, "l6", n=2))
    assert [row[1] for row in rows] == ["A", "Dogs"]          # 0.9, 0.6; "Birds" (0.95) is in the fit half
    assert rows[0][2:] == ["L0H1 / L1H3 / L0H0", "90.0%", "70.0%", "10.0%", "10.0%"]


def test_verdicts_say_adopted_from_the_numbers():
    values = {"l6.checkpoint": "mini", "l6.n_layers": 6}
    for lens, above in (("value_norm", 0), ("output_norm", 3)):
        values |= {f"l6.verdict.{lens}.{k}": v for k, v in
                   {"rows_above": above, "n_rows": 100, "share_above": above / 100, "adopted": above == 0}.items()}
    r = Recorder(values, {"models": {"l6": {}}, "stop_rule": {"lenses": ["value_norm", "output_norm"]}})
    assert [row[2:] for row in cells(TABLES["verdicts"](r))] == [["0", "100", "0.0%", "adopted"],
                                                              ["3", "100", "3.0%", "not adopted"]]


def test_text_from_the_results_is_escaped_in_cells():
    values = {"corpus.register.a|b": 3, "corpus.length0.from": 1, "corpus.length0.to": 8, "corpus.length0.sentences": 3}
    r = Recorder(values, {"corpus": {"registers": {"a|b": 3}, "length_histogram": [{}]}})
    table = TABLES["corpus"](r)
    assert cells(table)[0] == ["a&#124;b", "3"]               # a pipe in a register cannot split the row
    assert cells(table.split("\n\n")[1])[0] == ["1–8", "3"]


# -- the flip's tables, on hand-made flip results ---------------------------------------------------

def _heads(follows, opposes, corrected, best="L1H0", p_value=None):
    return {"layer": [1, 1, 2], "head": [0, 1, 0], "follows": follows, "opposes": opposes, "p_value": p_value or corrected,
            "p_corrected": corrected, "picks_reader": [0.5, 0.6, 0.7], "alpha": 0.05, "family": 3,
            "n_significant": sum(p < 0.05 for p in corrected), "significant": [], "best": best,
            "best_follows": max(follows), "best_opposes": 0, "best_p_value": min(corrected),
            "best_p_corrected": min(corrected), "best_picks_reader": 0.5, "null_max_follows": 4.0, "permutations": 10}


def _set(pairs, heads, orders=None, null=None):
    lens = {"n_pairs": len(pairs), "n_heads": 3, "toward_share": 0.6, "toward_share_lo": 0.5, "toward_share_hi": 0.7,
            "most_pairs_followed": 5, "heads": heads, "pairs": pairs}
    out = {"n_pairs": len(pairs), "lenses": {"alpha": lens}, "model_follows": 0.55, "model_follows_lo": 0.5,
           "model_follows_hi": 0.6, "orders": orders or {}}
    return out | ({"null": null} if null else {})


def _pair(a, b, order, follows, source=None):
    return {"sentences": [a, b], "referents": ["tile", "hammer"], "order": order, "source": source,
            "follows_reader": follows}


FLIP_PAIRS = [_pair("The hammer hit the tile because it was brittle.", "The hammer hit the tile because it was heavy.", "original", 2),
              _pair("The tile was hit by the hammer because it was brittle.", "The tile was hit by the hammer because it was heavy.", "mirrored", 1, 1)]
NULL_PAIRS = [_pair("The hammer hit the tile because it was raining.", "The hammer hit the tile because it was snowing.", "original", 0, 1),
              _pair("The tile was hit by the hammer because it was raining.", "The tile was hit by the hammer because it was snowing.", "mirrored", 3, 2)]
# Head L1H1 passes (corrected p 0.01), then L1H0 (0.5), then L2H0 (1).
FLIPS = _set(FLIP_PAIRS, _heads([5, 9, 0], [1, 0, 0], [0.5, 0.01, 1.0], best="L1H1"),
             orders={o: _set([], _heads([3, 4, 0], [0, 0, 0], [0.6, 0.2, 1.0])) for o in ("original", "mirrored")},
             null=_set(NULL_PAIRS, _heads([1, 2, 3], [1, 2, 3], [1.0, 1.0, 1.0]),
                       orders={o: _set([], _heads([0, 1, 0], [1, 0, 0], [1.0, 1.0, 1.0])) for o in ("original", "mirrored")}))


@pytest.fixture
def flip_recorder():
    values = {"l6.checkpoint": "mini", "l6.model": "l6", "l6.n_layers": 3, "bootstrap.level": 0.95}
    numbers._flip_set(values, "l6.flip", FLIPS)
    return Recorder(values, {"models": {"l6": {"flips": FLIPS}}, "bootstrap": {"level": 0.95}})


def test_flip_top_heads_lists_the_passing_heads_then_more_by_uncorrected_p(flip_recorder):
    rows = cells(TABLES["flip_top_heads"](flip_recorder, "l6", more=1))
    assert rows == [["L1H1", "9 / 0", "4 / 0", "4 / 0", "2 / 2", "1.0e-02", "1.0e-02", "60.0%"],
                    ["L1H0", "5 / 1", "3 / 0", "3 / 0", "1 / 1", "5.0e-01", "5.0e-01", "50.0%"]]
    assert "l6.flip.null.alpha.head.L1H1.opposes" in flip_recorder.cited and "l6.flip.mirrored.alpha.head.L1H0.follows" in flip_recorder.cited


def test_flip_top_heads_orders_by_uncorrected_p_where_correction_caps_it():
    """Corrected p's all capped at 1: the order is the uncorrected p's (L2H0, then L1H0),
    not the tie rule's (most follows)."""
    flips = _set(FLIP_PAIRS, _heads([5, 0, 4], [4, 0, 0], [1.0, 1.0, 1.0], p_value=[0.5, 1.0, 0.0625]))
    values = {"l6.checkpoint": "mini", "l6.model": "l6", "l6.n_layers": 3, "bootstrap.level": 0.95}
    numbers._flip_set(values, "l6.flip", flips | {"orders": {o: flips for o in ("original", "mirrored")}, "null": flips})
    r = Recorder(values, {"models": {"l6": {"flips": flips}}, "bootstrap": {"level": 0.95}})
    assert [row[0] for row in cells(TABLES["flip_top_heads"](r, "l6", more=2))] == ["L2H0", "L1H0"]


def test_flips_shows_each_pair_and_each_null_pair_by_its_frame(flip_recorder):
    rows = cells(TABLES["flips"](flip_recorder))
    assert [row[:2] + row[3:] for row in rows] == [["1", "as written", "heavy", "tile → hammer", "2"],
                                                   ["2", "mirrored", "heavy", "tile → hammer", "1"]]
    null = cells(TABLES["flips"](flip_recorder, pairs="null"))
    assert null == [["1", "as written", "1", "raining / snowing", "tile → hammer", "0"],
                    ["2", "mirrored", "2", "raining / snowing", "tile → hammer", "3"]]
    assert "l6.flip.null.alpha.pair1.follows_reader" in flip_recorder.cited


def test_flip_sets_has_a_row_per_set_and_cites_each_number(flip_recorder):
    rows = cells(TABLES["flip_sets"](flip_recorder))
    assert [row[1] for row in rows] == ["both orders", "as first written", "mirrored", "null pairs"]
    assert rows[0][0] == "l6 (3 layers)" and rows[1][0] == ""
    assert rows[0][5:9] == ["1", "L1H1: 9 / 0", "5", "4"] and rows[3][5] == "0"
    assert {"l6.flip.null.alpha.heads.n_significant", "l6.flip.original.model_follows_hi"} <= set(flip_recorder.cited)


# -- every table, on the real results ---------------------------------------------------------------

@pytest.fixture(scope="module")
def real(session_results):
    results, _ = session_results
    return Renderer(SOURCE, results, lambda chart_id: {})


def test_every_table_renders_over_the_real_results_and_cites_only_real_numbers(real):
    models = list(real.results["models"])
    for name, table in TABLES.items():
        measured = [m for m in models if name != "calibration_replication"
                    or "replication" in real.results["models"][m]["calibration"]["sets"]]   # one model is replicated
        args = [{"model": m} for m in measured] if "model" in table.__code__.co_varnames[:table.__code__.co_argcount] else [{}]
        for kwargs in args:
            call = ", ".join(f'{k}="{v}"' for k, v in kwargs.items())
            out = real.render("evidence/x.md", f'{{{{ table("{name}"{", " + call if call else ""}) }}}}')
            assert out.text.count("|") > 4, name
            assert out.citations and all(c.key in real.numbers for c in out.citations), name
    with pytest.raises(Exception, match=r"x\.md:1: .*'mpnet' was not measured on the replication corpus "
                                        r"\(study\.yml's replication block measures l6\)"):
        real.render("evidence/x.md", '{{ table("calibration_replication", model="mpnet") }}')


# -- the second review's tables: sensitivity, near-ties, rollout's lazy guesses ----------------------

def _variant(id_, choice, value="", heads=()):
    return {"id": id_, "choice": choice, "value": value, "heads": list(heads)}


SENSITIVITY = [_variant("registered", "registered"), _variant("positional_1", "positional_threshold", "1"),
               _variant("ties_0", "tie_tolerance", "0"), _variant("rule_largest_content_mass", "head_rule", "largest_content_mass"),
               _variant("rule_one_head_for_all", "head_rule", "one_head_for_all", (1, 11)),
               _variant("punct_as_sink", "punctuation_as_sink", "yes")]


def _sensitivity_values():
    values = {"positional_threshold": 0.8, "tie_tolerance": 1e-3, "l6.sens.positional_1.value": 1.0,
              "l6.sens.ties_0.value": 0.0, "l6.sens.rule_one_head_for_all.layer": 1, "l6.sens.rule_one_head_for_all.head": 11}
    for k, v in enumerate(SENSITIVITY):
        p = f"l6.sens.{v['id']}"
        values |= {f"{p}.alpha.median_sink": 0.2 + k / 100, f"{p}.value_norm.median_sink": 0.02, f"{p}.value_norm.above_50_share": 0.01 * k,
                   f"{p}.value_norm.rows_above": 10 * k, f"{p}.output_norm.rows_above": 10 * k + 1, f"{p}.adopted": k == 3,
                   f"{p}.value_norm.rows_above_share": k / 100, f"{p}.output_norm.rows_above_share": k / 100 + 0.001,
                   f"{p}.survivors": 0 if k == 3 else 5, f"{p}.survivors_median_cls_ratio": 0.5,
                   f"{p}.survivors_cls_above_half": 0.4}
    return values


def _sensitivity_recorder(variants=SENSITIVITY):
    return Recorder(_sensitivity_values(), {"stop_rule": {"lenses": ["value_norm", "output_norm"]},
                                            "models": {"l6": {"sensitivity": variants}}})


def test_sensitivity_names_each_choice_with_its_cited_value_and_the_verdict():
    r = _sensitivity_recorder()
    rows = cells(TABLES["sensitivity"](r, "l6"))
    assert [row[0] for row in rows] == [
        "**registered**: positional above 80%, ties within 0.001, strongest arrow",
        "positional threshold 100% (no head excluded)", "tie tolerance 0.000 (exact ties only)",
        "head rule: the most content (the least sink)", "head rule: one head for every word (under ‖α v‖: L1H11)",
        "punctuation counted as sink"]
    assert rows[3][1:] == ["23.0%", "2.0%", "3.0%", "3.0%", "3.1%", "yes"] and rows[0][-1] == "no"
    assert {"l6.sens.positional_1.value", "l6.sens.rule_one_head_for_all.head", "tie_tolerance"} <= set(r.cited)
    survivors = cells(TABLES["sensitivity_survivors"](r, "l6"))
    assert survivors[3][1:] == ["3.0%", "—", "—"] and survivors[0][1:] == ["0.0%", "0.50×", "40%"]


def test_an_unknown_sensitivity_choice_is_named():
    r = _sensitivity_recorder([_variant("new_idea", "something_else", "x")])
    with pytest.raises(ValueError, match="'new_idea' has no words"):
        TABLES["sensitivity"](r, "l6")


def test_near_ties_per_model_and_lens():
    values = {"tie_tolerance": 1e-3, "l6.checkpoint": "mini", "l6.n_layers": 6}
    for k, lens in enumerate(LENSES):
        p = f"l6.{lens}.near_ties"
        values |= {f"{p}.n_rows": 100, f"{p}.below_tolerance": 10 + k, f"{p}.below_tolerance_share": (10 + k) / 100,
                   f"{p}.below_tenth": k, f"{p}.below_tenth_share": k / 100}
    rows = cells(TABLES["near_ties"](Recorder(values, {"models": {"l6": {}}})))
    assert rows[1][1:] == ["‖α v‖", "100", "11.0%", "1.0%"]
    assert len(rows) == len(LENSES)


def _rollout_values(specific_lo):
    values = {"l6.checkpoint": "mini", "l6.n_layers": 6, "l6.rollout.chance_agreement": 0.05,
              "l6.rollout.best_baseline": "next_word"}
    for k, name in enumerate(["agrees_with_instrument", "baseline_last_punct", "baseline_other_word", "baseline_sentence_mean",
                              "baseline_next_word", "baseline_previous_word", "instrument_top_adjacent"]):
        values |= {f"l6.rollout.{name}": 0.1 + k / 100, f"l6.rollout.{name}_lo": 0.05, f"l6.rollout.{name}_hi": 0.2}
    for name in ("word_specific", "beyond_sentence_guesses"):
        values |= {f"l6.rollout.{name}": 0.0, f"l6.rollout.{name}_lo": specific_lo, f"l6.rollout.{name}_hi": 0.0}
    return values


def test_rollout_baselines_one_row_per_guess_one_column_per_model():
    r = Recorder(_rollout_values(0.0), {"models": {"l6": {}}, "bootstrap": {"level": 0.95}})
    rows = cells(TABLES["rollout_baselines"](r))
    assert [row[0] for row in rows] == [
        "The word's own rollout row", "Guess: the sentence's last punctuation mark", "Guess: another word's rollout row",
        "Guess: the sentence's mean rollout row", "Guess: the next word", "Guess: the previous word",
        "A word drawn at random", "The best guess", "Own row minus the best guess",
        "Own row minus the best sentence-wide guess (the first three)",
        "(Not a guess) the instrument's top word is next to the word, either side"]
    assert [row[1] for row in rows] == ["10.0%", "11.0%", "12.0%", "13.0%", "14.0%", "15.0%", "5.0%", "the next word",
                                        "0.0 pp", "0.0 pp", "16.0%"]
    assert "l6.rollout.best_baseline" in r.cited         # the best guess's name is locked like a number
    with_ci = cells(TABLES["rollout_baselines"](Recorder(_rollout_values(-0.01), r.results), intervals=True))
    assert with_ci[0][1:] == ["10.0%", "5.0–20.0%"] and with_ci[6][2] == with_ci[7][2] == "—"
    assert with_ci[8][2] == "-1.0 to 0.0 pp"            # a negative bound: "to", not a dash that reads as a minus
    # A paired difference of exactly zero is a result: its interval is printed, not "none seen".
    assert cells(TABLES["rollout_baselines"](Recorder(_rollout_values(0.0), r.results), intervals=True))[9][2] == "0.0–0.0 pp"


def test_ratios_by_layer_count_the_heads_that_hardly_discount_cls():
    values = {"l6.n_layers": 2, "l6.n_heads": 12}
    for layer in range(2):
        values |= {f"l6.layer{layer}.ratio.{t}.median": 0.1 * (layer + 1) for t in ("cls_v", "sep_v", "cls_f", "sep_f")}
        values[f"l6.layer{layer}.heads_cls_long"] = 3 * layer
    r = Recorder(values)
    table = TABLES["ratios_by_layer"](r, "l6")
    assert "above 0.50×" in table.splitlines()[0]
    assert cells(table) == [["0", "0.10×", "0.10×", "0.10×", "0.10×", "0 of 12"], ["1", "0.20×", "0.20×", "0.20×", "0.20×", "3 of 12"]]
    assert "l6.layer1.heads_cls_long" in r.cited


def test_a_span_says_to_when_a_bound_is_negative():
    assert span("23.3%", "29.2%") == "23.3–29.2%"
    assert span("-24.4 pp", "-19.2 pp") == "-24.4 to -19.2 pp" and span("-0.5×", "1.2×") == "-0.5 to 1.2×"
