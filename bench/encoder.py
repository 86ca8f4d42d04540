"""The reference encoder against transformers' BertModel, on a sample of the corpus as one padded batch.

Our `Encoder.forward` plus the norms the measurement reads (`f_norms`), against
BertModel with eager attention and `output_attentions=True` (the closest stock call:
it returns alpha, which we need; we also return v and ||f||), same weights, same
threads, under no_grad, runs interleaved so drift hits both alike.
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path


def compare(study_path: Path, every: int = 5, repeats: int = 3) -> dict:
    """Both on every `every`-th corpus sentence, one padded batch (the whole corpus takes
    about 15 s a pass here: too long to repeat in every bench run)."""
    import torch
    from transformers import BertConfig, BertModel

    from model import encoder, study as study_mod, weights
    from model.corpus import tokenize_all

    study = study_mod.load(study_path)
    spec = study.models[0]
    ckpt = weights.load(spec.name)
    if ckpt.config.rel_buckets or ckpt.config.position_offset:
        raise SystemExit(f"bench: {spec.name} is not a BERT; the comparison needs BertModel's architecture")
    toks = tokenize_all(ckpt, list(study.sentences)[::every], "corpus")
    ids, mask = encoder.pad([t.ids for t in toks])
    cfg = ckpt.config
    ours = encoder.Encoder.from_checkpoint(ckpt)
    hf = BertModel(BertConfig(
        vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, num_hidden_layers=cfg.n_layer,
        num_attention_heads=cfg.n_head, intermediate_size=cfg.d_ff, max_position_embeddings=cfg.max_position,
        type_vocab_size=cfg.type_vocab_size, layer_norm_eps=cfg.layer_norm_eps, hidden_act="gelu",
        attn_implementation="eager"), add_pooling_layer=False)
    hf.load_state_dict({k: torch.tensor(v) for k, v in ckpt.tensors.items()}, strict=True)
    hf.eval()
    type_ids = torch.zeros_like(ids)

    def run_ours():
        out = ours(ids, mask)
        out.f_norms()  # what the measurement reads: ||f|| per token and head
        return out

    def run_hf():
        with torch.no_grad():
            return hf(input_ids=ids, attention_mask=mask, token_type_ids=type_ids, output_attentions=True)

    a, h = run_ours(), run_hf()   # also warms both up
    real = mask.bool()
    diff_hidden = float((a.hidden - h.last_hidden_state)[real].abs().max())
    # every real token's attention row (a padded query's row is no token's: ours leaves it
    # at the bias alone, BertModel computes it from the padding's embedding)
    diff_alpha = max(float((x - y).transpose(1, 2)[real].abs().max()) for x, y in zip(a.alpha, h.attentions))
    t_ours, t_hf = [], []
    for _ in range(repeats):
        for fn, times in ((run_ours, t_ours), (run_hf, t_hf)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return {"model": spec.name, "B": int(ids.shape[0]), "T": int(ids.shape[1]), "threads": torch.get_num_threads(),
            "ours": statistics.median(t_ours), "hf": statistics.median(t_hf), "repeats": repeats, "every": every,
            "diff_hidden": diff_hidden, "diff_alpha": diff_alpha}
