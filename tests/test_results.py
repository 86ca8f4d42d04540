"""The results object (model/results.py): its provenance (what the cache key digests),
the corpus described from the data, and the shape of what `measure` returns."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from conftest import ROOT
from livenumbers.cache import code_digest
from model import results as results_mod
from model.study import Study


def hand_study(sentences: list[str], registers: list[str]) -> Study:
    return Study(Path("s.yml"), Path("c.tsv"), tuple(sentences), tuple(registers), (), None, 0.8, 0.0, None)


def test_corpus_description_on_paper():
    words = lambda n: " ".join(["w"] * n)
    st = hand_study([words(4), words(9), words(30), words(60)], ["news", "lists", "news", "news"])
    d = results_mod.corpus_description(st)
    assert (d["n_sentences"], d["length_min"], d["length_max"], d["length_median"], d["over_25_words"]) == (4, 4, 60, 19.5, 2)
    assert d["registers"] == {"lists": 1, "news": 3}
    assert [(b["from"], b["to"], b["sentences"]) for b in d["length_histogram"]] == [
        (1, 8, 1), (9, 18, 1), (19, 25, 0), (26, 40, 1), (41, 50, 0), (51, 60, 1)]
    assert sum(d["halves"].values()) == 4 and d["n_flip_pairs"] == 0


def test_the_length_histogram_of_a_corpus_of_short_sentences_has_no_backward_bin():
    st = hand_study(["One two three.", "A sentence of twelve words is not long at all, is it?"], ["a", "b"])
    bins = [(b["from"], b["to"], b["sentences"]) for b in results_mod.corpus_description(st)["length_histogram"]]
    assert all(lo <= hi for lo, hi, _ in bins), bins
    assert bins == [(1, 8, 1), (9, 12, 1)]


def test_provenance_names_everything_a_number_depends_on(study):
    p = results_mod.provenance(study)
    assert set(p) == {"study_sha256", "corpus_sha256", "flip_pairs_sha256", "confirmation_sha256", "replication_sha256",
                      "fresh_sha256",
                      "code_version", "libraries", "models"}
    assert set(p["libraries"]) == set(results_mod.LIBRARIES) | {"python"}
    assert {k: m["name"] for k, m in p["models"].items()} == {m.key: m.name for m in study.models}
    assert all(len(m["sha256"]) == 64 for m in p["models"].values())


def test_provenance_follows_the_study_files(tmp_path, study):
    for path in (study.path, study.corpus_path):
        shutil.copy(path, tmp_path / path.name)
    moved = dataclasses.replace(study, path=tmp_path / study.path.name, corpus_path=tmp_path / study.corpus_path.name)
    assert results_mod.provenance(moved) == results_mod.provenance(study)    # content, not place
    with (tmp_path / study.corpus_path.name).open("a", encoding="utf-8") as fh:
        fh.write("news\tOne more sentence.\n")
    changed = results_mod.provenance(moved)
    assert changed["corpus_sha256"] != results_mod.provenance(study)["corpus_sha256"]
    assert results_mod.provenance(dataclasses.replace(study, flip_pairs=study.flip_pairs[1:]))["flip_pairs_sha256"] \
        != results_mod.provenance(study)["flip_pairs_sha256"]
    assert results_mod.provenance(dataclasses.replace(study, null_pairs=study.null_pairs[1:]))["flip_pairs_sha256"] \
        != results_mod.provenance(study)["flip_pairs_sha256"]
    rep = study.calibration.replication   # Part 9's replication corpus: its bytes, wherever it is
    shutil.copy(rep.path, tmp_path / rep.path.name)
    elsewhere = dataclasses.replace(study, calibration=dataclasses.replace(
        study.calibration, replication=dataclasses.replace(rep, path=tmp_path / rep.path.name)))
    assert results_mod.provenance(elsewhere) == results_mod.provenance(study)
    with (tmp_path / rep.path.name).open("a", encoding="utf-8") as fh:
        fh.write("wordnet\tOne more sentence of six words.\n")
    assert results_mod.provenance(elsewhere)["replication_sha256"] != results_mod.provenance(study)["replication_sha256"]

    fresh = study.calibration.mean_ablation.fresh   # Part 10's fresh corpus: the same, by its bytes
    shutil.copy(fresh.path, tmp_path / fresh.path.name)
    ma = dataclasses.replace(study.calibration.mean_ablation,
                             fresh=dataclasses.replace(fresh, path=tmp_path / fresh.path.name))
    moved = dataclasses.replace(study, calibration=dataclasses.replace(study.calibration, mean_ablation=ma))
    assert results_mod.provenance(moved) == results_mod.provenance(study)
    with (tmp_path / fresh.path.name).open("a", encoding="utf-8") as fh:
        fh.write("python-list\tOne more sentence that nobody here wrote.\n")
    assert results_mod.provenance(moved)["fresh_sha256"] != results_mod.provenance(study)["fresh_sha256"]


def test_code_digest_follows_every_source_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    first = code_digest(tmp_path)
    (tmp_path / "notes.txt").write_text("still not code\n")
    assert code_digest(tmp_path) == first
    (tmp_path / "a.py").write_text("x = 2\n")
    top = code_digest(tmp_path)
    assert top != first
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 1\n")
    nested = code_digest(tmp_path)
    assert nested != top                                                 # a subfolder's source counts
    assert code_digest(tmp_path, leave_out=("sub",)) == top  # unless it is left out
    (tmp_path / "sub" / "b.py").rename(tmp_path / "b.py")                # the same bytes, another path
    assert code_digest(tmp_path) != nested


def test_the_code_version_covers_the_weights_package_and_not_the_site(tmp_path, monkeypatch):
    """model/weights/ loads every tensor: a change there is a change of measurement code.
    model/site/ is page-side code (livenumbers.gate.site_code): a change there measures
    nothing again, it renders the pages again; nor does one to the command line
    (model/__main__.py) or to `make measure-large` (model/large.py, which the study never
    imports)."""
    from livenumbers import gate
    from model.site.source import StudySource

    code = tmp_path / "model"
    shutil.copytree(ROOT / "model", code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(results_mod, "CODE_DIR", code)
    first = results_mod.code_version()
    assert first == code_digest(ROOT / "model", leave_out=("site", "__main__.py", "large.py"))
    with open(code / "weights" / "formats.py", "a") as fh:
        fh.write("# an edit\n")
    second = results_mod.code_version()
    assert second != first
    page_side = gate.site_code(StudySource("study.yml"))
    with open(code / "site" / "tables" / "sink.py", "a") as fh:
        fh.write("# an edit\n")
    with open(code / "__main__.py", "a") as fh:
        fh.write("# an edit\n")
    with open(code / "large.py", "a") as fh:
        fh.write("# an edit\n")
    assert results_mod.code_version() == second
    monkeypatch.setattr(StudySource, "code_dirs", (code / "site",))
    assert gate.site_code(StudySource("study.yml")) != page_side


def test_the_results_of_the_real_study(session_results, study):
    results, _ = session_results
    assert results["sentences"] == list(study.sentences) and results["registers"] == list(study.registers)
    # The cache writes JSON with sorted keys: the models come back in key order, the
    # study's first model is named apart.
    assert sorted(results["models"]) == sorted(m.key for m in study.models)
    assert results["default_model"] == study.models[0].key
    assert results["bootstrap"] == dataclasses.asdict(study.bootstrap)
    for key, m in results["models"].items():
        assert m["key"] == key and m["n_sentences"] == len(study.sentences)
        assert m["checks"] and m["mutant"]["wrong_agg"]            # the self-checks ran
        assert m["halves"] == study.halves
