"""The study's key schema: the flat namespace of numbers a page can cite.

Keys read like paths: `l6.alpha.median_sink` (held-out half), `l6.alpha.median_sink_lo`
and `_hi` (its interval), `l6.fit.alpha.median_sink`, `l6.layer2.value_norm.above_50`,
`l6.ratio.cls_v.median`, `l3.row.s4.w2.alpha.sink_share`. `flatten` defines them all,
with the margin of the decision behind each (model/picks.py); the engine (livenumbers)
formats, cites, locks and gates them without knowing what they mean.

Every discrete key (a count, a pick, a verdict, a word) is *declared*: it has its own margin,
recorded by the measurement that decided it, or it is exact by construction, a count or
text of the inputs (the settings, the corpus, the models' sizes, the sample sizes: the
names in INPUT_COUNTS). The gate fails on a cited discrete key that is neither ("no margin
for ..."), so a new statistic cannot be published without its margin.
"""
from __future__ import annotations

import difflib
import re
from typing import Any

import numpy as np

from .. import picks, stats
from .keys import EXACT, Keys, inf_margin, note, put, with_step
from .verdict_keys import _calibration

# Last parts of keys that count the inputs, whatever they are measured on: how many sentences,
# rows (every word of a sentence is a row), pairs, heads, layers; what a sample's period is.
# Exact by construction: no float decision is behind them.
INPUT_COUNTS = frozenset({
    "n_rows", "n_rows_all", "n_sentences", "n_test_sentences", "n_fit_sentences", "n_downstream_sentences",
    "n_pairs", "n_heads", "family", "permutations", "n_multi_subword", "sentences_one_token_words",
    "weighted_n_rows", "ablation_sentences", "sentences", "zeroing_sentences", "n_ablation_sentences",
    "n_threshold_rows", "ablation_every", "value_zeroing_every", "n_zeroing_sentences", "oracle_sentences",
    "referent_a_named_first", "downstream_every", "row_columns", "n_readings",
})


class Numbers(dict):
    """The flat namespace: a dict of every key, except the displayed rows' (thousands of
    them per model), which are read off the results when a page asks for one."""

    _ROW = re.compile(r"^(\w+)\.row\.s(\d+)\.w(\d+)\.(\w+)\.(\w+)$")
    _ROW_FIELDS = ("word", "layer", "head", "sink_share", "sep_share", "punct_share", "content_mass",
                   "top_word", "top_weight", "alpha_head_sink", "predicted_sink",
                   # part 8 (model/truth/): the ground truth on each lens's head, the fixes' rows
                   "ablation_share", "sink_effect", "content_effect", "head_effect", "bound_ratio",
                   "ablation_share_without_word", "sink_share_other", "self_share", "strongest_layer",
                   "strongest_sink_share")

    def __init__(self, values: dict, results: dict, margins: dict | None = None):
        super().__init__(values)
        self._results = results
        self._rows: dict[str, dict[tuple[int, int], int]] = {}
        self.margins: dict[str, tuple[float, float]] = margins or {}   # key -> (margin, step) (model/picks.py)

    def margin(self, key: str) -> tuple[float, float] | None:
        """How near the decision behind `key` came to turning, relative (model/picks.py), and
        how far the value moves if it does: the smallest of the key's own margin, its row's
        (a displayed row's head choice, and its top word) and its model's shared margin
        (`l6.*`: the positional heads). None if no decision is behind it."""
        found = [self.margins.get(key), self.margins.get(key.split(".", 1)[0] + ".*")]
        m = self._ROW.match(key)
        if m and m.group(1) in self._results["models"]:
            r = self._row_index(m.group(1), int(m.group(2)), int(m.group(3)))
            rows = self._results["models"][m.group(1)]["rows"]
            on = "alpha" if m.group(5) == "alpha_head_sink" else m.group(4)   # read on alpha's head: its pick
            if r is not None and on in rows and "head_margin" in rows[on]:
                lens = rows[m.group(4)]
                found.append((inf_margin(rows[on]["head_margin"][r]), float("inf")))
                if m.group(5) == "top_word":
                    found.append((inf_margin(lens["top_margin"][r]), float("inf")))
        found = [f for f in found if f is not None and f[0] is not None]
        return min(found, key=lambda f: f[0]) if found else None

    def declared(self, key: str) -> bool:
        """Is the decision behind `key` recorded (its own margin, or exact by construction)?
        A displayed row's fields are (its head choice's margin)."""
        if key in self.margins or key.rsplit(".", 1)[-1] in INPUT_COUNTS:
            return True
        m = self._ROW.match(key)
        return bool(m and m.group(1) in self._results["models"]
                    and "head_margin" in self._results["models"][m.group(1)]["rows"].get(m.group(4), {}))

    def keys_for(self, pattern: str) -> list[str]:
        """A sentence's displayed-row keys, when the pattern names one (`l6.row.s8`,
        `l6.row.s8.w3`): the engine's finder lists them (they are not listed keys)."""
        m = re.match(r"^(\w+)\.row\.s(\d+)(?:\.w(\d+))?", pattern.strip())
        if not m or m.group(1) not in self._results["models"]:
            return []
        model, s = m.group(1), int(m.group(2))
        rows = self._results["models"][model]["rows"]
        words = [w for a, w in zip(rows["sentence"], rows["word_index"]) if a == s and (m.group(3) is None or w == int(m.group(3)))]
        lenses = [k for k, v in rows.items() if isinstance(v, dict)]
        keys = [f"{model}.row.s{s}.w{w}.{lens}.{name}" for w in words for lens in lenses for name in self._ROW_FIELDS]
        return [k for k in keys if k in self]

    def suggest(self, key: str) -> list[str]:
        """For a displayed row's key that does not exist, the closest that do (the engine's
        did-you-mean reads this before the listed keys)."""
        return _row_suggestions(self, key)

    def _row_index(self, model: str, s: int, w: int) -> int | None:
        rows = self._results["models"][model]["rows"]
        if model not in self._rows:
            self._rows[model] = {(a, b): r for r, (a, b) in enumerate(zip(rows["sentence"], rows["word_index"]))}
        return self._rows[model].get((s, w))

    def _row(self, key: str) -> Any:
        m = self._ROW.match(key)
        if not m or m.group(1) not in self._results["models"] or m.group(5) not in self._ROW_FIELDS:
            return _MISSING
        model, s, w, lens, name = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
        rows = self._results["models"][model]["rows"]
        r = self._row_index(model, s, w)
        if r is None or lens not in rows or (name != "word" and name not in rows[lens]):
            return _MISSING
        return rows["word"][r] if name == "word" else rows[lens][name][r]

    def __missing__(self, key: str) -> Any:
        value = self._row(key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and self._row(key) is not _MISSING)


_MISSING = object()


def flatten(results: dict) -> Numbers:
    # The inputs: the settings, the corpus, the libraries. Exact by construction.
    inputs = Keys({
        "n_sentences": len(results["sentences"]),
        "n_models": len(results["models"]),
        "stop_rule.threshold": results["stop_rule"]["threshold"],
        "stop_rule.max_rows_above": results["stop_rule"]["max_rows_above"],
        "positional_threshold": results["positional_threshold"],
        "tie_tolerance": results["tie_tolerance"],
    })
    put(inputs, "bootstrap", results["bootstrap"])
    put(inputs, "picks", results.get("picks", {}))
    put(inputs, "simulated_machine", results.get("simulated_machine", {}))   # study.yml's floors' grounds (issue 46)
    put(inputs, "kernel_paths", results.get("kernel_paths", {}))
    put(inputs, "calibration", results.get("calibration", {}))   # Part 9's settings (study.yml)
    put(inputs, "replication", results.get("replication", {}))   # ... and its replication's
    put(inputs, "replication.power", (results.get("replication") or {}).get("power", {}))
    put(inputs, "mean_ablation", results.get("mean_ablation", {}))   # Part 10's settings (study.yml)
    put(inputs, "fresh_corpus", results.get("fresh_corpus", {}))
    inputs["runtime.tolerance"] = results["runtime"]["tolerance"]
    put(inputs, "corpus", results["corpus"])
    for register, n in results["corpus"]["registers"].items():
        inputs[f"corpus.register.{register}"] = n
    for half, n in results["corpus"]["halves"].items():
        inputs[f"corpus.half.{half}"] = n
    for i, b in enumerate(results["corpus"]["length_histogram"]):
        put(inputs, f"corpus.length{i}", b)
    for name, version in results["provenance"]["libraries"].items():
        inputs[f"library.{name}"] = version
    for i, text in enumerate(results["sentences"]):
        inputs[f"sentence.{i}"] = text
    out = Keys(inputs)
    out.margins = {key: EXACT for key in inputs}
    for k, m in results["models"].items():
        _model(out, k, m, results["sentences"], results.get("picks", {}).get("tie_tolerance", 0.0))
    return Numbers(out, results, out.margins)


