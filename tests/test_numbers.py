"""The numbers pages cite: formats and how far a number may move before what a reader sees
could change (livenumbers/formats.py), and the study's keys (model/site/numbers.py)."""
from __future__ import annotations

import html
import re

import pytest

from livenumbers import formats
from livenumbers.formats import NumberError
from model.site import numbers


# -- formats ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, fmt, shown", [
    (0.2656, "pct:1", "26.6%"),
    (0.2656, "pct:0", "27%"),
    (0.2656, "fixed:3", "0.266"),
    (1.2345, "ratio:2", "1.23×"),
    (0.000012345, "sci:1", "1.2e-05"),
    (0.000012345, "sci:1~1e-5", "1.2e-05"),
    (42, "int", "42"),
    (42.0, "int", "42"),
    (4, "ord", "4th"), (32, "ord", "32nd"), (1, "ord", "1st"), (3, "ord", "3rd"), (11, "ord", "11th"), (112, "ord", "112th"),
    ("MiniLM", "text", "MiniLM"),
    (0.5, "text", "0.5"),
    (True, "yesno", "yes"),
    (False, "yesno", "no"),
    (1.7e-6, "below:1e-5", "1e-05"), (1352, "about:1", "about 1350"), (1350, "about:2", "about 1400"),
])
def test_each_format(value, fmt, shown):
    assert formats.format_value("k", value, fmt) == shown


@pytest.mark.parametrize("fmt", ["percent", "pct", "pct:x", "pct:10", "int:1", "fixed:2~", "sci:1~big", "~1e-5", "",
                                 "below:0", "below:", "below:1e-5~1"])
def test_a_bad_format_says_which_formats_exist(fmt):
    with pytest.raises(NumberError, match=rf"bad format {fmt!r}: use pct:N, pp:N, fixed:N, ratio:N, sci:N"):
        formats.parse_format(fmt)


def test_formats_that_would_hide_something_are_errors():
    with pytest.raises(NumberError, match=r"'k' = 0.5 is not a whole number; format 'int' would hide that"):
        formats.format_value("k", 0.5, "int")
    with pytest.raises(NumberError, match=r"'k' = 2.5 is not a whole number; format 'ord' would hide that"):
        formats.format_value("k", 2.5, "ord")
    with pytest.raises(NumberError, match=r"'k' is text \('MiniLM'\); cite it with format 'text'"):
        formats.format_value("k", "MiniLM", "pct:1")
    with pytest.raises(NumberError, match=r"'k' = 2e-05 is not below its bound 1e-05 \(format 'below:1e-5'\)"):
        formats.format_value("k", 2e-5, "below:1e-5")


def test_default_formats():
    assert [formats.default_format(v) for v in ("a", True, 3, 0.5)] == ["text", "yesno", "int", "fixed:3"]


