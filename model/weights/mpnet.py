"""MPNet as BERT: its tensors' names, and its position offset.

MPNet (Song et al. 2020) is BERT's attention under other names, plus one tensor of its
own (the relative-position bias every layer shares, which keeps its name). A five-line
table renames the rest to `transformers`' BertModel names, so the reference encoder's
`state_dict` matches any checkpoint one to one.
"""
from __future__ import annotations

import re

import numpy as np

# MPNet's names for BERT's modules inside `encoder.layer.{i}.`: the same attention, with
# Q, K, V and the output projection in one module and its LayerNorm one level up.
MPNET_NAMES = {
    "attention.attn.q": "attention.self.query",
    "attention.attn.k": "attention.self.key",
    "attention.attn.v": "attention.self.value",
    "attention.attn.o": "attention.output.dense",
    "attention.LayerNorm": "attention.output.LayerNorm",
}
MPNET_PAD_ID = 1  # MPNet's padding index, fixed in its code (as RoBERTa's); positions start past it


def bert_names(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A checkpoint's tensor names -> BertModel's: prefixes of task models dropped
    ("bert.", "mpnet."), MPNet's module names renamed through MPNET_NAMES."""
    out = {}
    for name, arr in tensors.items():
        name = name.removeprefix("bert.").removeprefix("mpnet.")
        m = re.fullmatch(r"(encoder\.layer\.\d+\.)(.+)\.(weight|bias)", name)
        if m and m.group(2) in MPNET_NAMES:
            name = f"{m.group(1)}{MPNET_NAMES[m.group(2)]}.{m.group(3)}"
        out[name] = arr
    return out
