"""The site as plain files: what the hooks add to a build, and a whole project without them.

One code path for three consumers, so their outputs cannot diverge:
- the MkDocs hooks add `generated_files` (and the executed notebooks) to a build and
  replace each page's Markdown by the gate's rendering;
- `python -m model render OUT` (`write_tree`) writes the same pages, files and notebooks
  into OUT as plain files, with an `mkdocs.yml` that has no `hooks:`: any builder that
  reads `mkdocs.yml` (plain MkDocs, Zensical) publishes the same numbers;
- `make bench`'s plain build is such a tree.

`leftover_markup` reads a built site (whatever built it) for live markup that reached a
reader unrendered: the failure a builder that ignores hooks produces silently.
"""
from __future__ import annotations

import dataclasses
import html.parser
import logging
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path

import yaml

from ..errors import UserError
from . import cache, gate, notebook, published

log = logging.getLogger("mkdocs.plugins.instrument.render")

MARKER = "RENDERED.md"   # in OUT: says what wrote the tree; a folder without it is never replaced
HOOKS_FILE_KEYS = ("study", "lock")


class RenderError(UserError, RuntimeError):
    """Nothing was written: the gate failed, or OUT is not a folder `render` may replace."""


# -- the project's settings, from its mkdocs.yml ------------------------------------------------

class _LenientLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without MkDocs: `!ENV [NAME, default]` and other tags read as their
    plain value (only docs_dir and extra.live_numbers are read from it here)."""


_LenientLoader.add_multi_constructor("!", lambda loader, suffix, node: (
    loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
    else loader.construct_mapping(node) if isinstance(node, yaml.MappingNode) else loader.construct_scalar(node)))


def project_settings(config_file: Path, cache_dir: Path | None = None) -> gate.Settings:
    """The gate's settings as the hooks read them from `config_file` (mkdocs.yml); the
    cache folder is `cache_dir` if given (else as `gate.Settings.at` finds it)."""
    try:
        raw = yaml.load(config_file.read_text(encoding="utf-8"), Loader=_LenientLoader) or {}
    except FileNotFoundError as exc:
        raise RenderError(f"{config_file}: not found (run from the project's folder, or pass --config)") from exc
    except yaml.YAMLError as exc:
        raise RenderError(f"{config_file}: not valid YAML ({exc})") from exc
    opts = (raw.get("extra") or {}).get("live_numbers") or {}
    settings = gate.Settings.at(config_file.parent, docs_dir=raw.get("docs_dir", "docs"),
                                study=opts.get("study", "study.yml"), lock_file=opts.get("lock", "numbers.lock.json"))
    return settings if cache_dir is None else dataclasses.replace(settings, cache_dir=cache_dir.resolve())


# -- what the hooks add ---------------------------------------------------------------------------

def generated_files(settings: gate.Settings, report: gate.Report) -> dict[str, Path | str]:
    """Site path -> a file to copy (a Path into the cache) or its content: the Vega bundle,
    results.json, the instrument's data and the runtime's files."""
    results_entry = cache.read(settings.cache_dir, "results", report.results_key)
    views = gate.views_dir(settings, report.results_key)
    return published.site_files(report.results, results_entry, views, settings.cache_dir, settings.lock)


def executed_notebook(settings: gate.Settings, report: gate.Report, page: str) -> Path:
    """The executed copy of notebook `page` (executing it unless the cache has it)."""
    return notebook.execute(settings.docs_dir / page, page, report.notebook_cells[page], report.results_key,
                            settings.cache_dir, settings.docs_dir.parent) / page


# -- mkdocs.yml without hooks ---------------------------------------------------------------------

def _blocks(text: str) -> list[tuple[str | None, str]]:
    """Top-level blocks of a YAML file as (key, text): a key's line and its indented lines.
    Blank lines and comments at the margin go with the key that follows them."""
    blocks: list[tuple[str | None, str]] = []
    pending = ""
    for line in text.splitlines(keepends=True):
        m = re.match(r"([A-Za-z_][\w-]*)\s*:", line)
        if m:
            blocks.append((m.group(1), pending + line))
            pending = ""
        elif line[:1] in (" ", "\t") and line.strip() and blocks:
            key, body = blocks[-1]
            blocks[-1] = (key, body + pending + line)
            pending = ""
        else:
            pending += line
    if pending:
        blocks.append((None, pending))
    return blocks


def _drop_child(block: str, child: str) -> str:
    """`block` (a top-level key and its body) without its child key `child` and that
    child's deeper lines."""
    lines, out, skipping, indent = block.splitlines(keepends=True), [], False, 0
    for line in lines:
        m = re.match(r"([ \t]+)([\w-]+)[ \t]*:", line)
        if m and m.group(2) == child and not skipping:
            skipping, indent = True, len(m.group(1))
            continue
        if skipping and (not line.strip() or len(line) - len(line.lstrip()) > indent):
            continue
        skipping = False
        out.append(line)
    return "".join(out)


