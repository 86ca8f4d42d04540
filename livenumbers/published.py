"""Files every write-up's site carries beside its pages: Vega, Vega-Lite and vega-embed
(`assets/javascripts/vega-bundle.js`, shipped with the site: no CDN), built once per
vl-convert version and kept in the cache, and the engine's script that draws each chart
with them (`assets/javascripts/live-charts.js`, from static/charts.js); and what the source publishes (its results and
lock as downloads, the files computed with the results: `Source.published`).
"""
from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from . import background, cache, timing

VEGA_BUNDLE = "assets/javascripts/vega-bundle.js"
CHARTS_SCRIPT = "assets/javascripts/live-charts.js"   # draws the charts: static/charts.js
STATIC = Path(__file__).parent / "static"


def chart_scripts(extra_javascript: list) -> None:
    """Add to a site's `extra_javascript` the two scripts that draw its charts, the Vega
    bundle and then the engine's drawing, unless the site lists them itself (in the order
    its own scripts need: this site's i18n.js before the drawing, which calls it)."""
    listed = {str(getattr(entry, "path", entry)) for entry in extra_javascript}
    for script in (VEGA_BUNDLE, CHARTS_SCRIPT):
        if script not in listed:
            extra_javascript.append(script)


def _vega_key() -> str:
    return cache.key("vega", metadata.version("vl-convert-python"))


@timing.stage("Vega bundle")
def bundle_vega(cache_dir: Path) -> Path:
    """The cache entry holding the Vega bundle, built in a child process if missing
    (vl-convert holds the GIL for ~1.5 s; `start_vega` runs this beside the build)."""
    key = _vega_key()
    folder = cache.read(cache_dir, "vega", key)
    if folder is None:
        code = "import sys, vl_convert; sys.stdout.write(vl_convert.javascript_bundle())"
        out = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, check=True)
        folder = cache.write(cache_dir, "vega", key, {VEGA_BUNDLE: out.stdout})
    return folder


def start_vega(cache_dir: Path) -> None:
    """Cold builds: bundle Vega while the gate measures."""
    if cache.read(cache_dir, "vega", _vega_key()) is None:
        background.start("vega", bundle_vega, cache_dir)


@timing.stage("publishing files")
def site_files(settings, results: dict, results_key: str) -> dict[str, Path | str]:
    """Site path -> the file to copy there (a Path into the cache) or its content: the
    source's files, and the Vega bundle and the drawing script if it has charts."""
    from .gate import files_dir

    source = settings.source
    results_entry = cache.read(settings.cache_dir, "results", results_key)
    files = source.published(results, results_entry, files_dir(settings, results_key), settings.cache_dir, settings.lock)
    if source.charts is not None:
        background.wait("vega")
        files[VEGA_BUNDLE] = bundle_vega(settings.cache_dir) / VEGA_BUNDLE
        files[CHARTS_SCRIPT] = STATIC / "charts.js"
    return files
