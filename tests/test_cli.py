"""The command line (model/__main__.py): `measure` on a reader's own sentences, `check`
and `accept` on a project. Errors a user can fix print one line and exit with 2."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT, run
from model.__main__ import main
from model.instrument import LENSES

STUDY = str(ROOT / "docs" / "study.yml")


def measure(capsys, tmp_path, text: str | bytes, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "mine.txt"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    code = main(["--study", STUDY, "measure", "--sentences", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_measure_prints_the_summary_and_every_row(capsys, tmp_path):
    code, out, err = measure(capsys, tmp_path, "She used the scissors to cut the ribbon.\nThe doctor thanked the nurse.\n", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["summary"]) == set(LENSES) and data["model"] == "minilm-l6"
    assert data["rows"]["sentence"] == [0] * 8 + [1] * 5         # 8 and 5 words; punctuation has no row
    assert data["rows"]["word"][8:] == ["The", "doctor", "thanked", "the", "nurse"]
    assert [v["lens"] for v in data["verdicts"]] == ["value_norm", "output_norm"]
    assert list(data["provenance"]["models"]) == ["l6"]          # the study's first model


def test_all_heads_one_record_per_word_layer_and_head(capsys, tmp_path):
    code, out, _ = measure(capsys, tmp_path, "Scissors cut paper.\n", "--model", "minilm-l3", "--all-heads", "--json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert len(rows) == 3 * 3 * 12                                # 3 words x 3 layers x 12 heads
    assert set(rows[0]) == {"sentence", "word_index", "word", "layer", "head", "sink_share"}
    assert set(rows[0]["sink_share"]) == set(LENSES)


def test_all_heads_and_the_displayed_rows_agree(capsys, tmp_path):
    """The rule-free view read at the head the instrument opens is the displayed row."""
    text = "The committee's reorganisation didn't stop the squabbles.\n"
    _, out, _ = measure(capsys, tmp_path, text, "--json")
    rows = json.loads(out)["rows"]
    _, out, _ = measure(capsys, tmp_path, text, "--all-heads", "--json")
    every = {(r["word_index"], r["layer"], r["head"]): r["sink_share"] for r in json.loads(out)["rows"]}
    for lens in LENSES:
        for w, l, h, sink in zip(rows["word_index"], rows[lens]["layer"], rows[lens]["head"], rows[lens]["sink_share"]):
            assert every[(w, l, h)][lens] == pytest.approx(sink, abs=1e-12)


def test_measure_without_json_says_how(capsys, tmp_path):
    code, out, err = measure(capsys, tmp_path, "The cat sat.\n")
    assert (code, out) == (2, "") and "pass --json" in err


BAD_SENTENCES = {
    "empty line": (b"The cat sat.\n\nA dog ran.\n", ":2: empty line"),
    "blank line": (b"The cat sat.\n \t \n", ":2: empty line"),
    "line separator, then an empty line": ("One\u2028two.\nThree.\n\n".encode(), ":3: empty line"),
    "not UTF-8": ("The cat sat.\nCaf\u00e9 au lait.\n".encode("latin-1"), ":2: not valid UTF-8"),
    "nothing the tokenizer keeps": ("The cat sat.\n\u200b\u200b\n".encode(), ":2: no tokens"),
    # [CLS] + 511 + [SEP] = 513: the limit counts the special tokens.
    "over the length limit": (("The cat sat.\n" + " ".join(["word"] * 511) + "\n").encode(),
                              ":2: 513 tokens, longer than the model's limit of 512"),
}


@pytest.mark.parametrize("case", BAD_SENTENCES)
def test_bad_sentences_exit_2_with_one_line_naming_file_and_line(capsys, tmp_path, case):
    data, message = BAD_SENTENCES[case]
    code, out, err = measure(capsys, tmp_path, data, "--json")
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert f"{tmp_path / 'mine.txt'}{message}" in err, err


@pytest.mark.models   # 510 words through a model, all heads: for make test, not the edit loop
def test_the_longest_sentence_the_model_takes(capsys, tmp_path):
    code, _, err = measure(capsys, tmp_path, " ".join(["word"] * 510) + "\n", "--model", "minilm-l3", "--all-heads", "--json")
    assert code == 0, err


def test_a_real_process_exits_2_with_one_line(tmp_path):
    proc = run(tmp_path, "model", "--study", STUDY, "measure", "--sentences", "nowhere.txt", "--json")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: nowhere.txt: sentences file not found\n"


# -- check and accept, on a copy of the small site ---------------------------------------------
# In this process (the real process is tested above): `main` as the command line calls it,
# in the project's folder.

def cli(monkeypatch, capsys, project, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(project)
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_passes_then_fails_on_a_moved_number(monkeypatch, capsys, project):
    code, out, err = cli(monkeypatch, capsys, project, "check")
    assert code == 0, out + err
    assert "every cited number matches the lock" in out
    lock = project / "docs" / "numbers.lock.json"
    data = json.loads(lock.read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] += 0.01
    lock.write_text(json.dumps(data))
    code, out, err = cli(monkeypatch, capsys, project, "check")
    assert code == 1
    assert "l6.alpha.median_sink: recorded" in err and "cited by evidence.md, index.md" in err


def test_check_names_a_page_error_on_one_line(monkeypatch, capsys, project):
    page = project / "docs" / "evidence.md"
    page.write_text(page.read_text() + '\nOops {{ num("l6.alpha.no_such_number", "pct:1") }}.\n')
    line = page.read_text().count("\n")
    code, out, err = cli(monkeypatch, capsys, project, "check")
    assert code == 2, out + err
    assert err.startswith(f"error: evidence.md:{line}: unknown number 'l6.alpha.no_such_number'; did you mean ")
    assert err.count("\n") == 1


def test_accept_prints_the_diff_then_no_change(monkeypatch, capsys, project):
    lock = project / "docs" / "numbers.lock.json"
    data = json.loads(lock.read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] = 0.5
    lock.write_text(json.dumps(data))
    code, out, err = cli(monkeypatch, capsys, project, "accept")
    assert code == 0, out + err
    assert out.startswith("~ l6.alpha.median_sink: 0.5 -> ")
    code, out, _ = cli(monkeypatch, capsys, project, "accept")
    assert out.strip() == "no change"


def test_accept_refuses_a_lock_it_cannot_read(monkeypatch, capsys, project):
    lock = project / "docs" / "numbers.lock.json"
    lock.write_text(lock.read_text()[:200])
    before = lock.read_bytes()
    code, out, err = cli(monkeypatch, capsys, project, "accept")
    assert code == 2 and err.startswith(f"error: {lock}:") and "not valid JSON" in err
    assert lock.read_bytes() == before
