"""The browser runtime's files: one checkpoint's weights and tokenizer, as the page fetches them.

`export(ckpt, folder)` is a pure function of the checkpoint (site path -> bytes), so the
build can cache its output by the weights' digest. What it writes, under `folder`:

- `manifest.json`: the config, every file with its size, and where each tensor sits;
- `tokenizer.json`: the vocabulary, the special tokens, WordPiece's settings, and the
  normalizer and pre-tokenizer as a per-character table read off `tokenizers` itself
  (`char_table`), so the JavaScript tokenizer never depends on the Unicode tables of
  the reader's browser;
- `base.bin`: position and token-type embeddings and the embedding LayerNorm;
- `layer-<i>.bin`: one encoder layer's sixteen tensors;
- `emb/<chunk>.bin`: the word-embedding table in chunks of `ROWS_PER_CHUNK` rows, so a
  sentence fetches only the chunks of its own token ids (the table is half the weights).

Tensors are float32 little-endian, exactly the checkpoint's values (no quantization: the
runtime is held to the reference within the tolerance of study.yml). Names and layouts
are those of `model/weights/` (Linear weights [out, in]).
"""
from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..weights import Checkpoint, expected_shapes

FORMAT = 1
ROWS_PER_CHUNK = 64   # 96 KB a chunk at hidden 384: a 20-word sentence fetches ~2 MB of them
_SEP = "\u2603"       # a probe separator: a symbol the normalizer keeps and never produces
_PROBE = 4096         # code points per probe call

# Hangul syllables decompose (NFD) into jamo by arithmetic; the JS does the same, so the
# 11 172 syllables need no table rows (checked against the tokenizer below).
_HANGUL = (0xAC00, 0xD7A3)


class RuntimeExportError(ValueError):
    """A checkpoint or tokenizer the browser runtime cannot reproduce; says what is unsupported."""


# -- tokenizer --------------------------------------------------------------------------------

def _ranges(cps: list[int]) -> list[list[int]]:
    """Sorted code points -> [[first, last], ...] of consecutive runs."""
    out: list[list[int]] = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def _hangul_nfd(cp: int) -> str:
    s = cp - 0xAC00
    lead, vowel, tail = 0x1100 + s // 588, 0x1161 + (s % 588) // 28, 0x11A7 + s % 28
    return chr(lead) + chr(vowel) + (chr(tail) if tail != 0x11A7 else "")


def char_table(normalizer, pre_tokenizer) -> dict:
    """The normalizer and the pre-tokenizer, one code point at a time, as `tokenizers` runs them.

    BertNormalizer works character by character (clean, pad CJK, NFD, drop Mn, lowercase),
    so the normalized text is the concatenation of each character's image. Every code
    point is probed in one call, separated by a character the normalizer leaves alone.
    The table keeps only the characters whose image is not themselves:
      delete  ranges normalized away; space  ranges that become " "; pad  ranges that
      become " c " (CJK); map  code point -> image; hangul  syllables decompose by rule.
    And for the pre-tokenizer, which runs on normalized text: `split` ranges (removed,
    they separate words) and `isolate` ranges (each a word of its own: punctuation).
    """
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != ord(_SEP)]
    if normalizer.normalize_str(_SEP) != _SEP:
        raise RuntimeExportError(f"the normalizer changes the probe separator U+{ord(_SEP):04X}")
    delete, space, pad, mapping, split, isolate = [], [], [], {}, [], []
    for at in range(0, len(cps), _PROBE):  # in slices: the library is slow on one huge string
        block = cps[at:at + _PROBE]
        probe = _SEP.join(map(chr, block))
        images = normalizer.normalize_str(probe).split(_SEP)
        if len(images) != len(block):
            raise RuntimeExportError("the normalizer is not character by character (the probe lost its alignment)")
        for cp, img in zip(block, images):
            ch = chr(cp)
            if img == ch:
                continue
            if img == "":
                delete.append(cp)
            elif img == " ":
                space.append(cp)
            elif img == f" {ch} ":
                pad.append(cp)
            elif _HANGUL[0] <= cp <= _HANGUL[1]:
                if img != _hangul_nfd(cp):
                    raise RuntimeExportError(f"Hangul U+{cp:04X} does not decompose by rule under this normalizer")
            else:
                mapping[str(cp)] = img
        # The pre-tokenizer on the raw characters between separators: a character that
        # is removed splits words; one that comes back alone is isolated (punctuation).
        kept = np.zeros(len(probe), dtype=bool)
        for text, (a, b) in pre_tokenizer.pre_tokenize_str(probe):
            kept[a:b] = True
            if b - a == 1 and text != _SEP:
                isolate.append(ord(text))
        gone = [ord(probe[i]) for i in np.flatnonzero(~kept)]
        if ord(_SEP) in gone:
            raise RuntimeExportError("the pre-tokenizer removes the probe separator")
        split.extend(gone)
    return {
        "delete": _ranges(delete), "space": _ranges(space), "pad": _ranges(pad), "map": mapping,
        "hangul": True, "split": _ranges(sorted(set(split))), "isolate": _ranges(sorted(set(isolate))),
    }