def _model(out: Keys, k: str, m: dict, sentences: list[str], tie_tolerance: float) -> None:
    L, nh = m["n_layers"], m["n_heads"]
    for name, margin_step in (m.get("margins") or {}).items():   # "*": every key of the model
        note(out, f"{k}.{name}", margin_step)
    described = {"n_layers": L, "n_heads": nh, "n_heads_total": L * nh, "n_sentences": m["n_sentences"],
                 "model": m["model"], "sha256": m["sha256"], "source": m["source"], "tokens_per_word": m["tokens_per_word"],
                 "checkpoint": m["checkpoint"], "package": m["package"], "d_model": m["d_model"],
                 **{f"n_{half}_sentences": len(idx) for half, idx in m["halves"].items()}}
    put(out, k, described | {"margins": {name: EXACT for name in described}})   # the model and its corpus, as given
    # Adopted if any stop-rule lens is: turned by the nearest of their verdicts.
    adopted = min((picks.verdict_margin(v["rows_above"], v["max_rows_above"], inf_margin(v.get("margin"))) for v in m["verdicts"]),
                  default=picks.NO_MARGIN)
    put(out, k, {"adopted": m["adopted"], "margins": {"adopted": (adopted, 1.0)}})
    if m.get("scale"):   # the cost per sentence, and 10^6 sentences on paper (the colophon): arithmetic on the inputs
        put(out, f"{k}.scale", m["scale"] | {"margins": {n: EXACT for n in m["scale"]}})
        put(out, f"{k}.scale.million", m["scale"]["million"] | {"margins": {n: EXACT for n in m["scale"]["million"]}})
    for lens, s in m["summary"].items():
        p = f"{k}.{lens}"
        put(out, p, s["stats"])
        put(out, p, {key: v for key, v in s.items() if key not in ("stats", "layer_picks", "above_50_heads", "worst")})
        put(out, f"{p}.worst", s["worst"])
        out[f"{p}.worst_sentence_text"] = sentences[s["stats"]["worst_sentence"]]
        note(out, f"{p}.worst_sentence_text", getattr(out, "margins", {}).get(f"{p}.worst_sentence"))
        out[f"{p}.n_positional"] = len(m["positional_heads"][lens])
        note(out, f"{p}.n_positional", (inf_margin(((m.get("margins") or {}).get("*") or [None])[0]), 1.0))
        held_out = m["positional_heads_held_out"][lens]
        out[f"{p}.n_positional_held_out"] = len(held_out)
        out[f"{p}.positional_same_either_half"] = sorted(held_out) == sorted(m["positional_heads"][lens])
        total = max(1, sum(s["layer_picks"]))
        for layer, n in enumerate(s["layer_picks"]):
            out[f"{p}.picks.layer{layer}"] = n
            out[f"{p}.picks.layer{layer}_share"] = n / total
            note(out, f"{p}.picks.layer{layer}_share", with_step(getattr(out, "margins", {}).get(f"{p}.picks.layer{layer}"), 1.0 / total))
        for name in ("heavy", "punct", "sink"):  # the heads holding most rows above 90 % sink, above half punctuation, above half sink
            for i, (layer, head, n) in enumerate(s[f"{name}_heads"][:3]):
                put(out, f"{p}.{name}_head{i}", {"layer": layer, "head": head, "rows": n})
        for i, (layer, head, n) in enumerate(s.get("above_50_heads") or []):
            put(out, f"{p}.above_50_head{i}", {"layer": layer, "head": head, "rows": n})
        out[f"{p}.n_above_50_heads"] = len(s.get("above_50_heads") or [])
    for half, per_lens in m["by_half"].items():
        for lens, st in per_lens.items():
            put(out, f"{k}.{half}.{lens}", st)
    for ls in m["per_layer"]:
        put(out, f"{k}.layer{ls['layer']}.{ls['lens']}", ls["stats"])
    for r in m["ratios"]:
        where = k if r["layer"] is None else f"{k}.layer{r['layer']}"
        put(out, f"{where}.ratio.{r['token']}_{r['vector']}", {key: v for key, v in r.items() if key not in ("token", "vector", "layer")})
    for name, per_layer in m["head_ratios"].items():
        for layer, heads in enumerate(per_layer):
            for head, v in enumerate(heads):
                out[f"{k}.headratio.l{layer}h{head}.{name}"] = v
    # Heads that hardly discount [CLS], and where each ratio is largest (model/stats/norms.py)
    long_cls = stats.long_heads(m["head_ratios"]["cls_v"], m["ratios"])
    out[f"{k}.heads_cls_long"] = long_cls["heads"]
    note(out, f"{k}.heads_cls_long", (long_cls["margins"]["heads"], 1.0))
    for layer, n in enumerate(long_cls["per_layer"]):
        out[f"{k}.layer{layer}.heads_cls_long"] = n
        note(out, f"{k}.layer{layer}.heads_cls_long", (long_cls["margins"]["per_layer"][layer], 1.0))
    for i, x in enumerate(long_cls["layers"]):
        put(out, f"{k}.heads_cls_long_layer{i}", x)
        for name in ("layer", "heads"):
            note(out, f"{k}.heads_cls_long_layer{i}.{name}", (long_cls["margins"]["layers"], float("inf")))
    for name, x in stats.longest_layers(m["ratios"], tie_tolerance).items():
        put(out, f"{k}.ratio.{name}.longest_layer", x)
        note(out, f"{k}.ratio.{name}.longest_layer.layer", (x["margin"], float("inf")))
    for lens, nt in m["near_ties"].items():
        put(out, f"{k}.{lens}.near_ties", nt)
    for v in m["sensitivity"]:
        p = f"{k}.sens.{v['id']}"
        put(out, p, {name: v[name] for name in ("adopted", "survivors", "survivors_median_cls_ratio",
                                                 "survivors_cls_above_half")})
        if v["choice"] in ("positional_threshold", "tie_tolerance"):  # the alternative's value, as a number
            out[f"{p}.value"] = float(v["value"])
        for name, margin_step in (v.get("margins") or {}).items():
            note(out, f"{p}.{name}", margin_step)
        if v["heads"]:                                                # one head for every word: which
            out[f"{p}.layer"], out[f"{p}.head"] = v["heads"]
        for field in ("median_sink", "above_50_share", "rows_above", "rows_above_share"):
            for lens, x in v[field].items():
                out[f"{p}.{lens}.{field}"] = x
    for v in m["verdicts"]:
        put(out, f"{k}.verdict.{v['lens']}", {"rows_above": v["rows_above"], "n_rows": v["n_rows"],
                                               "share_above": v["rows_above"] / v["n_rows"], "adopted": v["adopted"],
                                               "margins": {"rows_above": (v.get("margin"), 1.0),
                                                           "share_above": (v.get("margin"), 1.0 / v["n_rows"]),
                                                           "adopted": (picks.verdict_margin(
                                                               v["rows_above"], v["max_rows_above"],
                                                               inf_margin(v.get("margin"))), 1.0)}})
    for i, a in enumerate(m["anchors"]):
        put(out, f"{k}.anchor{i}", a | {"margins": {f: (a.get("margin"), float("inf")) for f in ("layer", "head")}})
    for ex in m["examples"]:
        fields = ("sentence", "word_index", "word", "layer", "head")
        put(out, f"{k}.example.{ex['name']}", ex | {"margins": {f: (ex.get("margin"), float("inf")) for f in fields}})
    if m["checks"]:
        put(out, f"{k}.check", m["checks"])
    put(out, f"{k}.rollout", m["rollout"])
    _flip_set(out, f"{k}.flip", m["flips"])
    for lens, x in (m["flips"].get("passing_on_null") or {}).items():   # the heads that pass, on the null pairs
        put(out, f"{k}.flip.passing_on_null.{lens}", x)
    for name, mutant in m.get("mutant", {}).items():  # deliberately wrong variants (model/mutants.py)
        put(out, f"{k}.mutant.{name}", mutant)
    _truth(out, k, m.get("ground_truth"))
    _calibration(out, k, m.get("calibration"))


