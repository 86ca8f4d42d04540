"""Two kernel paths of one machine, in float64: how far apart they put the study.

The study's floors rest on this measurement (docs/study.yml, `picks` and `simulated_machine`):
the same study measured in two processes that differ only in torch's kernels, the CPU's own
(AVX2, AVX-512) and the generic ones (`ATEN_CPU_CAPABILITY=default`; MKL's products still
follow the CPU), is about as far apart as two readers' machines are. From the two:

- every published margin (each statistic's `margins` and each row's, model/picks.py: how near
  a count, pick or verdict came to turning) within 1% of turning, from the two results.json:
  the largest move;
- every layer's attention weights and output over corpus.tsv, per model (the reference's
  forward pass, `dump`): the largest difference relative to the layer's largest value.

`margin_floor` is to be at least 1000x the first, the simulated machine's nudge 1000x the
second; `make bench` prints both beside study.yml's settings.

    python -m bench.kernels dump OUT.npz STUDY     (in a subprocess: one kernel path's layers)
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

GENERIC = {"ATEN_CPU_CAPABILITY": "default"}
EVERY = 2   # the layers of every 2nd sentence of corpus.tsv: the largest difference, at half the disk


def dump(out: Path, study_path: Path) -> None:
    """Every layer's attention weights and output, every EVERY-th sentence of the corpus, each
    model, into `out` (npz: "{key}.{sentence}.alpha" [L, nh, T, T], "{key}.{sentence}.output" [L, T, C])."""
    import torch

    from model import encoder, study, weights
    from model.corpus import tokenize_all

    st = study.load(study_path)
    arrays = {}
    torch.set_num_threads(1)
    for spec in st.models:
        ckpt = weights.load(spec.name)
        model = encoder.Encoder.from_checkpoint(ckpt)
        toks = tokenize_all(ckpt, list(st.sentences), str(st.corpus_path))
        for i in range(0, len(toks), EVERY):
            o = model(*encoder.pad([toks[i].ids]), keep_inputs=True)
            outputs = [*o.inputs[1:], o.hidden]                      # layer l's output is layer l + 1's input
            arrays[f"{spec.key}.{i}.alpha"] = torch.stack([a[0] for a in o.alpha]).numpy()
            arrays[f"{spec.key}.{i}.output"] = torch.stack([x[0] for x in outputs]).numpy()
    np.savez(out, **arrays)


def layer_differences(a: Path, b: Path) -> dict[str, dict[str, list[float]]]:
    """key -> {"alpha", "output"} -> per layer, the largest |a - b| over the layer's largest |a|."""
    out: dict[str, dict[str, list[float]]] = {}
    with np.load(a) as x, np.load(b) as y:
        for name in x.files:
            key, _, what = name.split(".")
            d = np.abs(x[name] - y[name]).reshape(len(x[name]), -1).max(axis=1)
            size = np.abs(x[name]).reshape(len(x[name]), -1).max(axis=1)
            layers = out.setdefault(key, {}).setdefault(what, [0.0] * len(d))
            for l, rel in enumerate(d / size):
                layers[l] = max(layers[l], float(rel))
    return out


NEAR = 0.01   # margins within 1% of turning (study.yml kernel_paths.near): a larger one cannot come near the floor


def margins(results: dict) -> dict[str, float]:
    """Every published margin of a results.json, path -> margin: each statistic's `margins`
    (a [margin, step] pair) and every row's margin column (rows tables: a list per column
    whose name ends in "margin"); None (no margin) left out."""
    found: dict[str, float] = {}

    def walk(node, path: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "margins" and isinstance(v, dict):
                    for name, pair in v.items():
                        if isinstance(pair, list) and pair and isinstance(pair[0], (int, float)):
                            found[f"{path}.{name}"] = float(pair[0])
                elif str(k).endswith("margin") and isinstance(v, list):
                    found.update({f"{path}.{k}[{i}]": float(m) for i, m in enumerate(v) if isinstance(m, (int, float))})
                else:
                    walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(node, list) and node and isinstance(node[0], (dict, list)):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(results, "")
    return found


def margin_moves(a: dict, b: dict) -> tuple[float, str, int]:
    """(the largest move between two results of a margin within NEAR of turning in either,
    where, how many such margins were compared)."""
    ma, mb = margins(a), margins(b)
    near = [k for k in ma if k in mb and math.isfinite(ma[k]) and math.isfinite(mb[k]) and min(ma[k], mb[k]) < NEAR]
    if not near:
        return 0.0, "", 0
    where = max(near, key=lambda k: abs(ma[k] - mb[k]))
    return abs(ma[where] - mb[where]), where, len(near)


def measure(src: Path, tmp: Path, say) -> dict:
    """The study measured on both kernel paths (two processes each: the whole measurement, and
    the layers' dump), and what separates them."""
    from .builds import env

    study_path = src / "docs" / "study.yml"
    paths = {"cpu": {}, "generic": GENERIC}
    figures: dict = {"results": {}, "dumps": {}}
    for name, extra in paths.items():
        say(f"kernel paths: the study measured on the {name} kernels (minutes)...")
        results = tmp / f"kernels-{name}.json"
        log = tmp / f"kernels-{name}.log"
        with open(log, "w") as fh:
            subprocess.run([sys.executable, "-m", "model", "--study", str(study_path), "measure", "--results",
                            str(results)], cwd=tmp, env=env(src, **extra), stdout=fh, stderr=subprocess.STDOUT,
                           check=True)
            dumped = tmp / f"kernels-{name}.npz"
            subprocess.run([sys.executable, "-m", "bench.kernels", "dump", str(dumped), str(study_path)], cwd=tmp,
                           env=env(src, **extra, PYTHONPATH=os.pathsep.join([str(src), str(Path(__file__).parents[1])])),
                           stdout=fh, stderr=subprocess.STDOUT, check=True)
        figures["results"][name] = json.loads(results.read_text(encoding="utf-8"))
        figures["dumps"][name] = dumped
    move, where, n = margin_moves(figures["results"]["cpu"], figures["results"]["generic"])
    layers = layer_differences(figures["dumps"]["cpu"], figures["dumps"]["generic"])
    return {"margin_move": move, "margin_where": where, "margins_compared": n, "layers": layers,
            "largest_layer": max(v for per in layers.values() for what in per.values() for v in what)}


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit("usage: python -m bench.kernels dump OUT.npz STUDY")
