"""The study's inputs (model/study.py): the corpus file, the halves, the flip pairs and
study.yml. Every error names the file and, where there is one, the line."""
from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from model import study as study_mod
from model.study import StudyError


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# -- the corpus file ----------------------------------------------------------------------------

def test_a_corpus_is_sentences_and_registers(tmp_path):
    path = write(tmp_path / "c.tsv", "news\tA storm closes the pass.\r\nfiction\t  She ran.  \n")
    assert study_mod.read_corpus(path) == (["A storm closes the pass.", "She ran."], ["news", "fiction"])


@pytest.mark.parametrize("data, where, message", [
    (b"news\tOne.\n\nnews\tTwo.\n", ":2:", "empty line"),
    (b"news\tOne.\n  \t \n", ":2:", "empty line"),
    (b"news\tOne.\nnews\tCaf\xe9.\n", ":2:", "not valid UTF-8"),
    (b"news One.\n", ":1:", "expected 'register<TAB>sentence'"),
    (b"news\tOne.\tTwo.\n", ":1:", "expected 'register<TAB>sentence'"),
    (b"\tOne.\n", ":1:", "expected 'register<TAB>sentence'"),
    (b"news\t  \n", ":1:", "expected 'register<TAB>sentence'"),
    (b"news\tOne.\nfiction\tTwo.\nnews\tOne.\n", ":3:", "already on line 1"),
    (b"", "", "no sentences"),
], ids=["empty line", "blank line", "not UTF-8", "no tab", "two tabs", "no register", "no sentence",
        "duplicate", "empty file"])
def test_corpus_errors_name_file_and_line(tmp_path, data, where, message):
    path = write(tmp_path / "c.tsv", data)
    with pytest.raises(StudyError) as info:
        study_mod.read_corpus(path)
    assert str(info.value).startswith(f"{path}{where}"), str(info.value)
    assert message in str(info.value)


def test_a_line_separator_inside_a_sentence_is_not_a_line_break(tmp_path):
    # U+2028 (what a paste from a word processor brings) must not split a sentence, or
    # every line number after it would be off by one.
    path = write(tmp_path / "c.tsv", "news\tOne\u2028sentence.\nnews\tTwo.\n\nnews\tThree.\n")
    with pytest.raises(StudyError, match=r":3: empty line"):
        study_mod.read_corpus(path)
    assert study_mod.read_sentences(write(tmp_path / "s.txt", "A\u2028b.\nC.\n")) == ["A\u2028b.", "C."]


def test_a_missing_sentences_file_is_named(tmp_path):
    with pytest.raises(StudyError, match=r"nowhere\.txt: sentences file not found$"):
        study_mod.read_sentences(tmp_path / "nowhere.txt")


# -- the halves ---------------------------------------------------------------------------------

def test_halves_follow_the_parity_of_each_sentences_hash():
    # By hand: the first byte of sha256("a") is 0xca (even), of sha256("b") 0x3e (even),
    # of sha256("c") 0x2e (even), of sha256("d") 0x18 (even), of sha256("e") 0x3f (odd).
    assert [hashlib.sha256(s.encode()).digest()[0] for s in "abcde"] == [0xca, 0x3e, 0x2e, 0x18, 0x3f]
    st = study_mod.Study(Path("s.yml"), Path("c.tsv"), tuple("abcde"), ("r",) * 5, (), None, 0.8, 0.0, None)
    assert st.halves == {"fit": [0, 1, 2, 3], "test": [4]}


def test_a_sentences_half_does_not_depend_on_the_rest_of_the_corpus(study):
    """Adding, removing or reordering other sentences never moves a sentence across."""
    def half_of(sentences):
        st = study_mod.Study(Path("s.yml"), Path("c.tsv"), tuple(sentences), ("r",) * len(sentences), (), None, 0.8, 0.0, None)
        return {sentences[i]: name for name, idx in st.halves.items() for i in idx}

    whole = half_of(list(study.sentences))
    part = half_of(list(reversed(study.sentences[::3])))
    assert all(whole[s] == h for s, h in part.items())
    assert set(whole.values()) == {"fit", "test"}


def test_without_a_split_both_halves_are_the_whole_corpus(study, tmp_path):
    st = study_mod.with_sentences(study, write(tmp_path / "mine.txt", "The cat sat.\nA dog ran.\n"), None)
    assert st.halves == {"fit": [0, 1], "test": [0, 1]}


# -- the flip pairs -----------------------------------------------------------------------------

PAIR = {"sentences": ["The hammer broke the tile because it was brittle.", "The hammer broke the tile because it was heavy."],
        "pronoun": "it", "candidates": ["hammer", "tile"], "referents": ["tile", "hammer"]}


def flip_file(tmp_path: Path, **change) -> Path:
    pair = {**PAIR, **change}
    return write(tmp_path / "pairs.yml", yaml.safe_dump({"flip_pairs": [PAIR, pair]}))


def test_flip_pairs_are_read(tmp_path):
    pairs = study_mod._flip_pairs(flip_file(tmp_path))
    assert pairs[1] == study_mod.FlipPair(tuple(PAIR["sentences"]), "it", ("hammer", "tile"), ("tile", "hammer"))