def plain_config(text: str) -> str:
    """The project's mkdocs.yml for a builder without hooks: no `hooks:`, no
    `extra.live_numbers` (the hooks' settings), and the builder's anchor check off
    (`validation.anchors: ignore`): the instrument's row links (`instrument.md#l6/3/2/alpha`)
    are routes its script reads, which that check cannot see (MkDocs lists each one,
    Zensical warns on each, so `strict: true` stops it). `render` checked every row link
    against the instrument's data; the hooked build (`make site`, `make test`) checks the
    other anchors."""
    blocks = _blocks(text)
    keys = [k for k, _ in blocks]
    if "hooks" not in keys:
        raise RenderError("mkdocs.yml has no top-level `hooks:` block; is this the project's mkdocs.yml?")
    out = []
    for key, body in blocks:
        if key == "hooks":
            continue
        if key == "extra":
            body = _drop_child(body, "live_numbers")
            if not re.search(r"(?m)^[ \t]+[\w-]+[ \t]*:", body):
                continue  # nothing left under extra:
        if key == "validation":
            note = "   # row links are routes: checked by `python -m model render`; the rest by the hooked build"
            body, n = re.subn(r"(?m)^([ \t]+anchors:[ \t]*)\w+.*$", lambda m: m.group(1) + "ignore" + note, body, count=1)
            if n == 0:
                body = body.rstrip("\n") + "\n  anchors: ignore" + note + "\n"
        out.append(body)
    head = ("# Written by `python -m model render`: the project's mkdocs.yml without its hooks.\n"
            "# Every page's numbers, tables and charts are already in its Markdown.\n")
    return head + "".join(out)


# -- the whole tree ------------------------------------------------------------------------------

def write_tree(config_file: Path, out: Path, cache_dir: Path | None = None) -> gate.Report:
    """Write the rendered project into `out` (replacing a tree an earlier render wrote).
    Runs the gate first; if a number drifted or a claim failed, raises `RenderError` with
    the build's message and writes nothing. The tree is written in a temporary folder
    beside `out` and renamed into place, so `out` is the old tree or the new one."""
    out = out.resolve()
    if out.exists() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise RenderError(f"{out}: exists and was not written by `python -m model render`; "
                          "remove it or choose another folder")
    settings = project_settings(config_file, cache_dir)
    yml = plain_config(config_file.read_text(encoding="utf-8"))
    report = gate.run(settings)
    if not report.ok:
        raise RenderError("numbers gate failed; nothing written\n" + report.message(settings.lock))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=out.name + ".", suffix=".tmp"))
    try:
        _fill(tmp, settings, report, yml, config_file)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report


def _fill(tmp: Path, settings: gate.Settings, report: gate.Report, yml: str, config_file: Path) -> None:
    docs = tmp / settings.docs_dir.relative_to(config_file.parent.resolve())
    shutil.copytree(settings.docs_dir, docs, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (tmp / "mkdocs.yml").write_text(yml, encoding="utf-8")
    for page, text in report.rendered.items():
        (docs / page).write_text(text, encoding="utf-8")
    for page in report.notebook_cells:
        shutil.copyfile(executed_notebook(settings, report, page), docs / page)
    for path, src in generated_files(settings, report).items():
        dst = docs / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, Path):   # copied, not linked: the rendered tree is a source tree, to edit
            shutil.copyfile(src, dst)
        else:
            dst.write_text(src, encoding="utf-8")
    (tmp / MARKER).write_text(
        "# A rendered copy of the site\n\n"
        "Written by `python -m model render` from the project's pages and results (results "
        f"`{report.results_key[:12]}`), after the numbers gate passed: every number, table, chart and "
        "instrument link is already in the Markdown, and every generated file is a plain file under "
        f"`{docs.name}/`. Build it with any builder that reads `mkdocs.yml` (`mkdocs build --strict`). "
        "Do not edit it: render again.\n", encoding="utf-8")


def _swap(tmp: Path, out: Path) -> None:
    """`tmp` becomes `out`; an earlier tree at `out` is removed once the new one is in place."""
    if not out.exists():
        tmp.rename(out)
        return
    old = out.with_name(out.name + ".old.tmp")
    shutil.rmtree(old, ignore_errors=True)
    out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)


# -- live markup left in a built site ---------------------------------------------------------------

LIVE_CALL = re.compile(r"\{\{-?\s*(num|ci|text|table|chart|claim|instrument|row_link)\s*\(|\{%-?\s*(for|if|set|raw)\b")
_SKIP = {"code", "pre", "script", "style", "textarea"}   # where the syntax may be shown as an example


class _Scan(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP:
            self._skip += 1
        for _, value in attrs:
            if value and LIVE_CALL.search(urllib.parse.unquote(value)):
                self.found.append((self.getpos()[0], urllib.parse.unquote(value)))

    def handle_endtag(self, tag):
        if tag in _SKIP and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and LIVE_CALL.search(data):
            line = self.getpos()[0] + data[:LIVE_CALL.search(data).start()].count("\n")
            self.found.append((line, data))


def leftover_markup(site_dir: Path) -> list[str]:
    """`page:line: snippet` for every live call in a built site's HTML that was never
    rendered (outside code, where the colophon shows the syntax)."""
    if not site_dir.is_dir():
        raise RenderError(f"{site_dir}: no such folder (build the site first)")
    found = []
    for path in sorted(site_dir.rglob("*.html")):
        scan = _Scan()
        scan.feed(path.read_text(encoding="utf-8", errors="replace"))
        scan.close()
        for line, text in scan.found:
            m = LIVE_CALL.search(text)
            snippet = text[m.start():m.start() + 60].split("\n")[0]
            found.append(f"{path.relative_to(site_dir).as_posix()}:{line}: {snippet}")
    return found
