"""`make serve`, measured as an author meets it: a saved prose edit, until the page shows it.

`mkdocs serve` runs as `make serve` runs it (SERVE_ARGS) in a copy of the project, on a
free port. After its first build, each round changes one plain prose line of the page
(a token of its own), saves, and polls the served page (plain HTTP, every POLL_S) until
the token is in it: the seconds from the save to the page, the file watcher's delay and
the rebuild included. The same on the rendered tree (`python -m model render`) without
hooks gives the floor.
"""
from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from . import builds

SERVE_ARGS = ["serve", "--dirty", "--no-strict"]   # as the Makefile's `serve` target (keep them alike)
POLL_S = 0.02
FIRST_BUILD_S = 900     # a cold first build measures the models
SAVE_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_url(page: str) -> str:
    """"articles/norm-lens.md" -> "articles/norm-lens/" (use_directory_urls)."""
    stem = page.removesuffix(".md")
    return "" if stem == "index" else (stem.removesuffix("/index") + "/")


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


_PROSE = re.compile(r"^[A-Za-z][^|<>{}`\[\]]{40,}$")


def edit_line(path: Path) -> int:
    """The line to edit in a page: its first plain prose line (no template, link or table)."""
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
        if _PROSE.match(line):
            return i
    raise SystemExit(f"bench: no plain prose line to edit in {path}")


def save_to_page(copy: Path, src: Path, cache_dir: Path | None, page: str, saves: int, log: Path) -> list[float]:
    """Seconds from each of `saves` saves of `page` to the served page showing the edit,
    under `mkdocs serve` in `copy` (hooked, its cache in `cache_dir`; or plain if None)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/{page_url(page)}"
    extra = {"LIVE_NUMBERS_CACHE": str(cache_dir)} if cache_dir else {}
    path = copy / "docs" / page
    line = edit_line(path)
    original = path.read_text(encoding="utf-8").split("\n")
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mkdocs", *SERVE_ARGS, "-a", f"127.0.0.1:{port}"], cwd=copy,
                                env=builds.env(src, **extra), stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + FIRST_BUILD_S
            while fetch(url) is None:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise builds.Failed(f"`mkdocs serve` in {copy} did not serve {url}", log)
                time.sleep(0.2)
            times = []
            for i in range(saves):
                quiet(log)   # each save is measured alone, never during a rebuild
                token = f"benchsave{i}x{port}"
                lines = list(original)
                lines[line] = lines[line].rstrip() + f" {token}"
                t0 = time.perf_counter()
                path.write_text("\n".join(lines), encoding="utf-8")
                while True:
                    body = fetch(url)
                    if body is not None and token in body:
                        break
                    if proc.poll() is not None or time.perf_counter() - t0 > SAVE_TIMEOUT_S:
                        raise builds.Failed(f"`mkdocs serve` in {copy}: save {i + 1} did not reach {url}", log)
                    time.sleep(POLL_S)
                times.append(time.perf_counter() - t0)
            return times
        finally:
            path.write_text("\n".join(original), encoding="utf-8")
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def quiet(log: Path, seconds: float = 1.5, timeout: float = 120) -> None:
    """Wait until the server's log has not grown for `seconds` (no build running: a save
    can produce two watcher events, hence a second build after the first)."""
    deadline, size, since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        now = log.stat().st_size
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
        time.sleep(0.1)


def largest_article(docs: Path) -> str:
    """The English article with the most Markdown (the slowest page to convert; a French
    page, x.fr.md, is served at /fr/x/, not where `page_url` would look)."""
    pages = sorted((p for p in (docs / "articles").glob("*.md") if p.stem.count(".") == 0),
                   key=lambda p: p.stat().st_size)
    if not pages:
        raise SystemExit(f"bench: no article in {docs / 'articles'}")
    return pages[-1].relative_to(docs).as_posix()