def _truth(out: dict, k: str, gt: dict | None) -> None:
    """Part 8 (model/truth/): `l6.truth.alpha.median_share` (the ablation ground truth on
    the head a lens opens), `l6.fix.alti.rows_above` (a later fix as a lens),
    `l6.track.alti.spearman` (how it tracks the ground truth; `l6.track.position.auc`, a
    lazy baseline), `l6.idle.value_norm.*`, `l6.truth.harmful_rows.*` (what the harmful rows
    are) and `l6.truth.agreement.*` (reference against oracle)."""
    if not gt:
        return
    put(out, f"{k}.truth", gt)
    for group, prefix in (("ablation", "truth"), ("fixes", "fix"), ("tracking", "track"), ("idle", "idle")):
        for name, stats in gt[group].items():
            put(out, f"{k}.{prefix}.{name}", stats)
    if gt.get("agreement"):
        put(out, f"{k}.truth.agreement", gt["agreement"])
    if gt.get("harmful_rows"):   # what the harmful rows are (added after the sceptical reading)
        put(out, f"{k}.truth.harmful_rows", gt["harmful_rows"])
    for name, yardstick in gt.get("yardsticks", {}).items():   # `l6.truth.yardstick.alpha_quartile.harmful`
        put(out, f"{k}.truth.yardstick.{name}", yardstick)


