"""What `mkdocs serve` shows the author, and a published build never carries.

- Hover details: the gate renders pages with each cited number marked (pages.mark);
  `mark_html` turns every mark in a page's HTML into the number wrapped in a focusable
  span whose tooltip gives its key, format, unrounded value, interval, the locked value,
  the tolerance and its state (locked, new, moved within tolerance, drifted). Marks inside
  a tag (a chart's text alternative, a link's title) or a heading's table-of-contents
  entry are dropped.
- The key listing: one page (`LISTING_PAGE`, out of the navigation) with every key a page
  can cite, searchable, each with the snippet to paste; its data is `LISTING_DATA`.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

from pathlib import Path

from . import cache, finder, gate, lock
from . import formats as nums
from .marks import MARK_CLOSE, MARK_DIGIT0, MARK_MID, MARK_OPEN

LISTING_PAGE = "live-numbers.md"
LISTING_DATA = "assets/live-numbers.json"
LISTING_SCRIPT = "assets/javascripts/live-numbers.js"

_DIGITS = f"[{chr(MARK_DIGIT0)}-{chr(MARK_DIGIT0 + 9)}]"
_MARKED = re.compile(f"{MARK_OPEN}({_DIGITS}+){MARK_MID}(.*?){MARK_CLOSE}", re.S)
_ANY_MARK = re.compile(f"{MARK_OPEN}{_DIGITS}*{MARK_MID}|{MARK_CLOSE}")
_TAG = re.compile(r"(<[^>]*>)")

STATIC = Path(__file__).parent / "static"
STYLE = "<style>\n" + (STATIC / "authoring.css").read_text(encoding="utf-8") + "</style>"


def strip_marks(text: str) -> str:
    return _ANY_MARK.sub("", text)


def _index(digits: str) -> int:
    return int("".join(str(ord(c) - MARK_DIGIT0) for c in digits))


def detail(report: gate.Report, key: str, fmt: str) -> tuple[str, str]:
    """(state, the tooltip's HTML) for a cited number."""
    value = report.numbers[key]
    entry = report.locked.get(key)
    state = lock.state(entry, value)
    tol = entry.tolerance if entry else report.fresh[key].tolerance if key in report.fresh else nums.tolerance(fmt, value)
    lines = [f"<code>{html.escape(key)}</code> · format <code>{html.escape(fmt)}</code>",
             f"value now: {html.escape(repr(value))}"]
    lo, hi = f"{key}_lo", f"{key}_hi"
    if lo in report.numbers and hi in report.numbers:
        lines.append(f"interval: {html.escape(repr(report.numbers[lo]))} – {html.escape(repr(report.numbers[hi]))}")
    if entry is None:
        lines.append(f"lock: not in it yet (new; <code>python -m livenumbers accept</code> adds it, tolerance {tol:g})")
    else:
        lines.append(f"lock: {html.escape(repr(entry.value))} ± {tol:g}")
        if state == "moved within tolerance" and isinstance(value, (int, float)) and tol:
            moved = abs(float(value) - float(entry.value))
            lines.append(f"state: moved within tolerance ({moved:.3g}, {moved / tol:.0%} of it)")
        else:
            lines.append(f"state: {state}" + (" (the build fails until accepted or fixed)" if state == "drifted" else ""))
    return state, "<br>".join(lines)


def mark_html(page_html: str, page: str, report: gate.Report) -> str:
    """The page's HTML with each marked number made a hover (and keyboard focus) detail,
    and every mark dropped where a span cannot go (inside a tag)."""
    citations = report.citations.get(page, [])

    def span(m: re.Match) -> str:
        i, text = _index(m.group(1)), m.group(2)
        if i >= len(citations):
            return text
        c = citations[i]
        state, tip = detail(report, c.key, c.fmt)
        cls = {"drifted": " live-drifted", "new": " live-new"}.get(state, "")
        return (f'<span class="live-num{cls}" tabindex="0" aria-describedby="live-{i}">{text}'
                f'<span class="live-tip" role="tooltip" id="live-{i}">{tip}</span></span>')

    parts = _TAG.split(page_html)
    for k, part in enumerate(parts):
        if MARK_OPEN not in part and MARK_CLOSE not in part:
            continue
        parts[k] = strip_marks(part) if part.startswith("<") else strip_marks(_MARKED.sub(span, part))
    return "".join(parts)


def bar(listing_url: str) -> str:
    """A line above each page under `mkdocs serve`: what the dotted numbers are."""
    return (f'{STYLE}<p class="live-bar">Serving: a dotted number is live; hover or focus it for its key, value, '
            f'interval and lock. <a href="{html.escape(listing_url)}">Every key a page can cite</a>.</p>')


# -- the key listing ------------------------------------------------------------------------------

def _snippet_format(value: Any) -> str:
    if isinstance(value, bool):
        return "yesno"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "pct:1" if 0.0 <= value <= 1.0 else "fixed:3"
    return "text"


def listing_data(report: gate.Report) -> str:
    """Every key with what the listing shows: JSON, one array per key."""
    rows = []
    for k in finder.catalogue(report):
        fmt = _snippet_format(k.value)
        num = f'{{{{ text("{k.key}") }}}}' if fmt == "text" else f'{{{{ num("{k.key}", "{fmt}") }}}}'
        ci = f'{{{{ ci("{k.key}", "{fmt}") }}}}' if k.interval else ""
        interval = "–".join(nums.format_value(i, report.numbers[i], nums.default_format(report.numbers[i]))
                            for i in k.interval) if k.interval else ""
        pages = sorted({spot.rsplit(":", 1)[0] for spot in k.cited})
        rows.append([k.key, k.shown() if not isinstance(k.value, str) else k.value[:80], interval, k.state,
                     ", ".join(pages), num, ci])
    return json.dumps({"keys": rows}, ensure_ascii=False, separators=(",", ":"))


LISTING_MARKDOWN = """# Every number a page can cite

Shown by `mkdocs serve` only; a published build carries nothing of it. Type words of a key;
each row gives its value as the default format prints it, its interval, what the lock holds,
the pages citing it, and the snippet to paste (a click copies it). {unlisted}

<div class="live-numbers" data-src="{data}">
<p><label>Find a key <input type="search" class="live-numbers-find" placeholder="words of a key, or a key" size="40"></label>
<span class="live-numbers-count" role="status"></span></p>
<table class="live-numbers-table"><thead><tr><th>Key</th><th>Value</th><th>Interval</th><th>Lock</th><th>Cited by</th>
<th>Paste</th></tr></thead><tbody></tbody></table>
</div>
"""

def listing_folder(cache_dir: Path, report: gate.Report, directory_urls: bool = True) -> Path:
    """The cache entry holding the listing's page, data and script. Keyed by the results,
    the lock and which pages cite which key, so a prose edit that cites nothing new
    leaves it (and, under `--dirty`, the page) as it was."""
    cited = sorted((k, sorted(pages)) for k, pages in report.cited.items())
    key = cache.key("listing", report.inputs_key, cited, directory_urls, Path(__file__).read_text(encoding="utf-8"),
                    (STATIC / "live-numbers.js").read_text(encoding="utf-8"))
    folder = cache.read(cache_dir, "listing", key)
    if folder is None:
        data = ("../" if directory_urls else "") + LISTING_DATA
        page = LISTING_MARKDOWN.format(data=data, unlisted=getattr(report.numbers, "unlisted", ""))
        folder = cache.write(cache_dir, "listing", key, {LISTING_PAGE: page,
                                                         LISTING_DATA: listing_data(report),
                                                         LISTING_SCRIPT: (STATIC / "live-numbers.js").read_text(encoding="utf-8")})
    return folder