def tokenizer_record(tok) -> dict:
    """A `tokenizers.Tokenizer` (BertNormalizer + BertPreTokenizer + WordPiece) as the JS
    tokenizer reads it; anything else raises `RuntimeExportError` naming what differs."""
    kinds = (type(tok.normalizer).__name__, type(tok.pre_tokenizer).__name__, type(tok.model).__name__)
    if kinds != ("BertNormalizer", "BertPreTokenizer", "WordPiece"):
        raise RuntimeExportError(f"the runtime tokenizer supports BertNormalizer + BertPreTokenizer + WordPiece, not {kinds}")
    vocab = tok.get_vocab(with_added_tokens=True)
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise RuntimeExportError("vocabulary ids are not 0..n-1")
    added = []
    for i, t in sorted(tok.get_added_tokens_decoder().items()):
        if t.normalized or t.lstrip or t.rstrip or t.single_word:
            raise RuntimeExportError(f"added token {t.content!r}: only plain, unnormalized added tokens are supported")
        added.append({"id": int(i), "content": t.content})
    tok.no_truncation()
    tok.no_padding()
    enc = tok.encode("a")
    if len(enc.ids) != 3:
        raise RuntimeExportError("the post-processor must add exactly [CLS] ... [SEP]")
    m = tok.model
    return {
        "vocab": [t for t, _ in by_id],
        "unk": m.unk_token,
        "prefix": m.continuing_subword_prefix,
        "max_chars": int(m.max_input_chars_per_word),
        "cls": int(enc.ids[0]),
        "sep": int(enc.ids[-1]),
        "added": added,
        "chars": char_table(tok.normalizer, tok.pre_tokenizer),
        # Python's is_punctuation (model/instrument.py) decides which words get no row;
        # its Unicode version is the build's, so the punctuation classes travel too.
        "punct": _ranges([c for c in range(0x110000) if unicodedata.category(chr(c)).startswith("P")]),
    }


# -- weights ----------------------------------------------------------------------------------