@pytest.mark.parametrize("change, message", [
    ({"pronoun": "the"}, "'the' must occur exactly once"),
    ({"candidates": ["hammer", "nail"]}, "'nail' must occur exactly once"),
    ({"referents": ["tile", "tile"]}, "referents one of each"),
    ({"sentences": PAIR["sentences"][:1]}, "two sentences"),
    ({"candidates": ["hammer"], "referents": ["hammer", "hammer"]}, "two candidates"),
])
def test_a_bad_flip_pair_is_named_by_its_number(tmp_path, change, message):
    path = flip_file(tmp_path, **change)
    with pytest.raises(StudyError, match=rf"^{re.escape(str(path))}: flip pair 2: .*{re.escape(message)}"):
        study_mod._flip_pairs(path)


def test_a_flip_pair_missing_a_field_is_named(tmp_path):
    path = write(tmp_path / "pairs.yml", yaml.safe_dump({"flip_pairs": [{k: v for k, v in PAIR.items() if k != "pronoun"}]}))
    with pytest.raises(StudyError, match=r"flip pair 1: missing or malformed 'pronoun'"):
        study_mod._flip_pairs(path)


# -- study.yml ----------------------------------------------------------------------------------

@pytest.fixture
def study_dir(tmp_path) -> Path:
    """A copy of docs/study.yml with the files it names."""
    raw = yaml.safe_load((ROOT / "docs" / "study.yml").read_text(encoding="utf-8"))
    for name in ("study.yml", raw["corpus"], raw["flip_pairs"]):
        shutil.copy(ROOT / "docs" / name, tmp_path / name)
    return tmp_path


def edit_study(folder: Path, edit) -> Path:
    path = folder / "study.yml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(raw)
    return write(path, yaml.safe_dump(raw))


def test_the_real_study_loads(study):
    assert len(study.sentences) == len(study.registers) >= 240
    assert [m.key for m in study.models][:2] == ["l6", "l3"]
    assert study.bootstrap.resamples >= 2000 and study.bootstrap.level == 0.95
    assert len(study.flip_pairs) >= 40
    assert all(a.sentence in study.sentences for a in study.anchors)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("head_rule"), "missing setting 'head_rule'"),
    (lambda r: r["stop_rule"].update(lenses=["value"]), "stop_rule lens 'value' is not one of"),
    (lambda r: r["stop_rule"].update(threshold="half"), "malformed setting"),
    (lambda r: r.update(models=[]), "models is empty"),
    (lambda r: r["models"].append(dict(r["models"][0])), "must be distinct identifiers"),
    (lambda r: r["models"][0].update(key="l-6"), "must be distinct identifiers"),
    (lambda r: r["bootstrap"].update(level=95), "0 < level < 1"),
    (lambda r: r["bootstrap"].update(resamples=0), "resamples >= 1"),
    (lambda r: r["anchors"].append({"sentence": "Not in the corpus.", "from": "a", "to": "b"}),
     "anchors sentence 'Not in the corpus.' is not in"),
    (lambda r: r.update(flip_pairs="nowhere.yml"), "nowhere.yml: flip pairs file not found"),
])
def test_study_errors_name_the_file(study_dir, edit, message):
    path = edit_study(study_dir, edit)
    with pytest.raises(StudyError) as info:
        study_mod.load(path)
    assert str(path) in str(info.value) or "nowhere.yml" in str(info.value)
    assert message in str(info.value)


def test_a_corpus_error_keeps_the_corpus_file_and_line(study_dir):
    corpus = study_dir / "corpus.tsv"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    write(corpus, "\n".join(lines[:4] + [""] + lines[4:]) + "\n")
    with pytest.raises(StudyError, match=rf"^{re.escape(str(corpus))}:5: empty line"):
        study_mod.load(study_dir / "study.yml")


def test_not_yaml_and_not_found(tmp_path):
    with pytest.raises(StudyError, match="study file not found"):
        study_mod.load(tmp_path / "study.yml")
    with pytest.raises(StudyError, match="not valid YAML"):
        study_mod.load(write(tmp_path / "study.yml", "corpus: [unclosed\n"))
    with pytest.raises(StudyError, match="expected a mapping of settings"):
        study_mod.load(write(tmp_path / "study.yml", "- a list\n"))


def test_with_sentences_keeps_the_rules_and_the_anchors_that_apply(study, tmp_path):
    anchor = study.anchors[0]
    path = write(tmp_path / "mine.txt", f"{anchor.sentence}\nA dog ran.\n")
    st = study_mod.with_sentences(study, path, "minilm-l3")
    assert st.sentences == (anchor.sentence, "A dog ran.") and st.registers == ("yours", "yours")
    assert [(m.name, m.key) for m in st.models] == [("minilm-l3", "model")]
    assert st.anchors == (anchor,) and st.flip_pairs == ()
    assert (st.stop_rule, st.positional_threshold, st.bootstrap) == (study.stop_rule, study.positional_threshold, study.bootstrap)