# -- tolerances ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, value, tolerance", [
    ("pct:1", 0.2656, 0.0005),           # half of 0.1 %
    ("pct:0", 0.2656, 0.005),
    ("fixed:3", 12.0, 0.0005),
    ("ratio:2", 1.23, 0.005),
    ("sci:1", 1.2e-6, 0.5e-7),           # 1.2e-06: the last printed unit is 1e-07
    ("sci:1", 9.9e-6, 0.5e-7),           # 9.9e-06: the same unit, whatever the leading digit
    ("sci:2", 3000.0, 5.0),              # 3.00e+03: the last unit is 10
    ("sci:1", 0.0, 0.0),
    ("int", 7, 0.0),
    ("text", "a", 0.0),
    ("yesno", True, 0.0),
    ("sci:1~1e-5", 3.0e-6, 1e-5),        # noise: locked only to within the tolerance given
    ("pct:1~0.01", 0.2, 0.01),
    ("int~2", 7, 2.0),
])
def test_tolerance_is_half_the_last_printed_unit(fmt, value, tolerance):
    assert formats.tolerance(fmt, value) == pytest.approx(tolerance, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("fmt, value", [("pct:1", 0.2656), ("fixed:2", 3.14159), ("ratio:2", 0.845),
                                        ("sci:1", 5.55e-6), ("sci:2", 98765.0)])
def test_a_move_within_tolerance_changes_the_printed_value_by_one_unit_at_most(fmt, value):
    tol = formats.tolerance(fmt, value)
    unit = 10 ** -int(fmt.split(":")[1])

    def printed(v):  # "26.6%" -> (26.6, ""), "5.5e-06" -> (5.5, "-06")
        mantissa, _, exponent = formats.format_value("k", v, fmt).rstrip("%×").partition("e")
        return float(mantissa), exponent

    for moved in (value - 0.99 * tol, value + 0.99 * tol):
        assert printed(moved)[1] == printed(value)[1]
        assert abs(printed(moved)[0] - printed(value)[0]) <= unit + 1e-12, (moved, printed(moved), printed(value))


# -- keys -----------------------------------------------------------------------------------------

ROWS = {"models": {"l6": {"rows": {
    "sentence": [0, 0, 4], "word_index": [1, 2, 2], "word": ["cat", "sat", "ran"],
    "alpha": {"sink_share": [0.1, 0.2, 0.3], "layer": [0, 1, 2]},
    "value_norm": {"sink_share": [0.4, 0.5, 0.6], "predicted_sink": [0.41, 0.52, 0.63]},
}}}}


def test_row_keys_are_read_off_the_results_on_demand():
    n = numbers.Numbers({"l6.alpha.median_sink": 0.2}, ROWS)
    assert n["l6.row.s4.w2.alpha.sink_share"] == 0.3
    assert n["l6.row.s0.w2.value_norm.predicted_sink"] == 0.52
    assert n["l6.row.s0.w1.alpha.word"] == "cat"
    assert "l6.row.s0.w1.alpha.layer" in n and n["l6.row.s0.w1.alpha.layer"] == 0
    assert len(n) == 1                                         # rows are not stored in the dict
    for missing in ("l6.row.s1.w1.alpha.sink_share",           # no such row
                    "l6.row.s0.w1.output_norm.sink_share",     # no such lens in the results
                    "l6.row.s0.w1.alpha.predicted_sink",       # a field this lens does not have
                    "l6.row.s0.w1.alpha.secret",               # not a row field
                    "l3.row.s0.w1.alpha.sink_share"):          # no such model
        assert missing not in n
        with pytest.raises(KeyError):
            n[missing]


def test_an_unknown_key_suggests_the_closest_keys():
    n = numbers.Numbers({"l6.alpha.median_sink": 0.2, "l6.value_norm.median_sink": 0.1, "l6.n_layers": 6}, ROWS)
    with pytest.raises(NumberError, match=r"^unknown number 'l3.alpha.median_sink'; did you mean 'l6.alpha.median_sink', "
                                          r"'l6.value_norm.median_sink'\?$"):
        formats.lookup(n, "l3.alpha.median_sink")
    with pytest.raises(NumberError, match=r"^unknown number 'l6.alpha.median_snk'; did you mean 'l6.alpha.median_sink'"):
        formats.lookup(n, "l6.alpha.median_snk")
    with pytest.raises(NumberError, match=r"^unknown number 'nothing.like.it'$"):
        formats.lookup(n, "nothing.like.it")


@pytest.mark.parametrize("key, suggested", [
    ("l6.row.s0.w2.alpha.sink_shar", ["l6.row.s0.w2.alpha.sink_share"]),          # a field misspelt
    ("l6.row.s0.w2.alfa.sink_share", ["l6.row.s0.w2.alpha.sink_share"]),          # a lens
    ("l9.row.s4.w2.alpha.sink_share", ["l6.row.s4.w2.alpha.sink_share"]),         # a model
    ("l6.row.s0.w7.alpha.sink_share", ["l6.row.s0.w1.alpha.sink_share", "l6.row.s0.w2.alpha.sink_share"]),  # the sentence's rows
])
def test_a_misspelt_row_key_suggests_the_row_keys_that_exist(key, suggested):
    n = numbers.Numbers({}, ROWS)
    with pytest.raises(NumberError) as info:
        formats.lookup(n, key)
    assert str(info.value) == f"unknown number {key!r}; did you mean {', '.join(repr(k) for k in suggested)}?"


@pytest.mark.parametrize("fmt, suggested", [("percent", "pct:1"), ("pct", "pct:1"), ("pct:x", "pct:1"), ("fixd:2", "fixed:2"),
                                            ("integer", "int"), ("ratio:12", "ratio:1"), ("Pct:1", "pct:1")])
def test_a_bad_format_suggests_the_closest_format(fmt, suggested):
    with pytest.raises(NumberError, match=rf"; did you mean {suggested!r}\?$"):
        formats.parse_format(fmt)


def test_nested_is_the_flat_keys_as_a_tree():
    assert formats.nested({"a.b.c": 1, "a.b.d": 2, "e": 3}) == {"a": {"b": {"c": 1, "d": 2}}, "e": 3}


def test_the_real_results_flatten_to_the_documented_keys(session_results):
    results, _ = session_results
    n = numbers.flatten(results)
    l6 = results["models"]["l6"]
    s = l6["summary"]["alpha"]["stats"]
    assert n["l6.alpha.median_sink"] == s["median_sink"]
    assert (n["l6.alpha.median_sink_lo"], n["l6.alpha.median_sink_hi"]) == (s["median_sink_lo"], s["median_sink_hi"])
    assert n["l6.fit.alpha.median_sink"] == l6["by_half"]["fit"]["alpha"]["median_sink"]
    assert n["l6.layer2.value_norm.above_50"] == next(x["stats"]["above_50"] for x in l6["per_layer"]
                                                      if (x["layer"], x["lens"]) == (2, "value_norm"))
    assert n["l6.ratio.cls_v.median"] == next(r["median"] for r in l6["ratios"] if (r["token"], r["vector"], r["layer"]) == ("cls", "v", None))
    rows = results["models"]["l3"]["rows"]
    r = next(i for i, (a, b) in enumerate(zip(rows["sentence"], rows["word_index"])) if (a, b) == (4, 2))
    assert n["l3.row.s4.w2.alpha.sink_share"] == rows["alpha"]["sink_share"][r]
    assert n["n_sentences"] == len(results["sentences"]) and n["sentence.0"] == results["sentences"][0]
    assert n["l6.verdict.value_norm.share_above"] == pytest.approx(
        n["l6.verdict.value_norm.rows_above"] / n["l6.verdict.value_norm.n_rows"])
    for k, m in results["models"].items():                     # the positional heads, fitted on either half
        same = sorted(m["positional_heads_held_out"]["alpha"]) == sorted(m["positional_heads"]["alpha"])
        assert n[f"{k}.alpha.positional_same_either_half"] is same
        heads = m["summary"]["value_norm"]["sink_heads"]
        assert [n[f"{k}.value_norm.sink_head0.{f}"] for f in ("layer", "head", "rows")] == heads[0]
    f = results["models"]["mpnet"]["flips"]
    assert n["mpnet.flip.alpha.heads.n_significant"] == f["lenses"]["alpha"]["heads"]["n_significant"]
    assert n["mpnet.flip.null.original.alpha.toward_share"] == f["null"]["orders"]["original"]["lenses"]["alpha"]["toward_share"]
    h = f["orders"]["mirrored"]["lenses"]["alpha"]["heads"]
    i = h["layer"].index(7) + 4                                # L7H4: heads are listed layer by layer from layer 1
    assert n["mpnet.flip.mirrored.alpha.head.L7H4.follows"] == h["follows"][i] and h["head"][i] == 4
    assert n["mpnet.flip.null.pair0.sentence_a"] == f["null"]["lenses"]["alpha"]["pairs"][0]["sentences"][0]
    assert numbers.flip_set(f, "null.mirrored") is f["null"]["orders"]["mirrored"]
    tree = formats.nested(n)                                   # no key is both a number and a prefix
    assert tree["l6"]["alpha"]["median_sink"] == s["median_sink"]


# -- text in Markdown -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "<b>bold</b>", "[x](javascript:alert(1))", "*x* _y_", "x{ onclick=alert(1) }", "a | b", "`code`", "&amp;",
    "# heading", "1. list", "- item", "!image", "x~~y~~", "a\\b", "'q' \"q\"", "k: v = w",
])
def test_md_text_leaves_no_markup(text):
    out = formats.md_text(text)
    bare = re.sub(r"&#\d+;", "", out)                         # numeric character references aside,
    assert not set(bare) & set("<>&\"'`*_[](){}|#!~\\="), bare  # nothing HTML, Markdown or attr_list reads
    assert html.unescape(out) == text                          # a browser shows it as written
