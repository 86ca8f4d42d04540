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


@pytest.fixture(scope="session")
def mpnet():
    from model import weights

    return weights.load("mpnet-base")


@pytest.fixture(scope="session")
def mpnet_members() -> dict[str, bytes]:
    """config.json and model.safetensors of the mpnet-base zip, read on a path of their
    own (the parts concatenated in memory, the standard zipfile), not the loader's."""
    import io
    import zipfile

    from model import weights

    spec = weights.SPLIT_ZIPS["mpnet-base"]
    joined = b"".join(weights.package_file(dist, rel).read_bytes() for dist, rel in spec.parts)
    with zipfile.ZipFile(io.BytesIO(joined)) as zf:
        return {name: zf.read(f"{spec.folder}/{name}") for name in ("config.json", "model.safetensors")}


@pytest.fixture(params=["minilm-l6", "minilm-l3", "mpnet-base"], scope="session")
def ckpt(request):
    return request.getfixturevalue({"minilm-l6": "l6", "minilm-l3": "l3", "mpnet-base": "mpnet"}[request.param])


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


# -- the built site, served on localhost, and a headless Chromium -------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SCREENSHOTS = ROOT / "tests" / "screenshots"  # ignored by git; look at them


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """`mkdocs build --strict` of the real project into a temporary folder."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="session")
def site_url(built_site):
    """The built site served by a thread on 127.0.0.1 (the only host tests may reach)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: `make test` installs it (apt-get install -y chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page that records console errors and every request's URL."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.console_errors = []
    pg.requests = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    context.close()


# -- a temporary copy of the project, to break on purpose ----------------------------------

@pytest.fixture
def project(tmp_path) -> Path:
    """mkdocs.yml, docs/ and hooks/ copied into tmp_path, with the results cache seeded
    from the working tree's (same key, so no model run), never the working tree itself."""
    for name in ("mkdocs.yml",):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("docs", "hooks"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    if (ROOT / ".cache").is_dir():
        shutil.copytree(ROOT / ".cache", tmp_path / ".cache", ignore=shutil.ignore_patterns("*.tmp"))
    return tmp_path


def mkdocs_build(project: Path, *args: str, check: bool = False):
    """`mkdocs build --strict` of a project copy in a subprocess; returns the CompletedProcess."""
    import subprocess
    import sys

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *args],
        cwd=project, capture_output=True, text=True, env=env,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc
