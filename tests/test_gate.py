"""The drift gate (model/site/gate.py), in process, on copies of the small site (its own
pages and lock over the real results) and, once, of the real project."""
from __future__ import annotations

import json
import os
import struct
from types import SimpleNamespace

import pytest

from conftest import ROOT, use_small_corpus
from model import results as results_mod
from livenumbers import accepting, cache, files, gate, lock, printed
from model.site.source import study_settings
from livenumbers.markup import PageError

KEY = "l6.alpha.median_sink"


def settings(project) -> gate.Settings:
    return study_settings(project)


def edit_lock(project, edit) -> dict:
    path = project / "docs" / "numbers.lock.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=1))
    return data


def append(project, page: str, text: str) -> int:
    """Append `text` to a page; returns the line it starts on."""
    path = project / "docs" / page
    before = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
    path.write_text(before + text + "\n", encoding="utf-8")
    return before.count("\n") + 1


def test_the_working_tree_passes_the_gate(real_project):
    """The articles, their lock and the real results agree (the contract `make test` checks)."""
    report = gate.run(settings(real_project))
    assert report.ok, report.message(settings(real_project).lock)
    assert KEY in report.cited


def test_the_small_site_passes_the_gate(project):
    report = gate.run(settings(project))
    assert report.ok, report.message(settings(project).lock)
    assert sorted(report.rendered) == ["evidence.md", "index.md", "instrument.md"]
    assert list(report.notebook_cells) == ["notebook.ipynb"]
    assert report.cited[KEY] == {"index.md", "evidence.md"}
    assert report.cited["l3.alpha.median_sink"] == {"notebook.ipynb"}
    assert "sink_distribution/l6" in report.charts


def test_settings_find_the_cache_named_by_the_environment(project, tmp_path, monkeypatch):
    monkeypatch.setenv("LIVE_NUMBERS_CACHE", str(tmp_path / "elsewhere"))
    assert study_settings(project).cache_dir == tmp_path / "elsewhere"
    monkeypatch.setenv("LIVE_NUMBERS_CACHE", "relative")
    assert study_settings(project).cache_dir == project / "relative"
    monkeypatch.delenv("LIVE_NUMBERS_CACHE")
    s = study_settings(project)
    assert (s.cache_dir, s.source.study, s.lock) == (project / ".cache", project / "docs" / "study.yml",
                                              project / "docs" / "numbers.lock.json")


# -- what fails the gate ----------------------------------------------------------------------------

def test_a_moved_number_is_named_with_its_values_tolerance_and_pages(project):
    recorded = edit_lock(project, lambda d: d["numbers"][KEY].update(value=d["numbers"][KEY]["value"] + 0.01))["numbers"][KEY]
    report = gate.run(settings(project))
    assert not report.ok
    (drift,) = report.drifts
    assert (drift.key, drift.recorded, drift.tolerance, drift.pages) == (KEY, recorded["value"], 0.0005, ["evidence.md", "index.md"])
    assert drift.now == pytest.approx(recorded["value"] - 0.01)
    message = report.message(settings(project).lock)
    assert f"  {KEY}: recorded {recorded['value']!r}, now {drift.now!r} (tolerance 0.0005); cited by evidence.md, index.md" in message
    assert "accept them (python -m livenumbers accept)" in message


def test_a_word_picked_nearer_a_tie_than_the_floor_fails_with_its_margin(project, monkeypatch):
    """The worst row's word is a pick (model/picks.py): turned, it would print another word, so
    no printed form can hold on every machine; nearer a tie than study.yml's floor, it fails
    every build and accept, naming the key."""
    from model.site import numbers as schema

    key = "l6.alpha.worst_word"
    real = schema.flatten
    floor = gate.run(settings(project)).margin_floor   # study.yml's picks.margin_floor
    margin = floor / 1000

    def near_a_tie(results):
        out = real(results)
        out.margins[key] = (margin, float("inf"))
        return out

    monkeypatch.setattr(schema, "flatten", near_a_tie)
    report = gate.run(settings(project))
    assert not report.ok and [(f.key, f.margin) for f in report.fragile] == [(key, margin)]
    assert f"  {key}: margin {margin:.0e} < {floor:.0e}; cited by index.md" in report.message(settings(project).lock)
    assert accepting.accept(settings(project)).refused


def test_accept_records_each_picks_margin(project):
    numbers = json.loads((project / "docs" / "numbers.lock.json").read_text())["numbers"]
    assert 5e-5 <= numbers["l6.alpha.worst_word"]["margin"] < 1.0
    assert "margin" not in numbers["l3.n_layers"]          # no decision behind a model's size


def test_a_move_within_the_tolerance_is_not_a_drift(project):
    edit_lock(project, lambda d: d["numbers"][KEY].update(value=d["numbers"][KEY]["value"] + 0.0004))
    assert gate.run(settings(project)).ok


def test_drift_says_what_changed_in_the_provenance(project):
    def edit(d):
        d["numbers"][KEY]["value"] += 0.01
        d["provenance"]["libraries"]["numpy"] = "1.0.0"
    edit_lock(project, edit)
    report = gate.run(settings(project))
    assert [c for c in report.provenance_changes if c.startswith("libraries.numpy: 1.0.0 -> ")]
    assert "what changed since the lock was written:\n    libraries.numpy: 1.0.0 -> " in report.message(settings(project).lock)


def test_cited_but_unlocked_and_locked_but_uncited(project):
    edit_lock(project, lambda d: (d["numbers"].pop("l6.alpha.worst_sink"),
                                  d["numbers"].update({"l6.rollout.n_rows": {"value": 1, "tolerance": 0}})))
    report = gate.run(settings(project))
    assert (report.unlocked, report.uncited, report.ok) == (["l6.alpha.worst_sink"], ["l6.rollout.n_rows"], False)
    message = report.message(settings(project).lock)
    assert "1 cited number(s) are not in numbers.lock.json:\n  l6.alpha.worst_sink (cited by evidence.md, index.md)" in message
    assert "1 locked number(s) are cited by no page:\n  l6.rollout.n_rows" in message


def test_a_claim_that_stops_holding(project):
    line = append(project, "evidence.md", '{{ claim("l6.alpha.median_sink > 0.99") }}')
    report = gate.run(settings(project))
    assert not report.ok and report.drifts == [] and report.unlocked == []
    assert [(c.page, c.line, c.expr) for c in report.failed_claims] == [("evidence.md", line, "l6.alpha.median_sink > 0.99")]
    assert f"1 claim(s) no longer hold:\n  evidence.md:{line}: l6.alpha.median_sink > 0.99" in report.message(settings(project).lock)


def test_a_page_error_stops_the_gate_naming_page_and_line(project):
    line = append(project, "index.md", 'Oops {{ num("l6.alpha.no_such_number", "pct:1") }}.')
    with pytest.raises(PageError, match=rf"^index\.md:{line}: unknown number 'l6\.alpha\.no_such_number'"):
        gate.run(settings(project))


def test_every_problem_on_every_page_is_reported_at_once(project):
    """Several bad keys, a bad format, a misspelt table, chart and function, and a link to a
    row the instrument does not have, on three pages: one error lists them all, each with
    its page, its line and the closest names."""
    a = append(project, "index.md", 'The median {{ num("l6.alpha.median_snk", "pct:1") }} and {{ nmu("l6.n_layers") }}.')
    b = append(project, "evidence.md", '{{ table("lens_sumary", model="l6") }}\n\n{{ chart("sink_scater", model="l6") }}')
    c = append(project, "instrument.md", '{{ num("l6.n_layers", "integer") }} [row]({{ instrument("l6", 0, 99, "alpha") }})')
    nb = project / "docs" / "notebook.ipynb"
    data = json.loads(nb.read_text())
    data["cells"][0]["source"].append('\n\n{{ num("l3.alpha.medain_sink") }}')
    nb.write_text(json.dumps(data))
    with pytest.raises(PageError) as info:
        gate.run(settings(project))
    problems = [str(p) for p in info.value.problems]
    assert problems == [
        f"evidence.md:{b}: unknown table 'lens_sumary'; did you mean 'lens_summary', 'flip_summary'? (tables: "
        + problems[0].split("(tables: ")[1],
        f"evidence.md:{b + 2}: unknown chart 'sink_scater/l6'; did you mean 'sink_scatter', 'ablation_scatter'? (charts: "
        + problems[1].split("(charts: ")[1],
        f"index.md:{a}: unknown number 'l6.alpha.median_snk'; did you mean 'l6.alpha.median_sink', "
        "'l6.alpha.median_sink_lo', 'l6.alpha.median_sink_hi'?",
        f"index.md:{a}: unknown function 'nmu'; did you mean 'num'?",
        f"instrument.md:{c}: bad format 'integer': use pct:N, pp:N, fixed:N, ratio:N, sci:N (N a digit), int, ord, text or yesno, "
        "optionally followed by ~TOLERANCE (sci:1~1e-5), or below:BOUND (below:1e-5); did you mean 'int'?",
        f"instrument.md:{c}: instrument link #l6/0/99/alpha: sentence 0 has no displayed row for word '99' on l6 "
        + problems[5].split(" on l6 ")[1],
        "notebook.ipynb:5: unknown number 'l3.alpha.medain_sink'; did you mean 'l3.alpha.median_sink', "
        + problems[6].split("did you mean 'l3.alpha.median_sink', ")[1],
    ]
    assert str(info.value).startswith("7 problems on 4 page(s); fix them all, then build again:\n  evidence.md:")
    assert problems[6].endswith("(markdown cell 0)")


def test_an_error_in_a_notebook_cell_names_notebook_line_and_cell(project):
    path = project / "docs" / "notebook.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"].append('\n\n{{ num("l3.nope") }}')
    path.write_text(json.dumps(nb))
    with pytest.raises(PageError, match=r"^notebook\.ipynb:5: unknown number 'l3\.nope'.* \(markdown cell 0\)$"):
        gate.run(settings(project))


# -- the banner under `mkdocs serve` ---------------------------------------------------------------

def test_the_banner_names_what_moved_on_that_page_only(project):
    edit_lock(project, lambda d: d["numbers"]["l3.alpha.median_sink"].update(value="<moved>"))
    line = append(project, "evidence.md", '{{ claim("l6.n_layers < 0") }}')
    report = gate.run(settings(project))
    notebook = report.banner("notebook.ipynb")
    assert 'class="admonition danger drift-banner"' in notebook and "<code>l3.alpha.median_sink</code>" in notebook
    assert "recorded &#x27;&lt;moved&gt;&#x27;" in notebook and "<moved>" not in notebook
    assert f"claim no longer holds (line {line}): <code>l6.n_layers &lt; 0</code>" in report.banner("evidence.md")
    assert report.banner("index.md") == ""


# -- accept ---------------------------------------------------------------------------------------

def test_accept_rewrites_what_moved_and_keeps_rounding_noise(project):
    """A number that moved by more than a tenth of its tolerance is rewritten (the lock stays
    what today's code computes, never near the edge); one that moved by less keeps its
    recorded value (another CPU's rounding is no change)."""
    within, noise = "l6.alpha.worst_sink", f"{KEY}_hi"
    data = edit_lock(project, lambda d: (d["numbers"][KEY].update(value=0.5),
                                         d["numbers"][within].update(value=d["numbers"][within]["value"] + 0.0004),
                                         d["numbers"][noise].update(value=d["numbers"][noise]["value"] + 0.00002),
                                         d["numbers"].pop(f"{KEY}_lo"),
                                         d["numbers"].update({"l6.rollout.n_rows": {"value": 1, "tolerance": 0}})))
    diff = accepting.accept(settings(project), local=True).text.splitlines()   # a number added and one removed: no reason asked
    assert [line.split(":")[0] for line in diff] == [f"~ {KEY}", f"+ {KEY}_lo", f"~ {within}", "- l6.rollout.n_rows",
                                                     "1 number(s) moved within their tolerance by more than 0.1 of it and were rewritten (~ above); 1 moved by less (rounding noise) and kept their locked value",
                                                     "--local"]
    assert diff[0].startswith(f"~ {KEY}: 0.5 -> ") and diff[0].endswith("(tolerance 0.0005)")
    after = lock.read(settings(project).lock)
    assert after.numbers[noise].value == data["numbers"][noise]["value"]      # noise: the recorded value stays
    assert after.numbers[within].value != data["numbers"][within]["value"]    # a real move, within tolerance: rewritten
    assert gate.run(settings(project)).ok
    assert accepting.accept(settings(project)).text.startswith("0 number(s) moved within their tolerance")


def test_accept_writes_nothing_while_a_claim_fails_and_names_the_values_it_read(project):
    line = append(project, "index.md", '{{ claim("l6.alpha.median_sink > 0.99 and l6.n_layers == 6") }}'
                  '{{ num("l6.n_layers", "ord") }}')   # a new citation too: accept would have a change to write
    before = settings(project).lock.read_bytes()
    accepted = accepting.accept(settings(project))
    (claim,) = accepted.failed_claims
    value = gate.run(settings(project), with_charts=False).numbers["l6.alpha.median_sink"]
    assert accepted.refused and settings(project).lock.read_bytes() == before
    assert accepted.text.startswith("the lock was not written (it is unchanged)")
    assert (f"1 claim(s) do not hold (the lock cannot fix these; fix the prose or the cause):\n"
            f"  index.md:{line}: l6.alpha.median_sink > 0.99 and l6.n_layers == 6 "
            f"(l6.alpha.median_sink = {value!r}, l6.n_layers = 6)") in accepted.text
    assert "what accept would have written:\n  + l6.n_layers: 6" in accepted.text


