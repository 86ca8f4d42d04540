"""Three-way agreement of the forward pass, on every model (minilm-l6, minilm-l3, mpnet-base).

- the PyTorch reference (`model.encoder`, `model.activations.from_reference`) against the
  NumPy float64 oracle (`model.oracle`);
- the reference against `transformers`' BertModel (MPNetModel for mpnet-base) loaded
  from the same weights;
- the L3 reference against the ONNX graph itself, run by `onnx.reference`;
- the oracle against `transformers` run in float64, within 1e-10 (out of float32's reach),
  so an oracle computing any step in float32 fails;
plus padding invariance and the definition of f = v W_O^h; for MPNet, all three on
every hidden state and the corpus too, and the relative-position buckets by hand.

Every comparison prints its max abs difference with the prefix "agreement:" (shown with
`pytest -s`), and a summary is printed when the module finishes.
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from model import activations, encoder, oracle, tokenize

TOL = 1e-5

# Varied lengths; subword-split words ("unbelievably", "reorganisation", "squabbles"),
# punctuation, an apostrophe, digits, brackets.
SENTENCES = [
    "The cat sat.",
    "Unbelievably, the committee's reorganisation didn't stop the squabbles!",
    "A man is eating food.",
    "Despite heavy rain, 3 hikers (all experienced) reached the summit at 5:30 a.m.; nobody was hurt.",
]

AGREEMENT: dict[str, float] = {}


def record(what: str, diff: float) -> float:
    diff = float(diff)
    AGREEMENT[what] = diff
    print(f"agreement: {what}: max|diff| = {diff:.3e}")
    return diff


@pytest.fixture(scope="session", autouse=True)   # not per module: the module's tests may spread over workers
def _agreement_summary():
    yield
    if AGREEMENT:
        print("\nagreement: summary (max abs difference, tolerance %.0e)" % TOL)
        for what, diff in AGREEMENT.items():
            print(f"agreement:   {what:<60s} {diff:.3e}")


def maxdiff(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max())


def token_ids(ckpt, sentences=SENTENCES) -> list[list[int]]:
    return [tokenize.tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position).ids for s in sentences]


@pytest.fixture(scope="module")
def batch(ckpt):
    ids = token_ids(ckpt)
    # The batch must really be varied: different lengths (so padding happens) and subwords.
    assert len({len(s) for s in ids}) == len(ids)
    return ids


@pytest.fixture(scope="module")
def ref(ckpt, batch):
    return encoder.run(ckpt, batch)


# --------------------------------------------------------------------------- oracle


def test_reference_matches_oracle(ckpt, batch, ref):
    """Raw alpha, v, f and last hidden state of the padded batch vs float64, unpadded."""
    outs = list(oracle.forward(ckpt, batch, with_f=True))
    L = ckpt.config.n_layer
    diffs = {"alpha": 0.0, "value": 0.0, "f": 0.0, "hidden": 0.0}
    for b, (ids, o) in enumerate(zip(batch, outs)):
        T = len(ids)
        assert len(o.alpha) == len(ref.alpha) == L
        for i in range(L):
            diffs["alpha"] = max(diffs["alpha"], maxdiff(ref.alpha[i][b, :, :T, :T].numpy(), o.alpha[i]))
            diffs["value"] = max(diffs["value"], maxdiff(ref.value[i][b, :, :T].numpy(), o.value[i]))
            diffs["f"] = max(diffs["f"], maxdiff(ref.f[i][b, :, :T].numpy(), o.f[i]))
        diffs["hidden"] = max(diffs["hidden"], maxdiff(ref.hidden[b, :T].numpy(), o.hidden))
    for what, d in diffs.items():
        record(f"{ckpt.name} reference vs oracle {what}", d)
    assert all(d < TOL for d in diffs.values()), diffs


@pytest.mark.measured   # the whole corpus through both implementations
@pytest.mark.parametrize("ckpt", ["minilm-l6", "minilm-l3"], indirect=True)
def test_activations_reference_matches_oracle(ckpt, study):
    """What the measurements read from either implementation, on the tests' sentences and
    the whole corpus (a build re-runs the oracle on a sample): alpha within 1e-5; ||v||,
    ||f|| and the hidden state within 1e-5 of their scale (the largest |value| of each
    sentence's array), as MPNet's below. MiniLM-L6's ||f|| reaches ~11, where float32
    steps are ~1e-6: it measured 1.19e-5 absolute, 1.1e-6 relative, on AVX-512's kernels."""
    batch = token_ids(ckpt, SENTENCES + list(study.sentences))
    refs, oras = activations.from_reference(ckpt, batch), activations.from_oracle(ckpt, batch)
    d = dict.fromkeys(("alpha", "value_norm", "output_norm", "hidden"), 0.0)
    for r, o in zip(refs, oras):
        for field in d:
            x = getattr(o, field)
            scale = 1.0 if field == "alpha" else float(np.abs(x).max())
            d[field] = max(d[field], maxdiff(getattr(r, field), x) / scale)
    for field, diff in d.items():
        record(f"{ckpt.name} activations.from_reference vs activations.from_oracle {field}"
               + ("" if field == "alpha" else ", relative to scale"), diff)
    assert all(diff < TOL for diff in d.values()), d


def test_activations_in_length_sorted_batches(l3, monkeypatch):
    """Sentences run sorted by length, in batches of about activations.BATCH_TOKENS
    padded tokens, and come back in the order given, with the numbers of one batch."""
    batch = token_ids(l3)
    whole = activations.from_reference(l3, batch)
    lengths = sorted(map(len, batch))
    monkeypatch.setattr(activations, "BATCH_TOKENS", 3 * lengths[2])  # the 3 shortest, then the longest
    padded = []
    monkeypatch.setattr(encoder, "pad", lambda b, pad=encoder.pad: padded.append(sorted(map(len, b))) or pad(b))
    split = activations.from_reference(l3, batch)
    lengths = sorted(map(len, batch))
    assert sorted(padded) == [lengths[:3], lengths[3:]]   # the batches run on the map's threads, in any order
    d = 0.0
    for ids, w, s in zip(batch, whole, split):
        assert w.alpha.shape == s.alpha.shape == (3, 12, len(ids), len(ids))
        for field in ("alpha", "value_norm", "output_norm", "hidden"):
            d = max(d, maxdiff(getattr(w, field), getattr(s, field)))
    record("minilm-l3 activations in one batch vs in length-sorted batches", d)
    assert d < TOL


# --------------------------------------------------------------------------- transformers


def hf_mpnet_model(members: dict[str, bytes]):
    """transformers' MPNetModel (eager attention) from the zip's own config.json and
    model.safetensors, with MPNet's own tensor names: nothing goes through our loader."""
    from safetensors.torch import load
    from transformers import MPNetConfig, MPNetModel

    config = MPNetConfig(**json.loads(members["config.json"]), attn_implementation="eager")
    with torch.device("meta"):   # no random initialization (1.2 s): strict assignment replaces every weight
        model = MPNetModel(config, add_pooling_layer=False)
    state = {
        k: v for k, v in load(members["model.safetensors"]).items()
        if not k.startswith("pooler.") and k != "embeddings.position_ids"  # unused (left on meta: any use would fail); a buffer
    }
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval()


def hf_value(layer):
    """A transformers layer's value projection: BertModel's name, or MPNetModel's."""
    return layer.attention.attn.v if hasattr(layer.attention, "attn") else layer.attention.self.value


def hf_output_projection(layer):
    """A transformers layer's attention output projection W_O: BertModel's name, or MPNetModel's."""
    return layer.attention.attn.o if hasattr(layer.attention, "attn") else layer.attention.output.dense


def hf_folder(ckpt, tmp_path_factory) -> Path:
    """The HF folder with these weights: the package's own for L6; built for ONNX L3."""
    if ckpt.source == "safetensors":
        return ckpt.weights_path.parent
    from safetensors.numpy import save_file

    cfg = ckpt.config
    folder = tmp_path_factory.mktemp(f"hf-{ckpt.name}")
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": cfg.d_model,
        "num_hidden_layers": cfg.n_layer,
        "num_attention_heads": cfg.n_head,
        "intermediate_size": cfg.d_ff,
        "vocab_size": cfg.vocab_size,
        "max_position_embeddings": cfg.max_position,
        "type_vocab_size": cfg.type_vocab_size,
        "layer_norm_eps": cfg.layer_norm_eps,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }
    assert (cfg.d_model, cfg.n_layer, cfg.n_head, cfg.d_ff) == (384, 3, 12, 1536)
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    save_file({k: np.ascontiguousarray(v) for k, v in ckpt.tensors.items()}, str(folder / "model.safetensors"))
    return folder


