"""The study's inputs (model/study/): the corpus file, the halves, the flip pairs and
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
from model.study.pairs import read_flip_pairs


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
MIRROR = {"sentences": ["The tile was broken by the hammer because it was brittle.",
                        "The tile was broken by the hammer because it was heavy."],
          "pronoun": "it", "candidates": ["hammer", "tile"], "referents": ["tile", "hammer"], "order": "mirrored", "mirrors": 1}
NULL = {"sentences": ["The hammer broke the tile because it was raining.", "The hammer broke the tile because it was snowing."],
        "pronoun": "it", "candidates": ["hammer", "tile"], "referents": ["tile", "hammer"], "from": 2}


def flip_file(tmp_path: Path, **change) -> Path:
    pair = {**PAIR, **change}
    return write(tmp_path / "pairs.yml", yaml.safe_dump({"flip_pairs": [PAIR, pair]}))


def pairs_file(tmp_path: Path, mirror: dict | None = None, null: dict | None = None) -> Path:
    """A pair, its mirror and a null pair from the mirror, each with `mirror` or `null` changes."""
    return write(tmp_path / "pairs.yml", yaml.safe_dump({"flip_pairs": [PAIR, {**MIRROR, **(mirror or {})}],
                                                         "null_pairs": [{**NULL, **(null or {})}]}))


def test_flip_pairs_are_read(tmp_path):
    pairs, nulls = read_flip_pairs(flip_file(tmp_path))
    assert pairs[1] == study_mod.FlipPair(tuple(PAIR["sentences"]), "it", ("hammer", "tile"), ("tile", "hammer"))
    assert nulls == ()


def test_a_mirror_and_a_null_pair_are_read_with_their_order_and_source(tmp_path):
    (pair, mirror), (null,) = read_flip_pairs(pairs_file(tmp_path))
    assert (pair.order, pair.source, mirror.order, mirror.source) == ("original", None, "mirrored", 1)
    assert (null.order, null.source, null.referents) == ("mirrored", 2, ("tile", "hammer"))   # the order of its frame
    assert (pair.named_first(), mirror.named_first(), null.named_first(1)) == ("hammer", "tile", "hammer")
    assert (pair.changed_words(), mirror.changed_words()) == ([(8, "brittle", "heavy")], [(10, "brittle", "heavy")])


@pytest.mark.parametrize("change, message", [
    ({"pronoun": "the"}, "'the' must occur exactly once"),
    ({"candidates": ["hammer", "nail"]}, "'nail' must occur exactly once"),
    ({"referents": ["tile", "tile"]}, "referents one of each"),
    ({"sentences": PAIR["sentences"][:1]}, "two sentences"),
    ({"candidates": ["hammer"], "referents": ["hammer", "hammer"]}, "two candidates"),
    ({"sentences": [PAIR["sentences"][0], "The hammer broke the tile because it was so heavy."]},
     "must differ in exactly one word, not have 9 and 10 words"),
    ({"sentences": [PAIR["sentences"][0], "A hammer broke the tile because it was heavy."]},
     "must differ in exactly one word, not 2"),
    ({"sentences": [PAIR["sentences"][0], "The hammer broke the tile since it was brittle."]},
     "the changed word 'because' must come after the pronoun and both candidates"),
    ({"mirror": 1}, "unknown field 'mirror'"),
    ({"order": "reversed", "mirrors": 1}, "order 'reversed' is not one of"),
    ({"mirrors": 1}, "a mirrored pair names the pair it mirrors"),
    ({"order": "mirrored"}, "a mirrored pair names the pair it mirrors"),
])
def test_a_bad_flip_pair_is_named_by_its_number(tmp_path, change, message):
    path = flip_file(tmp_path, **change)
    with pytest.raises(StudyError, match=rf"^{re.escape(str(path))}: flip pair 2: .*{re.escape(message)}"):
        read_flip_pairs(path)


@pytest.mark.parametrize("mirror, null, message", [
    ({"mirrors": 2}, {}, "flip pair 2: `mirrors` must be the number of an original flip pair above it, not 2"),
    ({"mirrors": "1"}, {}, "flip pair 2: `mirrors` must be the number of an original flip pair above it"),
    ({"referents": ["hammer", "tile"]}, {}, "flip pair 2: pronoun, candidates and referents must be those of flip pair 1"),
    ({"sentences": [s.replace("heavy", "large") for s in MIRROR["sentences"]]}, {},
     "flip pair 2: the changed words must be those of flip pair 1"),
    ({"sentences": [s.replace("The tile was broken by the hammer", "The hammer hit the tile") for s in MIRROR["sentences"]]},
     {}, "flip pair 2: 'hammer' is named first here as in flip pair 1"),
    ({}, {"from": 3}, "null pair 1: `from` must be the number of a flip pair (1 to 2), not 3"),
    ({}, {"referents": ["hammer", "tile"]}, "null pair 1: candidates and (pseudo-)referents must be those of flip pair 2"),
    ({}, {"sentences": NULL["sentences"][:1]}, "null pair 1: two sentences"),
])
def test_a_bad_mirror_or_null_pair_is_named(tmp_path, mirror, null, message):
    path = pairs_file(tmp_path, mirror, null)
    with pytest.raises(StudyError, match=rf"^{re.escape(str(path))}: {re.escape(message)}"):
        read_flip_pairs(path)


def test_a_flip_pair_missing_a_field_is_named(tmp_path):
    path = write(tmp_path / "pairs.yml", yaml.safe_dump({"flip_pairs": [{k: v for k, v in PAIR.items() if k != "pronoun"}]}))
    with pytest.raises(StudyError, match=r"flip pair 1: missing or malformed 'pronoun'"):
        read_flip_pairs(path)


def _first_named(sentence: str, candidates) -> str:
    """Which candidate a sentence names first, by where its first letter stands (not FlipPair's code)."""
    at = {c: re.search(rf"\b{c}\b", sentence, re.IGNORECASE).start() for c in candidates}
    return min(at, key=at.get)


def test_the_real_pairs_are_counterbalanced(study):
    """Every referent is named first in half of the flip pairs and of the null pairs, read off
    the sentences; every pair as first written has one mirror and every flip pair one null pair."""
    for pairs in (study.flip_pairs, study.null_pairs):
        first = [_first_named(p.sentences[0], p.candidates) == p.referents[0] for p in pairs]
        assert 2 * sum(first) == len(pairs) > 0
    originals = [i + 1 for i, p in enumerate(study.flip_pairs) if p.order == "original"]
    assert sorted(p.source for p in study.flip_pairs if p.order == "mirrored") == originals
    assert sorted(p.source for p in study.null_pairs) == list(range(1, len(study.flip_pairs) + 1))
    assert {p.pronoun for p in study.null_pairs} == {"it"}


# -- study.yml ----------------------------------------------------------------------------------

@pytest.fixture
def study_dir(tmp_path) -> Path:
    """A copy of docs/study.yml with the files it names."""
    raw = yaml.safe_load((ROOT / "docs" / "study.yml").read_text(encoding="utf-8"))
    for name in ("study.yml", raw["corpus"], raw["flip_pairs"], raw["confirmation"]["corpus"], raw["replication"]["corpus"]):
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
    assert len(study.flip_pairs) >= 80 and len(study.null_pairs) == len(study.flip_pairs)
    assert study.flip_heads == study_mod.FlipHeads(0.05, "bonferroni", 10000, 0.95, 20261202)
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
    (lambda r: r.pop("flip_heads"), "missing setting 'flip_heads'"),
    (lambda r: r["flip_heads"].update(correction="holm"), "flip_heads correction 'holm': only 'bonferroni'"),
    (lambda r: r["flip_heads"].update(null_quantile=95), "0 < null_quantile < 1"),
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