_LAYER = [f"{m}.{p}" for m in ("attention.self.query", "attention.self.key", "attention.self.value",
                                "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                                "output.dense", "output.LayerNorm") for p in ("weight", "bias")]


def bert_tensors(n_layer: int) -> list[str]:
    """Every tensor the JS encoder reads, by its checkpoint name."""
    emb = [f"embeddings.{t}" for t in ("word_embeddings.weight", "position_embeddings.weight",
                                        "token_type_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias")]
    return emb + [f"encoder.layer.{i}.{n}" for i in range(n_layer) for n in _LAYER]


def _f32(arr: np.ndarray) -> bytes:
    return np.ascontiguousarray(arr, dtype="<f4").tobytes()


def _pack(names: list[str], tensors: dict[str, np.ndarray]) -> tuple[bytes, dict]:
    """Tensors one after the other; name -> [offset in floats, shape]."""
    parts, where, offset = [], {}, 0
    for name in names:
        arr = tensors[name]
        where[name] = [offset, list(arr.shape)]
        parts.append(_f32(arr))
        offset += arr.size
    return b"".join(parts), where


@lru_cache(maxsize=4)
def tokenizer_file(tokenizer_dir: Path) -> tuple[bytes, int]:
    """(tokenizer.json bytes, vocabulary size); two models sharing a vocabulary probe it once."""
    from ..tokenize import load_tokenizer

    rec = tokenizer_record(load_tokenizer(tokenizer_dir))
    return json.dumps(rec, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), len(rec["vocab"])


def export(ckpt: Checkpoint, folder: str) -> dict[str, bytes]:
    """Site path (under `folder`) -> bytes: everything the browser runtime fetches for `ckpt`."""
    cfg = ckpt.config
    folder = folder.rstrip("/")
    version = ckpt.sha256[:12]  # in every data URL: new weights never meet a stale browser cache
    shapes = expected_shapes(cfg)
    # The JS encoder is BERT's forward pass (docs/javascripts/instrument/encoder.js): a
    # checkpoint with any other tensor (MPNet's relative position bias, say) needs more.
    if set(ckpt.tensors) != set(bert_tensors(cfg.n_layer)):
        other = sorted(set(ckpt.tensors) ^ set(bert_tensors(cfg.n_layer)))
        raise RuntimeExportError(f"{ckpt.name}: not a plain BERT encoder (tensors {other[:3]} ...)")
    files: dict[str, bytes] = {}
    entries = []

    def add(rel: str, data: bytes, tensors: dict | None = None) -> None:
        files[f"{folder}/{rel}"] = data
        entries.append({"url": f"{rel}?v={version}", "bytes": len(data), **({"tensors": tensors} if tensors else {})})

    tokenizer, n_vocab = tokenizer_file(Path(ckpt.tokenizer_dir))
    if n_vocab != cfg.vocab_size:
        raise RuntimeExportError(f"{ckpt.tokenizer_dir}: tokenizer has {n_vocab} tokens, the model {cfg.vocab_size}")
    files[f"{folder}/tokenizer.json"] = tokenizer

    base = [n for n in shapes if n.startswith("embeddings.") and n != "embeddings.word_embeddings.weight"]
    add("base.bin", *_pack(base, ckpt.tensors))
    for i in range(cfg.n_layer):
        names = [n for n in shapes if n.startswith(f"encoder.layer.{i}.")]
        add(f"layer-{i}.bin", *_pack(names, ckpt.tensors))

    table = ckpt.tensors["embeddings.word_embeddings.weight"]  # [vocab, C]
    n_chunks = -(-cfg.vocab_size // ROWS_PER_CHUNK)
    for k in range(n_chunks):
        files[f"{folder}/emb/{k}.bin"] = _f32(table[k * ROWS_PER_CHUNK:(k + 1) * ROWS_PER_CHUNK])

    manifest = {
        "format": FORMAT,
        "model": ckpt.name,
        "sha256": ckpt.sha256,
        "config": {
            "n_layer": cfg.n_layer, "n_head": cfg.n_head, "d_model": cfg.d_model, "d_ff": cfg.d_ff,
            "vocab_size": cfg.vocab_size, "max_position": cfg.max_position, "layer_norm_eps": cfg.layer_norm_eps,
        },
        "tokenizer": {"url": f"tokenizer.json?v={version}", "bytes": len(tokenizer)},
        "files": entries,
        "embeddings": {
            "url": f"emb/{{chunk}}.bin?v={version}", "rows_per_chunk": ROWS_PER_CHUNK, "n_chunks": n_chunks,
            "chunk_bytes": ROWS_PER_CHUNK * cfg.d_model * 4, "table_bytes": int(table.size * 4),
        },
    }
    files[f"{folder}/manifest.json"] = json.dumps(manifest, indent=1).encode("utf-8")
    return files