@contextlib.contextmanager
def quiet_transformers():
    """No load report, no progress bars, while transformers loads a model."""
    log = pytest.importorskip("transformers").utils.logging
    verbosity, bars = log.get_verbosity(), log.is_progress_bar_enabled()
    log.set_verbosity_error()
    log.disable_progress_bar()
    try:
        yield
    finally:
        log.set_verbosity(verbosity)
        if bars:
            log.enable_progress_bar()


@pytest.fixture(scope="module")
def hf_model(ckpt, tmp_path_factory, request):
    pytest.importorskip("transformers")
    from transformers import BertModel

    with quiet_transformers():
        if ckpt.config.rel_buckets:
            model = hf_mpnet_model(request.getfixturevalue("mpnet_members"))
        else:
            model = BertModel.from_pretrained(
                str(hf_folder(ckpt, tmp_path_factory)), attn_implementation="eager", add_pooling_layer=False
            )
    return model.eval()


def test_reference_matches_transformers(ckpt, batch, ref, hf_model):
    """Same padded batch through BertModel or MPNetModel (eager attention): attentions,
    v, last hidden."""
    ids, mask = encoder.pad(batch)
    captured = []
    hooks = [
        hf_value(layer).register_forward_hook(lambda m, i, o: captured.append(o.detach()))
        for layer in hf_model.encoder.layer
    ]
    if ckpt.config.rel_buckets:
        # MPNet has no token types, and numbers its positions from the ids: padded with
        # its pad id (1), as its tokenizer pads, the real tokens count 2, 3, ...
        ids, types = ids.masked_fill(mask == 0, 1), {}
    else:
        types = {"token_type_ids": torch.zeros_like(ids)}
    try:
        with torch.no_grad():
            out = hf_model(
                input_ids=ids,
                attention_mask=mask,
                output_attentions=True,
                **types,
            )
    finally:
        for h in hooks:
            h.remove()
    cfg = ckpt.config
    assert len(out.attentions) == len(captured) == cfg.n_layer
    d_alpha = d_value = d_hidden = 0.0
    for b, s in enumerate(batch):
        n = len(s)
        for i in range(cfg.n_layer):
            d_alpha = max(d_alpha, maxdiff(out.attentions[i][b, :, :n, :n], ref.alpha[i][b, :, :n, :n]))
            hf_v = captured[i][b, :n].view(n, cfg.n_head, cfg.d_head).transpose(0, 1)  # [nh, n, hs]
            d_value = max(d_value, maxdiff(hf_v, ref.value[i][b, :, :n]))
        d_hidden = max(d_hidden, maxdiff(out.last_hidden_state[b, :n], ref.hidden[b, :n]))
    record(f"{ckpt.name} reference vs transformers attentions", d_alpha)
    record(f"{ckpt.name} reference vs transformers value vectors", d_value)
    record(f"{ckpt.name} reference vs transformers last hidden", d_hidden)
    assert d_alpha < TOL and d_value < TOL and d_hidden < TOL


