"""Shared fixtures. Nothing here touches the network: sockets are blocked by
pytest-socket (pyproject.toml) and the Hugging Face hub is told it is offline."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def l6():
    from model import weights

    return weights.load("minilm-l6")


@pytest.fixture(scope="session")
def l3():
    from model import weights

    return weights.load("minilm-l3")


@pytest.fixture(params=["minilm-l6", "minilm-l3"], scope="session")
def ckpt(request, l6, l3):
    return {"minilm-l6": l6, "minilm-l3": l3}[request.param]


@pytest.fixture(scope="session")
def study():
    from model import study as study_mod

    return study_mod.load(ROOT / "docs" / "study.yml")


@pytest.fixture
def l6_folder(tmp_path, l6) -> Path:
    """A writable copy of the packaged L6 folder, to break on purpose."""
    dst = tmp_path / "l6"
    shutil.copytree(l6.weights_path.parent, dst, ignore=shutil.ignore_patterns("1_Pooling", "*.md"))
    return dst
