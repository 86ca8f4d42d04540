"""What a loaded checkpoint is: its config, its tensors under BertModel's names, and
where they came from.

Tensor names are those of `transformers`' BertModel without the `bert.` prefix
(`encoder.layer.0.attention.self.query.weight`, Linear weights [out, in]); every format
is read into these names, then held to `expected_shapes` before anything uses it.

Provenance: every checkpoint carries the sha256 of its weights file (or zip member),
part of every result, and `files`, the sha256 of every file it was read from.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..tokenize import TokenizerJSON
from .mpnet import MPNET_PAD_ID


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
    type_vocab_size: int  # token-type (segment) embeddings; 0: none (MPNet)
    layer_norm_eps: float
    # MPNet (Song et al. 2020) as a difference from BERT; the defaults are BERT.
    position_offset: int = 0     # first token's position id: MPNet's is 2, past its padding index 1
    rel_buckets: int = 0         # relative-position bias buckets, shared by all layers; 0: none (BERT)
    rel_max_distance: int = 128  # distances from here on share the last bucket (fixed in MPNet's code)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head

    def forward_flops(self, T: int) -> int:
        """Floating-point operations of one forward pass over T tokens (a multiply-add is two):
        per layer, the four projections (Q, K, V, O: 4 T C^2), the FFN (2 T C F), and the
        attention's scores and mix (2 T^2 C); embeddings, norms and softmax are left out."""
        C, F = self.d_model, self.d_ff
        return 2 * self.n_layer * (4 * T * C * C + 2 * T * C * F + 2 * T * T * C)


@dataclass
class Checkpoint:
    name: str                         # short name ("minilm-l6") or the folder given
    config: EncoderConfig
    tensors: dict[str, np.ndarray]    # BertModel names -> float32 arrays
    weights_path: Path                # the weights file; for a split zip, its first part
    sha256: str                       # of the weights file (or the zip's weights member)
    tokenizer_dir: Path | TokenizerJSON  # holds tokenizer.json or vocab.txt; or tokenizer.json's text
    source: str = ""                  # "safetensors", "onnx" or "split-zip" (safetensors inside)
    notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # every file read (name) -> its sha256


def expected_shapes(cfg: EncoderConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the encoder needs, with its shape (Linear weights are [out, in])."""
    C, F = cfg.d_model, cfg.d_ff
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (cfg.vocab_size, C),
        "embeddings.position_embeddings.weight": (cfg.position_offset + cfg.max_position, C),
    }
    if cfg.type_vocab_size:
        shapes["embeddings.token_type_embeddings.weight"] = (cfg.type_vocab_size, C)
    shapes["embeddings.LayerNorm.weight"] = (C,)
    shapes["embeddings.LayerNorm.bias"] = (C,)
    if cfg.rel_buckets:
        shapes["encoder.relative_attention_bias.weight"] = (cfg.rel_buckets, cfg.n_head)
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


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def read_config(folder: Path) -> EncoderConfig:
    path = folder / "config.json"
    if not path.is_file():
        raise WeightsError(f"{path}: config.json is missing (a Hugging Face model folder needs one)")
    return parse_config(path.read_bytes(), path)


def parse_config(text: bytes | str, where: Path | str) -> EncoderConfig:
    """config.json's text -> EncoderConfig; `model_type: mpnet` adds MPNet's differences."""
    try:
        raw = json.loads(text)
        mpnet = raw.get("model_type") == "mpnet"
        offset = MPNET_PAD_ID + 1 if mpnet else 0
        return EncoderConfig(
            n_layer=int(raw["num_hidden_layers"]),
            n_head=int(raw["num_attention_heads"]),
            d_model=int(raw["hidden_size"]),
            d_ff=int(raw["intermediate_size"]),
            vocab_size=int(raw["vocab_size"]),
            # MPNet's table has rows for the ids below the offset too (514 = 2 + 512).
            max_position=int(raw["max_position_embeddings"]) - offset,
            type_vocab_size=0 if mpnet else int(raw.get("type_vocab_size", 2)),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
            position_offset=offset,
            rel_buckets=int(raw["relative_attention_num_buckets"]) if mpnet else 0,
        )
    except json.JSONDecodeError as exc:
        raise WeightsError(f"{where}: not valid JSON ({exc})") from exc
    except KeyError as exc:
        raise WeightsError(f"{where}: missing key {exc.args[0]!r}") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise WeightsError(f"{where}: malformed value ({exc})") from exc


def check_tensors(
    tensors: dict[str, np.ndarray], cfg: EncoderConfig, where: Path | str
) -> dict[str, np.ndarray]:
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