# --------------------------------------------------------------------------- ONNX graph


def test_l3_matches_onnx_graph(l3):
    """The L3 weights were lifted out of the ONNX graph: the graph itself must agree."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    proto = onnx.load(str(l3.weights_path))
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    softmax = [n.output[0] for n in model.graph.node if n.op_type == "Softmax"]
    assert len(softmax) == l3.config.n_layer == 3
    for name in softmax:
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    last = "onnx::Shape_422"
    assert last in {o.name for o in proto.graph.output}

    ids = token_ids(l3, [SENTENCES[1]])[0]
    T = len(ids)
    feed = {
        "input_ids": np.array([ids], dtype=np.int64),
        "attention_mask": np.ones((1, T), dtype=np.int64),
    }
    got = ReferenceEvaluator(model).run([last, *softmax], feed)
    hidden, probs = got[0], got[1:]
    ref = encoder.run(l3, [ids])
    assert hidden.shape == (1, T, 384)
    d_hidden = record("minilm-l3 reference vs ONNX graph last hidden", maxdiff(hidden, ref.hidden))
    d_alpha = 0.0
    for i, p in enumerate(probs):
        assert p.shape == (1, 12, T, T)
        d_alpha = max(d_alpha, maxdiff(p, ref.alpha[i]))
    record("minilm-l3 reference vs ONNX graph attention (Softmax)", d_alpha)
    assert d_hidden < TOL and d_alpha < TOL


# --------------------------------------------------------------------------- padding


def test_padding_invariance(ckpt):
    """A sentence alone vs the same sentence batched after a longer one."""
    short, long_ = token_ids(ckpt, [SENTENCES[0], SENTENCES[3]])
    T = len(short)
    assert len(long_) > T + 5
    alone = encoder.run(ckpt, [short])
    batched = encoder.run(ckpt, [long_, short])  # short is row 1, padded at the end
    d = maxdiff(alone.hidden[0], batched.hidden[1, :T])
    for i in range(ckpt.config.n_layer):
        d = max(
            d,
            maxdiff(alone.alpha[i][0], batched.alpha[i][1, :, :T, :T]),
            maxdiff(alone.value[i][0], batched.value[i][1, :, :T]),
            maxdiff(alone.f[i][0], batched.f[i][1, :, :T]),
        )
        pad = batched.alpha[i][1, :, :, T:]  # every query row, padded keys only
        assert pad.numel() > 0
        assert torch.count_nonzero(pad) == 0, f"layer {i}: padded keys get attention weight"
        rows = batched.alpha[i][1, :, :T, :T].sum(-1)
        assert torch.allclose(rows, torch.ones_like(rows), atol=1e-6)
    record(f"{ckpt.name} alone vs padded in a batch (alpha, v, f, hidden)", d)
    assert d < TOL


# --------------------------------------------------------------------------- f = v W_O^h


def test_f_is_head_slice_of_output_projection(ckpt, batch):
    """sum_h alpha_h @ f_h + b_O is the attention sublayer's dense output (before the
    residual and LayerNorm), and f_h = v_h W_O[:, h*hs:(h+1)*hs]^T from the raw tensors."""
    model = encoder.Encoder.from_checkpoint(ckpt)
    dense_out = []
    hooks = [
        layer.attention.output.dense.register_forward_hook(lambda m, i, o: dense_out.append(o.detach()))
        for layer in model.encoder.layer
    ]
    ids = batch[1]
    T = len(ids)
    try:
        out = model(torch.tensor([ids]), torch.ones(1, T, dtype=torch.long))
    finally:
        for h in hooks:
            h.remove()
    cfg, w = ckpt.config, ckpt.tensors
    nh, hs = cfg.n_head, cfg.d_head
    assert len(dense_out) == cfg.n_layer
    d_slice = d_sum = 0.0
    for i in range(cfg.n_layer):
        p = f"encoder.layer.{i}.attention.output.dense."
        W_O, b_O = w[p + "weight"].astype(np.float64), w[p + "bias"].astype(np.float64)  # [C, C], [C]
        alpha = out.alpha[i][0].numpy().astype(np.float64)  # [nh, T, T]
        v = out.value[i][0].numpy().astype(np.float64)      # [nh, T, hs]
        f = out.f[i][0].numpy().astype(np.float64)          # [nh, T, C]
        f_indep = np.stack([v[h] @ W_O[:, h * hs:(h + 1) * hs].T for h in range(nh)])
        d_slice = max(d_slice, maxdiff(f, f_indep))
        recon = np.einsum("hts,hsc->tc", alpha, f) + b_O  # sum_h alpha_h @ f_h + b_O
        target = dense_out[i].numpy()  # [N, C]: the layers carry the real tokens only, here all T
        d_sum = max(d_sum, maxdiff(recon, target))
        # Controls: the check can tell a wrong f apart.
        # (a) f carrying the output bias (added once per head) would not add up;
        assert np.abs(b_O).max() > 1e-3
        assert maxdiff(np.einsum("hts,hsc->tc", alpha, f + b_O) + b_O, target) > 1e-3
        # (b) a slice of the rows of W_O instead of its columns would not either.
        f_rows = np.stack([v[h] @ W_O[h * hs:(h + 1) * hs, :] for h in range(nh)])
        assert maxdiff(np.einsum("hts,hsc->tc", alpha, f_rows) + b_O, target) > 1e-2
    record(f"{ckpt.name} f vs v_h W_O[:, head]^T from tensors", d_slice)
    record(f"{ckpt.name} sum_h alpha_h f_h + b_O vs attention dense output", d_sum)
    assert d_slice < TOL and d_sum < TOL


def test_f_norms_are_the_norms_of_f(l6):
    """f_norms reads ||f|| through R_h (R_h^T R_h = W_O^h^T W_O^h) without forming f: it
    is the norm of f formed. A replaced W_O gets factors of its own; a head whose slice
    has rank < hs (no Cholesky factor: the eigenvalue square root) still reads right."""
    ids = token_ids(l6, SENTENCES[:2])
    model = encoder.Encoder.from_checkpoint(l6)
    out = model(*encoder.pad(ids))
    d = max(maxdiff(n, f.norm(dim=-1)) for n, f in zip(out.f_norms(), out.f))
    hs = l6.config.d_head
    dense = model.encoder.layer[0].attention.output.dense
    W = dense.weight.detach().clone()       # replaced, not edited: the checkpoint's own array
    W[:, hs:2 * hs] = 0                     # head 1 reads nothing: its ||f|| is 0
    W[:, 2 * hs] = W[:, 2 * hs + 1]         # head 2's slice: two equal columns, rank hs - 1
    dense.weight = torch.nn.Parameter(W, requires_grad=False)
    ids, mask = encoder.pad(ids)
    out = model(ids, mask)
    norms, f = out.f_norms()[0], out.f[0]
    real = norms.transpose(1, 2)[mask.bool()]  # [N, nh]: padded tokens have v = 0, so ||f|| = 0
    assert torch.count_nonzero(real[:, 1]) == 0 and real[:, 2].min() > 0
    d = max(d, maxdiff(norms, f.norm(dim=-1)))
    record("minilm-l6 f_norms vs the norm of f formed (a replaced, rank-deficient W_O included)", d)
    assert d < TOL


# --------------------------------------------------------------------------- MPNet


@pytest.fixture(scope="module")
def hf_mpnet(mpnet_members):
    pytest.importorskip("transformers")
    return hf_mpnet_model(mpnet_members)


def padded_batches(batch: list[list[int]], first: int, tokens: int = 2048) -> list[list[int]]:
    """Indices into `batch`, in padded batches: the first `first` (the tests' sentences, of
    varied lengths) and the longest and shortest of the rest together, a batch mostly
    padding; then the rest sorted by length, in batches of about `tokens` padded tokens
    (each padded to its longest, so padding is in every batch, a little of it)."""
    rest = sorted(range(first, len(batch)), key=lambda i: len(batch[i]))
    out = [[*range(first), rest.pop(), rest.pop(0)]]
    while rest:
        n = 1
        while n < len(rest) and (n + 1) * len(batch[rest[n]]) <= tokens:
            n += 1
        out.append(rest[:n])
        rest = rest[n:]
    return out


@pytest.mark.measured   # the whole corpus through three implementations, the oracle run once
def test_mpnet_on_the_corpus_three_ways(mpnet, hf_mpnet, study):
    """Reference, oracle and MPNetModel on the tests' sentences and the whole corpus, in
    padded batches (`padded_batches`: one mostly padding, the others of similar lengths):
    the embeddings' output and every layer's hidden state, and every layer's attention
    weights. Then, from the same passes (the oracle's `each` hook sees each sentence's whole
    output; the reference's is from_reference's per-batch step, `forward`), what the
    measurements read: alpha within F64_TOL; the hidden state, ||v|| and ||f|| within F64_TOL
    of their scale (the largest |value| of each sentence's array: up to ~12 for the norms).
    Reference and oracle are two float64 implementations (5e-14 apart, measured);
    transformers' MPNetModel runs in float32, within TOL of both (7e-6 measured): float32
    against float64, not a fault. (One padded batch of the whole corpus is ~4x the work, all
    of it padding: the corpus's longest sentence is several times its median.)"""
    sentences = SENTENCES + list(study.sentences)
    batch = token_ids(mpnet, sentences)
    cfg = mpnet.config
    groups = padded_batches(batch, len(SENTENCES))
    assert sorted(i for g in groups for i in g) == list(range(len(batch)))
    assert max(map(len, groups)) > 1 and len(groups[0]) == len(SENTENCES) + 2

    model = encoder.Encoder.from_checkpoint(mpnet)
    # Per sentence: L+1 hidden states (the embeddings' output, then each layer's) and L
    # attention weights, from the reference and from transformers, padding trimmed off; and
    # the reference's `Activations` (what from_reference hands the measurement), from the
    # same pass: activations.forward, from_reference's own, on these batches.
    ref_states: dict[int, list] = {}
    hf_states: dict[int, list] = {}
    hf_alpha: dict[int, list] = {}
    ref_acts: dict[int, activations.Activations] = {}
    for group in groups:
        ids, mask = encoder.pad([batch[i] for i in group])
        states = []  # the layers carry the real tokens only, [N, C]: laid out as [B, T, C]
        hooks = [model.embeddings.register_forward_hook(lambda m, i, o: states.append(o))]
        hooks += [layer.register_forward_hook(lambda m, i, o, real=mask.bool(): states.append(encoder.unpack(o[0], real)))
                  for layer in model.encoder.layer]
        try:
            ref = [acts for acts, _ in activations.forward(activations.Chunk(mpnet.name, model.perturbation,
                                                                            [batch[i] for i in group], False), model)]
        finally:
            for h in hooks:
                h.remove()
        with torch.no_grad():
            hf = hf_mpnet(
                input_ids=ids.masked_fill(mask == 0, 1), attention_mask=mask,
                output_attentions=True, output_hidden_states=True,
            )
        assert len(states) == len(hf.hidden_states) == cfg.n_layer + 1
        for b, i in enumerate(group):
            n = len(batch[i])
            # copies: a view would keep the whole batch's tensors alive
            ref_states[i] = [s[b, :n].numpy().copy() for s in states]
            hf_states[i] = [s[b, :n].numpy().copy() for s in hf.hidden_states]
            ref_acts[i] = ref[b]
            hf_alpha[i] = [a[b, :, :n, :n].numpy().copy() for a in hf.attentions]
        del ref, hf, states

    # Hidden states are compared relative to their scale (the largest |value| of the state):
    # transformers' twelve float32 layers on sentences of up to ~90 tokens drift a few 1e-5 in
    # absolute terms on values of size ~10, float32 rounding, not a fault. Attention weights
    # (at most 1): absolute.
    d = {k: 0.0 for k in ("ref-hf hidden", "ref-hf alpha", "ora-hf hidden", "ora-hf alpha", "ref-ora hidden", "ref-ora alpha")}

    def three_way(b: int, o) -> None:
        assert len(o.hidden_states) == cfg.n_layer + 1
        for i in range(cfg.n_layer + 1):
            r, h, x = ref_states[b][i], hf_states[b][i], o.hidden_states[i]
            scale = float(np.abs(x).max())
            d["ref-hf hidden"] = max(d["ref-hf hidden"], maxdiff(r, h) / scale)
            d["ora-hf hidden"] = max(d["ora-hf hidden"], maxdiff(x, h) / scale)
            d["ref-ora hidden"] = max(d["ref-ora hidden"], maxdiff(r, x) / scale)
        for i in range(cfg.n_layer):
            r, h, x = ref_acts[b].alpha[i], hf_alpha[b][i], o.alpha[i]
            d["ref-hf alpha"] = max(d["ref-hf alpha"], maxdiff(r, h))
            d["ora-hf alpha"] = max(d["ora-hf alpha"], maxdiff(x, h))
            d["ref-ora alpha"] = max(d["ref-ora alpha"], maxdiff(r, x))
        del ref_states[b], hf_states[b], hf_alpha[b]   # each sentence compared once

    oras = activations.from_oracle(mpnet, batch, each=three_way)
    assert not ref_states and len(oras) == len(batch), "the oracle did not return every sentence"
    names = {"ref": "reference", "hf": "transformers", "ora": "oracle"}
    for what, diff in d.items():
        pair, kind = what.split()
        a, b = pair.split("-")
        label = "every hidden state (relative to its scale)" if kind == "hidden" else "attention weights"
        record(f"mpnet-base {names[a]} vs {names[b]} {label}, {len(batch)} sentences", diff)
    assert all(x < TOL for x in d.values()), d
    assert d["ref-ora hidden"] < F64_TOL and d["ref-ora alpha"] < F64_TOL, d   # float64 against float64

    refs = [ref_acts[i] for i in range(len(batch))]
    absolute = {"alpha": 0.0, "hidden": 0.0, "value_norm": 0.0, "output_norm": 0.0}
    relative = {"hidden": 0.0, "value_norm": 0.0, "output_norm": 0.0}
    for r, o in zip(refs, oras, strict=True):
        for field in absolute:
            absolute[field] = max(absolute[field], maxdiff(getattr(r, field), getattr(o, field)))
        for field in relative:
            x, y = getattr(r, field), getattr(o, field)
            relative[field] = max(relative[field], maxdiff(x, y) / float(np.abs(y).max()))
    for field, diff in absolute.items():
        record(f"mpnet-base activations.from_reference vs activations.from_oracle {field}", diff)
    for field, diff in relative.items():
        record(f"mpnet-base activations.from_reference vs activations.from_oracle {field}, relative to scale", diff)
    assert absolute["alpha"] < F64_TOL, absolute
    assert max(relative.values()) < F64_TOL, relative


# Hand-computed buckets for 32 buckets, max distance 128: 16 for keys before the query
# (d = key - query <= 0), 16 after (d > 0, bucket + 16). Distance n = |d| < 8: bucket n;
# n >= 8: 8 + floor(log(n / 8) / log(128 / 8) * 8) = 8 + floor(2 log2(n / 8)), at most 15.
BUCKETS = {
    0: 0, -1: 1, -7: 7,     # exact: one bucket per distance
    1: 17, 7: 23,           # the same distances after the query: + 16
    -8: 8, -11: 8,          # 2 log2(11/8) = 0.92
    -12: 9,                 # 2 log2(12/8) = 1.17
    -16: 10, 16: 26,        # 2 log2(2) = 2 exactly
    -22: 10, -23: 11,       # 2 log2(22/8) = 2.92, 2 log2(23/8) = 3.05
    -90: 14, -91: 15,       # 2 log2(90/8) = 6.98, 2 log2(91/8) = 7.01
    -128: 15, -511: 15, 511: 31,  # past max_distance: the last bucket of each half
}


def test_relative_position_buckets_by_hand(mpnet):
    cfg = mpnet.config
    assert (cfg.rel_buckets, cfg.rel_max_distance) == (32, 128)
    d = torch.tensor(list(BUCKETS))
    ref = encoder.relative_position_bucket(d, cfg.rel_buckets, cfg.rel_max_distance).tolist()
    ora = [oracle.relative_bucket(int(x), cfg.rel_buckets, cfg.rel_max_distance) for x in BUCKETS]
    assert ref == list(BUCKETS.values())
    assert ora == list(BUCKETS.values())


def test_relative_position_buckets_match_transformers(mpnet):
    """Every distance a 512-token input can have, against MPNet's own function."""
    modeling = pytest.importorskip("transformers.models.mpnet.modeling_mpnet")
    cfg = mpnet.config
    d = torch.arange(-(cfg.max_position - 1), cfg.max_position)
    theirs = modeling.MPNetEncoder.relative_position_bucket(d, cfg.rel_buckets, cfg.rel_max_distance)
    ours = encoder.relative_position_bucket(d, cfg.rel_buckets, cfg.rel_max_distance)
    ora = torch.tensor([oracle.relative_bucket(int(x), cfg.rel_buckets, cfg.rel_max_distance) for x in d])
    assert torch.equal(ours, theirs) and torch.equal(ora, theirs)
    # every bucket is reached but 16: "after the query, distance 0" cannot happen
    assert set(theirs.tolist()) == set(range(32)) - {16}


def test_mpnet_position_bias_is_shared_and_moves_attention(mpnet):
    """The bias is added on every layer (zeroing the shared table moves every layer's
    alpha), and positions start at 2 (starting at 0 moves the hidden states)."""
    ids = token_ids(mpnet, [SENTENCES[1]])
    base = encoder.run(mpnet, ids)
    model = encoder.Encoder.from_checkpoint(mpnet)
    # Replaced, not zeroed in place: the parameters are the checkpoint's own arrays.
    table = model.encoder.relative_attention_bias
    table.weight = torch.nn.Parameter(torch.zeros_like(table.weight), requires_grad=False)
    no_bias = model(*encoder.pad(ids))
    moved = [maxdiff(a, b) for a, b in zip(base.alpha, no_bias.alpha)]
    assert min(moved) > 1e-3, moved
    model = encoder.Encoder.from_checkpoint(mpnet)
    model.embeddings.position_offset = 0
    assert maxdiff(model(*encoder.pad(ids)).hidden, base.hidden) > 1e-2


# --------------------------------------------------------------------------- float64

# The oracle is published as a float64 re-run: held to transformers run in float64, two
# float64 implementations agree to ~1e-14, while any step computed in float32 on the way
# (a cast, a LayerNorm, a softmax, the norms) leaves errors of 1e-8 and more. 1e-10 tells
# the two apart with orders of magnitude to spare on either side.
F64_TOL = 1e-10


def float64_differences(ckpt, model, sentences: list[str], **inputs) -> dict[str, float]:
    """The oracle against a transformers model in float64, sentence by sentence,
    unpadded: every layer's alpha, value vectors and ||f|| (formed here from the model's
    own value vectors and W_O, in float64), and every hidden state."""
    cfg = ckpt.config
    nh, hs = cfg.n_head, cfg.d_head
    d = {"alpha": 0.0, "value": 0.0, "f_norm": 0.0, "hidden states": 0.0}
    batch = token_ids(ckpt, sentences)
    for ids, o in zip(batch, oracle.forward(ckpt, batch), strict=True):
        arrays = [*o.alpha, *o.value, *o.f_norm, *o.hidden_states]
        assert all(a.dtype == np.float64 for a in arrays), "the oracle returned an array that is not float64"
        values = []
        hooks = [hf_value(layer).register_forward_hook(lambda m, i, out: values.append(out[0]))
                 for layer in model.encoder.layer]
        x = torch.tensor([ids])
        try:
            with torch.no_grad():
                hf = model(input_ids=x, output_attentions=True, output_hidden_states=True,
                           **{k: f(x) for k, f in inputs.items()})
        finally:
            for h in hooks:
                h.remove()
        for i, layer in enumerate(model.encoder.layer):
            v = values[i].view(len(ids), nh, hs).transpose(0, 1)  # [T, C] -> [nh, T, hs]
            W_O = hf_output_projection(layer).weight.detach()     # [C, C]
            f_norm = torch.stack([(v[h] @ W_O[:, h * hs:(h + 1) * hs].T).norm(dim=-1) for h in range(nh)])
            d["alpha"] = max(d["alpha"], maxdiff(hf.attentions[i][0], o.alpha[i]))
            d["value"] = max(d["value"], maxdiff(v, o.value[i]))
            d["f_norm"] = max(d["f_norm"], maxdiff(f_norm, o.f_norm[i]))
        for h, state in zip(hf.hidden_states, o.hidden_states, strict=True):
            d["hidden states"] = max(d["hidden states"], maxdiff(h[0], state))
    for what, diff in d.items():
        record(f"{ckpt.name} oracle vs transformers in float64 ({len(sentences)} sent.), {what}, tol {F64_TOL:.0e}", diff)
    return d


@pytest.mark.models   # transformers' BertModel, a peer model like hf_model's: make test
def test_the_oracle_is_float64_against_bertmodel_in_float64(l6, study):
    """BertModel in float64 (eager attention) from the package's own folder, on the
    tests' sentences and the first corpus sentences."""
    from transformers import BertModel

    with quiet_transformers():
        model = BertModel.from_pretrained(str(l6.weights_path.parent), attn_implementation="eager",
                                          add_pooling_layer=False, dtype=torch.float64).eval()
    assert next(model.parameters()).dtype == torch.float64
    sentences = SENTENCES + list(study.sentences[:4])
    d = float64_differences(l6, model, sentences, token_type_ids=torch.zeros_like)
    assert max(d.values()) < F64_TOL, d


def test_the_mpnet_oracle_is_float64_against_mpnetmodel_in_float64(mpnet, mpnet_members):
    """MPNetModel in float64 on one sentence with subwords: the relative-position bias
    and MPNet's positions are in the oracle's float64 path too."""
    pytest.importorskip("transformers")
    model = hf_mpnet_model(mpnet_members).double()
    assert next(model.parameters()).dtype == torch.float64
    d = float64_differences(mpnet, model, [SENTENCES[1]])
    assert max(d.values()) < F64_TOL, d
