"""Part 10's reference means (docs/study.yml `mean_ablation`): per layer and head, the value
vectors of [CLS], of [SEP] and of the content tokens averaged over the sentences of corpus.tsv's
fit half, from the reference's own layer inputs (v = x W_V + b_V, in float64). The truth replaces
a set's values by these means, as far as the word's row of alpha sees them
(ground_truth.mean_ablated).

Not here: the intervention (model/ground_truth.py), the runs it is measured in
(model/calibration/truths.py).
"""
from __future__ import annotations

import numpy as np


def value_means(weights: list, inputs, sentences: list[int]) -> list:
    """The reference means of every layer (`weights`: ground_truth.layer_weights of each), over
    the `sentences` whose layer inputs `inputs` (truth.LayerInputs) holds: a ValueMeans a layer.
    One thread of arithmetic, in corpus order: the same sums wherever the measurement runs."""
    import torch

    from .. import cluster
    from ..ground_truth import ValueMeans

    L = len(weights)
    nh, hs = weights[0].W_O.shape[1], weights[0].W_O.shape[2]
    sums = np.zeros((L, 3, nh, hs))          # [CLS], [SEP], content
    n_content = 0
    with cluster.one_thread(), torch.no_grad():
        for i in sentences:
            x = torch.from_numpy(np.asarray(inputs.read(i)))                        # [L, T, C]
            for l, w in enumerate(weights):
                v = (x[l] @ w.W_V.T + w.b_V).view(x.shape[1], nh, hs).numpy()     # [T, nh, hs]
                sums[l, 0] += v[0]
                sums[l, 1] += v[-1]
                sums[l, 2] += v[1:-1].sum(axis=0)
            n_content += x.shape[1] - 2
    means = sums / np.array([len(sentences), len(sentences), n_content])[None, :, None, None]
    return [ValueMeans(*(torch.from_numpy(means[l, k].copy()) for k in range(3))) for l in range(L)]
