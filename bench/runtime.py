"""Benchmark of the instrument's browser runtime, in headless Chromium on this machine.

    python bench/runtime.py [--site DIR]     (DIR: a built site; default: build one)

Prints, each against its target (issue #13):
- bytes fetched before the first typed sentence is shown (all of the page's requests,
  and the runtime's files among them): target <= 50 MB;
- the first typed sentence, Enter to table, files loading included;
- a 20-word sentence, Enter to table, model loaded: median of 5 (five different
  sentences, so nothing comes from the page's memo): target <= 1 s.
Times are taken in the page (performance.now) from the form's submit to the event the
instrument fires once the table is drawn.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
WORDS = ("the old farmer carried a heavy basket of ripe apples down the narrow road while his two "
         "dogs ran ahead barking at every passing cart and the children laughed from the bridge").split()

RUN_JS = """async (text) => {
  const root = document.getElementById('instrument');
  const input = root.querySelector('.instr-input');
  const drawn = new Promise((ok) => root.addEventListener('instrument:drawn', function on(e) {
    if (e.detail.view === 'typed' && root.querySelector('.instr-row')) { root.removeEventListener('instrument:drawn', on); ok(); }
  }));
  input.value = text;
  const t0 = performance.now();
  input.form.requestSubmit();
  await drawn;
  return performance.now() - t0;
}"""


def sentence(i: int) -> str:
    """20 words, a different sentence for each i."""
    words = WORDS[i:] + WORDS[:i]
    return " ".join(words[:20]).capitalize() + "."


def build(out: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT, env=env, check=True,
                   capture_output=True)


def serve(site: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


def measure(site: Path) -> dict:
    from playwright.sync_api import sync_playwright

    url, server = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_context().new_page()
            fetched: list[tuple[str, int]] = []
            # Content-Length, not the body: reading bodies races the browser closing.
            page.on("response", lambda r: fetched.append((r.url, int(r.headers.get("content-length", 0))))
                    if r.ok and r.request.method == "GET" else None)
            page.goto(url + "instrument/")
            page.wait_for_selector(".instr-row")
            page.wait_for_load_state("networkidle")
            first = page.evaluate(RUN_JS, sentence(0))
            page.wait_for_load_state("networkidle")
            total = sum(n for _, n in fetched)
            runtime = sum(n for u, n in fetched if "/assets/runtime/" in u)
            warm = [page.evaluate(RUN_JS, sentence(i)) for i in range(1, 6)]
            n_tokens = page.evaluate("document.querySelectorAll('.instr-row').length")
            browser.close()
    finally:
        server.shutdown()
    return {"bytes_total": total, "bytes_runtime": runtime, "first_ms": first, "warm_ms": warm,
            "warm_median_ms": statistics.median(warm), "rows": n_tokens}


def report(r: dict) -> str:
    mb = lambda b: f"{b / 1e6:.1f} MB"
    ok = lambda good: "ok" if good else "MISSED"
    return "\n".join([
        f"fetched before the first typed sentence is shown: {mb(r['bytes_total'])} "
        f"(runtime files {mb(r['bytes_runtime'])}); target <= 50 MB: {ok(r['bytes_total'] <= 50e6)}",
        f"first typed sentence, Enter to table, loading included: {r['first_ms'] / 1e3:.2f} s",
        f"20-word sentence, Enter to table, model loaded: median {r['warm_median_ms'] / 1e3:.2f} s of 5 "
        f"({', '.join(f'{t / 1e3:.2f}' for t in r['warm_ms'])}); target <= 1 s: {ok(r['warm_median_ms'] <= 1000)}",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, help="a built site (default: build one into a temporary folder)")
    args = ap.parse_args()
    if args.site:
        print(report(measure(args.site)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp) / "site")
        print(report(measure(Path(tmp) / "site")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