# The sets of flip pairs analysed, named by the part of their keys after "flip" ("" for every
# flip pair, both orders: the registered analysis), and how pages and charts call them.
FLIP_SETS = {"": "flip pairs, both orders", "original": "flip pairs as first written", "mirrored": "flip pairs mirrored",
             "null": "null pairs, both orders", "null.original": "null pairs as first written",
             "null.mirrored": "null pairs mirrored"}
HEAD_FIELDS = ("follows", "opposes", "p_value", "p_corrected", "picks_reader")


def flip_key(model: str, name: str) -> str:
    """The key prefix of one set of a model's flip pairs: flip_key("l6", "null") == "l6.flip.null"."""
    return f"{model}.flip" + (f".{name}" if name else "")


def flip_set(flips: dict, name: str) -> dict:
    """One set of a model's flip results (its `flips`) by its FLIP_SETS name."""
    for part in filter(None, name.split(".")):
        flips = flips["null"] if part == "null" else flips["orders"][part]
    return flips


def _flip_set(out: dict, p: str, s: dict) -> None:
    """A set of flip pairs: `l6.flip.alpha.toward_share`, its per-head tests
    (`l6.flip.alpha.heads.best`; under α, each head's: `l6.flip.alpha.head.L3H5.follows`), its
    pairs (`l6.flip.alpha.pair0.changed`, and as text `l6.flip.pair0.sentence_a`, or the first
    mirrored pair's `l6.flip.mirrored.pair0.sentence_a`), the same
    within each order (`l6.flip.mirrored.alpha...`) and for the null set (`l6.flip.null.alpha...`,
    `l6.flip.null.original.alpha...`)."""
    put(out, p, s)
    for lens, fl in s["lenses"].items():
        put(out, f"{p}.{lens}", fl)
        h = fl.get("heads")
        if h:
            put(out, f"{p}.{lens}.heads", h)
        if h and lens == "alpha":  # every head's counts, under α only: the pages cite no other lens's
            for i, (layer, head) in enumerate(zip(h["layer"], h["head"])):
                for name in HEAD_FIELDS:
                    out[f"{p}.{lens}.head.L{layer}H{head}.{name}"] = h[name][i]
                    per_head = (h.get("margins") or {}).get("per_head")
                    note(out, f"{p}.{lens}.head.L{layer}H{head}.{name}", (per_head[i], 1.0) if per_head else None)
        for i, pair in enumerate(fl["pairs"]):
            put(out, f"{p}.{lens}.pair{i}", pair)
    pairs = s["lenses"]["alpha"]["pairs"] if s["lenses"] else []
    for order in (None, *s.get("orders", {})):  # the pairs themselves, as text; within an order, numbered in it
        q = p if order is None else f"{p}.{order}"
        for i, pair in enumerate(x for x in pairs if order in (None, x["order"])):
            for j, side in enumerate("ab"):   # the pairs as written (flip_pairs.yml): exact
                out[f"{q}.pair{i}.sentence_{side}"] = pair["sentences"][j]
                out[f"{q}.pair{i}.referent_{side}"] = pair["referents"][j]
                for name in ("sentence", "referent"):
                    note(out, f"{q}.pair{i}.{name}_{side}", EXACT)
    for order, sub in s.get("orders", {}).items():
        _flip_set(out, f"{p}.{order}", sub)
    if s.get("null"):
        _flip_set(out, f"{p}.null", s["null"])


def _row_suggestions(numbers: "Numbers", key: str) -> list[str]:
    """For a displayed row's key (`l6.row.s8.w3.alpha.sink_share`): the same key with its
    model, lens or field replaced by the closest that exists, or the sentence's rows."""
    m = re.match(r"^(\w+)\.row\.s(\d+)\.w(\d+)\.(\w+)\.(\w+)$", key)
    if not m:
        return []
    model, s, w, lens, name = m.groups()
    results = numbers._results
    fix = lambda value, choices: (difflib.get_close_matches(value, choices, n=1, cutoff=0.5) or [value])[0]
    model = fix(model, list(results["models"]))
    rows = results["models"].get(model, {}).get("rows", {})
    lens = fix(lens, [k for k, v in rows.items() if isinstance(v, dict)])
    name = fix(name, list(Numbers._ROW_FIELDS))
    guess = f"{model}.row.s{s}.w{w}.{lens}.{name}"
    if guess in numbers:
        return [guess]
    words = [b for a, b in zip(rows.get("sentence", []), rows.get("word_index", [])) if a == int(s)]
    return [f"{model}.row.s{s}.w{b}.{lens}.{name}" for b in words[:5]]