def test_a_cited_count_over_floats_with_no_margin_fails_the_gate_naming_it(project, monkeypatch):
    """Margins by construction: a discrete number the source neither records a margin for nor
    declares exact (a count of inputs) cannot be published."""
    from model.site import numbers as schema

    real = schema.flatten

    def with_a_new_count(results):
        out = real(results)
        shares = results["models"]["l6"]["rows"]["alpha"]["sink_share"]
        dict.__setitem__(out, "l6.alpha.rows_above_third", sum(x > 1 / 3 for x in shares))   # no margin recorded
        return out

    monkeypatch.setattr(schema, "flatten", with_a_new_count)
    append(project, "index.md", '{{ num("l6.alpha.rows_above_third", "int") }}')
    report = gate.run(settings(project))
    assert report.undecided == {"l6.alpha.rows_above_third": ["index.md"]} and not report.ok
    assert "  no margin for l6.alpha.rows_above_third; cited by index.md" in report.message(settings(project).lock)
    before = settings(project).lock.read_bytes()
    assert accepting.accept(settings(project)).refused and settings(project).lock.read_bytes() == before


def test_a_changed_printed_text_fails_like_a_moved_number(project):
    """The lock holds what each citation prints: a text that differs fails the build, naming
    key, edition and format, both texts and the pages."""
    edit_lock(project, lambda d: d["numbers"][KEY]["printed"].update({"en pct:1": "99.9%"}))
    report = gate.run(settings(project))
    assert not report.ok and [(r.key, r.slot, r.recorded) for r in report.reprinted] == [(KEY, "en pct:1", "99.9%")]
    now = report.reprinted[0].now
    assert f"  {KEY} (en pct:1): printed '99.9%', now {now!r}; cited by evidence.md, index.md" in \
        report.message(settings(project).lock)


def test_a_number_another_machine_could_print_otherwise_prints_its_value_of_record(project):
    """A float nearer the edge between two printed values than the floor (relative) would print
    differently on a machine that rounds differently: accept records its format with its noise
    as a stated tolerance, and every build prints the lock's value, checking its own against it.
    A noise figure's bound too near the figure is refused."""
    report = gate.run(settings(project), with_charts=False)
    value, floor = report.numbers[KEY], report.numbers["picks.margin_floor"]
    # The fewest decimals whose printed edge the value sits nearer than the floor (relative):
    # another machine's rounding could print it otherwise.
    digits = next(d for d in range(3, 16) if printed.edge_distance(value, f"fixed:{d}") < floor * abs(value))
    fmt = f"fixed:{digits}"
    append(project, "index.md", f'{{{{ num("{KEY}", "{fmt}") }}}}')
    accepted = accepting.accept(settings(project))
    assert not accepted.refused, accepted.text
    entry = lock.read(settings(project).lock).numbers[KEY]
    (shown,) = entry.shown.values()
    assert list(entry.shown) == [fmt] and shown.startswith(f"{fmt}~") and entry.tolerance == float(shown.split("~")[1])
    assert entry.printed[f"en {shown}"] == f"{entry.value:.{digits}f}"
    other = value + 0.4 * entry.tolerance   # the lock as another machine wrote it
    edit_lock(project, lambda d: d["numbers"][KEY].update(value=other) or d["numbers"][KEY]["printed"].update(
        {f"en {shown}": f"{other:.{digits}f}"}))
    report = gate.run(settings(project))
    assert report.ok, report.message(settings(project).lock)
    assert f"{other:.{digits}f}" in report.rendered["index.md"]   # the value of record, printed
    # A bound under twice its figure: another machine's rounding could put the figure past it.
    figure = report.numbers["l6.check.oracle_max_abs_alpha"]
    append(project, "index.md", f'{{{{ num("l6.check.oracle_max_abs_alpha", "below:{1.5 * figure:.0e}") }}}}')
    before = settings(project).lock.read_bytes()
    refused = accepting.accept(settings(project))
    assert refused.refused and [u.key for u in refused.unsteady] == ["l6.check.oracle_max_abs_alpha"]
    assert "a bound's figure must sit below 1/2 of it" in refused.text and settings(project).lock.read_bytes() == before


