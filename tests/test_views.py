"""The instrument's data files and the browser runtime's export, checked on hand-made
inputs and on the real checkpoint (model/views.py, runtime_export.py)."""
from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pytest

from model.activations import Activations
from model import views as idata
from model.site import runtime_export as rx
from model.tokenize import Tokenized

# [CLS] un ##real , cat [SEP]: words "unreal", ",", "cat"
TOK = Tokenized(text="unreal, cat", ids=[101, 4895, 22852, 1010, 4937, 102],
                tokens=["[CLS]", "un", "##real", ",", "cat", "[SEP]"],
                word_ids=[None, 0, 0, 1, 2, None], words=["unreal", ",", "cat"])


def acts(L=2, nh=3, T=6, seed=0) -> Activations:
    rng = np.random.default_rng(seed)
    a = rng.random((L, nh, T, T))
    return Activations(alpha=a / a.sum(-1, keepdims=True), value_norm=rng.random((L, nh, T)) * 5,
                       output_norm=rng.random((L, nh, T)) * 3, hidden=np.zeros((T, 4)))


CHOSEN = {"alpha": [[0, 1], [1, 2]], "value_norm": [[1, 0], [0, 0]], "output_norm": [[0, 2], [1, 1]]}


def test_quantized_alpha_is_little_endian_uint16_by_hand():
    text = idata.quantize_alpha(np.array([0.0, 1.0, 0.5, 1e-6]))
    assert base64.b64decode(text) == struct.pack("<4H", 0, 65535, 32768, 0)  # round(0.5 * 65535) = 32768


def test_quantized_alpha_round_trip_within_half_a_step():
    a = acts().alpha
    back = idata.dequantize_alpha(idata.quantize_alpha(a), a.shape)
    assert back.shape == a.shape
    assert np.abs(back - a).max() <= 0.5 / 65535 + 1e-12
    with pytest.raises(ValueError, match="expected"):
        idata.dequantize_alpha(idata.quantize_alpha(a), (2, 3, 6, 5))


def test_sentence_file_by_hand():
    a = acts()
    rec = json.loads(idata.sentence_file(4, TOK, a, CHOSEN))
    assert rec["sentence"] == 4
    assert rec["tokens"] == TOK.tokens and rec["word_ids"] == TOK.word_ids and rec["words"] == TOK.words
    assert rec["punct"] == [False, True, False]
    assert rec["shown"] == [0, 2]                      # punctuation gets no row
    assert (rec["n_layers"], rec["n_heads"]) == (2, 3)
    assert len(base64.b64decode(rec["alpha"])) == 2 * 2 * 3 * 6 * 6
    assert len(rec["value_norm"]) == len(rec["output_norm"]) == 2 * 3 * 6
    # row-major [L, nh, T]: element (1, 2, 4) sits at (1 * 3 + 2) * 6 + 4, to 5 significant digits
    assert rec["value_norm"][(1 * 3 + 2) * 6 + 4] == pytest.approx(a.value_norm[1, 2, 4], rel=5e-5)
    assert np.allclose(rec["output_norm"], a.output_norm.ravel(), rtol=5e-5, atol=0)
    assert rec["chosen"] == CHOSEN


def test_sentence_file_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="chosen heads"):
        idata.sentence_record(0, TOK, acts(), {**CHOSEN, "alpha": [[0, 0]]})
    with pytest.raises(ValueError, match="tokens but activations for 5"):
        idata.sentence_record(0, TOK, acts(T=5), CHOSEN)


def test_index_publishes_labels_and_thresholds_once():
    model = {"name": "m", "title": "m (2 layers)", "n_layers": 2, "n_heads": 3,
             "positional": {"alpha": [[0, 1]], "value_norm": [], "output_norm": []}, "runtime": None}
    idx = idata.index_record("m", 0.5, 1e-3, [{"text": "a b", "register": "news", "half": "fit"}], {"m": model})
    assert [l["key"] for l in idx["lenses"]] == ["alpha", "value_norm", "output_norm"]
    assert all(l["label"] and l["title"] for l in idx["lenses"])
    assert (idx["threshold"], idx["tie_tolerance"], idx["tiny_mass"], idx["default_model"]) == (0.5, 1e-3, idata.TINY_MASS, "m")
    with pytest.raises(ValueError, match="runtime"):
        idata.index_record("m", 0.5, 1e-3, [], {"m": {k: v for k, v in model.items() if k != "runtime"}})


# -- the runtime export, on the real checkpoint ------------------------------------------------

@pytest.fixture(scope="module")
def exported(l6):
    return rx.export(l6, "assets/runtime/l6")


def test_export_reassembles_every_tensor_exactly(exported, l6):
    manifest = json.loads(exported["assets/runtime/l6/manifest.json"])
    seen = set()
    for entry in manifest["files"]:
        data = exported["assets/runtime/l6/" + entry["url"].split("?")[0]]
        assert len(data) == entry["bytes"]
        floats = np.frombuffer(data, dtype="<f4")
        for name, (offset, shape) in entry["tensors"].items():
            n = int(np.prod(shape))
            assert np.array_equal(floats[offset:offset + n].reshape(shape), l6.tensors[name]), name
            seen.add(name)
    emb = manifest["embeddings"]
    rows = [np.frombuffer(exported[f"assets/runtime/l6/emb/{k}.bin"], dtype="<f4") for k in range(emb["n_chunks"])]
    table = np.concatenate(rows).reshape(-1, manifest["config"]["d_model"])
    assert np.array_equal(table, l6.tensors["embeddings.word_embeddings.weight"])
    assert seen | {"embeddings.word_embeddings.weight"} == set(l6.tensors)
    assert all(f["url"].endswith("?v=" + l6.sha256[:12]) for f in manifest["files"])
    # The first sentence's budget: layers + tokenizer + a sentence's chunks under 50 MB.
    once = sum(f["bytes"] for f in manifest["files"]) + manifest["tokenizer"]["bytes"]
    assert once + 30 * emb["chunk_bytes"] < 50e6


def test_export_tokenizer_table_by_hand(exported):
    rec = json.loads(exported["assets/runtime/l6/tokenizer.json"])
    assert rec["vocab"][101] == "[CLS]" and (rec["cls"], rec["sep"]) == (101, 102)
    assert {a["content"] for a in rec["added"]} >= {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"}
    c = rec["chars"]
    inside = lambda cp, ranges: any(a <= cp <= b for a, b in ranges)
    assert c["map"][str(ord("A"))] == "a" and c["map"][str(ord("é"))] == "e"   # lowercase, accents stripped
    assert inside(0x4E2D, c["pad"])                                              # 中: a word of its own
    assert inside(0x200B, c["delete"]) and inside(0, c["delete"])                # zero-width space, NUL
    assert inside(0xA0, c["space"]) and inside(ord(" "), c["split"])
    assert inside(ord(","), c["isolate"]) and inside(ord("$"), c["isolate"])     # ASCII symbols split too
    assert not inside(ord("a"), c["isolate"] + c["split"] + c["delete"])
    assert str(0xAC00) not in c["map"] and c["hangul"]                           # Hangul by rule
    assert inside(ord("!"), rec["punct"]) and not inside(ord("$"), rec["punct"])  # Python's is_punctuation: P* only


def test_export_refuses_what_the_runtime_cannot_run(l6):
    from dataclasses import replace

    extra = replace(l6, tensors={**l6.tensors, "encoder.relative_attention_bias.weight": np.zeros((32, 12), np.float32)})
    with pytest.raises(rx.RuntimeExportError, match="not a plain BERT encoder"):
        rx.export(extra, "assets/runtime/x")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    with pytest.raises(rx.RuntimeExportError, match="BertNormalizer"):
        rx.tokenizer_record(tok)


# -- on the measurement's own output (a small study of the real model) --------------------------

def test_one_file_per_sentence_with_every_head(small_measured):
    from model.instrument import LENSES

    out = [json.loads(text) for text in idata.sentence_views(small_measured)]
    corpus = small_measured.corpus
    assert [v["sentence"] for v in out] == list(range(len(corpus.toks)))
    for i, v in enumerate(out):
        tok, a = corpus.toks[i], corpus.acts[i]
        assert (v["words"], v["shown"]) == (tok.words, corpus.rows[i].shown)
        alpha = idata.dequantize_alpha(v["alpha"], a.alpha.shape)
        assert np.abs(alpha - a.alpha).max() <= 0.5 / idata.QUANT + 1e-12
        for lens in LENSES[1:]:
            assert np.allclose(np.array(v[lens]).reshape(a.value_norm.shape), getattr(a, lens), rtol=1e-4)


def test_the_chosen_heads_are_the_displayed_rows_heads(small_measured):
    from model.instrument import LENSES

    out = [json.loads(text) for text in idata.sentence_views(small_measured)]
    for lens in LENSES:
        d = small_measured.rows[lens]
        for i, v in enumerate(out):
            here = d.sentence == i
            assert v["chosen"][lens] == np.stack([d.layer[here], d.head[here]], 1).tolist()
            assert len(v["chosen"][lens]) == len(v["shown"])
