"""The guide's own numbers: the engine describing itself. Its formats table prints, for one
value, what each format writes in each language and how far the value may move before the
lock fails (livenumbers/formats.py); its facts count the page functions and commands. The
guide is therefore its own first test: change how a format prints, and the guide's build
fails until its lock is accepted again."""
from __future__ import annotations

from pathlib import Path

from livenumbers import cache, formats, markup
from livenumbers.source import Source
from livenumbers.tables import md_table

# (format, a value to print with it, what the format is for)
EXAMPLES = [
    ("int", 1294, "a count"),
    ("ord", 4, "an ordinal"),
    ("pct:0", 0.2648, "a share, no decimal"),
    ("pct:1", 0.2648, "a share, one decimal"),
    ("pp:1", -0.0312, "a difference of two shares, in points"),
    ("fixed:2", 2.0149, "a plain number, two decimals"),
    ("ratio:2", 0.8215, "a ratio, two decimals"),
    ("sci:1", 1.32e-8, "a very small or large number"),
    ("about:2", 1352, "a count rounded to hundreds"),
    ("below:1e-5", 1.7e-6, "rounding noise, printed as the bound it stays under"),
    ("pct:1~1e-4", 0.2648, "a share that is noise below 1e-4: its tolerance stated"),
]
COMMANDS = ("new", "accept", "check", "numbers", "render", "backfill")


def formats_table(r) -> str:
    """One row per example format: what it prints in English and French, and its tolerance."""
    rows = [[f"`{fmt}`", what, r.cite(f"formats.{i}.value", "text"), r.cite(f"formats.{i}.en", "text"),
             r.cite(f"formats.{i}.fr", "text"), r.cite(f"formats.{i}.tolerance", "text")]
            for i, (fmt, _, what) in enumerate(EXAMPLES)]
    return md_table(["Format", "For", "Value", "Prints (en)", "Prints (fr)", "Tolerance"], rows)


class GuideSource(Source):
    name = "the guide"
    tables = {"formats": formats_table}

    def inputs(self) -> dict:
        # The whole engine's code: the formats, and the page functions (markup.FUNCTIONS
        # gathers them from several modules).
        return {"engine": cache.code_digest(Path(formats.__file__).parent), "examples": EXAMPLES}

    def compute(self) -> tuple[dict, dict]:
        rows = [{"format": fmt, "value": repr(value), "en": formats.format_value("example", value, fmt, "en"),
                 "fr": formats.format_value("example", value, fmt, "fr"),
                 "tolerance": f"{formats.tolerance(fmt, value):g}"} for fmt, value, _ in EXAMPLES]
        return {"formats": rows, "functions": sorted(markup.FUNCTIONS), "commands": list(COMMANDS)}, {}

    def numbers(self, results: dict) -> dict:
        out = {"engine.functions": len(results["functions"]), "engine.commands": len(results["commands"]),
               "engine.formats": len(results["formats"])}
        for i, row in enumerate(results["formats"]):
            out |= {f"formats.{i}.{k}": v for k, v in row.items()}
        return out


def make(docs_dir: Path, options: dict) -> GuideSource:
    return GuideSource()