class Killed(BaseException):
    """Stands for the Ctrl-C that interrupts `make accept`."""


def test_an_interrupted_accept_leaves_the_old_lock_whole(project, monkeypatch):
    edit_lock(project, lambda d: d["numbers"][KEY].update(value=0.5))
    path = settings(project).lock
    before = path.read_bytes()

    def replace(src, dst):
        raise Killed("interrupted before the rename")

    monkeypatch.setattr(files, "os", SimpleNamespace(fdopen=os.fdopen, replace=replace, chmod=os.chmod, umask=os.umask))
    with pytest.raises(Killed):
        accepting.accept(settings(project))
    assert path.read_bytes() == before and not list(path.parent.glob("*.tmp"))
    monkeypatch.undo()
    assert f"~ {KEY}: 0.5 -> " in accepting.accept(settings(project)).text


# -- the results and their cache -------------------------------------------------------------------

@pytest.fixture
def measure_calls(monkeypatch, session_results):
    """results.compute replaced by the real results (no model run), counting its calls."""
    calls = []

    def measure(study_path, run_checks=True):
        calls.append(study_path)
        return session_results[0], {"l6": ["{}"]}

    monkeypatch.setattr(results_mod, "compute", measure)
    monkeypatch.setattr(cache, "_MEMO", {})
    return calls


def test_the_results_are_read_from_the_cache(project, measure_calls):
    results, key = gate.load_results(settings(project))
    assert measure_calls == [] and key == gate.results_key(settings(project))
    assert results["sentences"][0] == (project / "docs" / "corpus.tsv").read_text().split("\n")[0].split("\t")[1]


@pytest.mark.parametrize("damage", ["edited payload", "truncated payload", "no views"])
def test_an_unusable_results_entry_is_measured_again(project, measure_calls, damage):
    s = settings(project)
    key = gate.results_key(s)
    payload = cache.entry_dir(s.cache_dir, "results", key) / cache.PAYLOAD
    if damage == "edited payload":
        payload.write_text(payload.read_text().replace('"median_sink":0.', '"median_sink":1.', 1))
    elif damage == "truncated payload":
        payload.write_text(payload.read_text()[:1000])
    else:
        cache.entry_dir(s.cache_dir, "files", key).rename(s.cache_dir / "files-gone")
    results, _ = gate.load_results(s)
    assert len(measure_calls) == 1
    cache._MEMO.clear()
    assert cache.read(s.cache_dir, "results", key) is not None and cache.read(s.cache_dir, "files", key) is not None
    gate.load_results(s)
    assert len(measure_calls) == 1                       # rewritten whole: read, not measured, next time


def test_results_of_another_code_version_are_not_used(project, monkeypatch):
    key = gate.results_key(settings(project))
    monkeypatch.setattr(results_mod, "code_version", lambda: "0" * 64)
    other = gate.results_key(settings(project))
    assert other != key and cache.read(settings(project).cache_dir, "results", other) is None


def test_a_flipped_byte_in_the_weights_is_a_drift_not_a_silent_pass(project, l6_folder, monkeypatch):
    """One bit of one weight of L6: its numbers move, L3's do not, and the gate says the
    weights' digest changed. On a small corpus, so that it measures in seconds."""
    use_small_corpus(project, models=[{"name": str(l6_folder), "key": "l6"}, {"name": "minilm-l3", "key": "l3"}])
    monkeypatch.setattr(cache, "_MEMO", {})
    assert not accepting.accept(settings(project), local=True).refused   # the small corpus's lock: nothing to tell readers
    assert gate.run(settings(project), with_charts=False).ok
    weights = l6_folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    (n,) = struct.unpack("<Q", raw[:8])
    at = 8 + n + json.loads(raw[8:8 + n])["embeddings.LayerNorm.weight"]["data_offsets"][0] + 3
    raw[at] ^= 0x01                                  # the first weight's exponent: a factor of 4
    weights.write_bytes(bytes(raw))
    report = gate.run(settings(project), with_charts=False)
    moved = [d.key for d in report.drifts]
    assert moved and all(k.startswith("l6.") for k in moved), moved
    assert [c for c in report.provenance_changes if c.startswith("models.l6.sha256: ")]
