"""Part 10's fresh corpus: English prose no one here wrote, from a source other than WordNet,
picked by the rule docs/study.yml registers (`fresh_corpus`), before any of it was measured.

    python -m model.fresh [SOURCE]     writes docs/fresh.tsv and docs/fresh.NOTICE

The source is the Python 3.11 documentation as Debian ships it (python3.11-doc), its
reStructuredText sources. This module holds the rule (`kept`: blocks, sentences, filters, the
order) and the size (`size`: the fewest sentences whose rows make the planned number of rows
above half at the pilot's rate); the pilot itself (the mean-ablation truth on corpus.tsv's fit
half) is measured by model/calibration, as a build measures it. The build reads the committed
file; only this command reads the documentation.
"""
from __future__ import annotations

import hashlib
import math
import re
import sys
from pathlib import Path

import yaml

from .errors import UserError

SOURCE = Path("/usr/share/doc/python3.11/html/_sources")
HEADING = re.compile(r"^([=\-~^*#\"'`:.+_<>])\1{2,}\s*$")   # a line of one repeated punctuation character
BORDER = re.compile(r"^[=+][=+\-| ]*$")                      # a table's border row ("=== ===", "+---+")
MARKUP = re.compile(r"`|::|\||:[A-Za-z][\w-]*:")              # backquotes, literal blocks, substitutions, roles
SPLIT = re.compile(r"(?<=[.?!]) +(?=[A-Z])")
ALLOWED = re.compile(r"^[A-Za-z0-9 ,.;:'\"?!()\-]+$")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
LIST_MARKERS = ("* ", "- ")


def blocks(text: str) -> list[tuple[bool, str]]:
    """A file's prose blocks, in order: (is a list item, its lines joined by single spaces).
    Blocks are split at blank lines; a block whose first line starts with a list marker is a
    list, each line that starts with one an item of it. A block is kept if its first line starts
    at column 0 and it is
    not a heading (it holds a line of one repeated punctuation character), a directive, comment or
    target (its first line starts with ".."), or a table (it holds a border row)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines or lines[0][0].isspace() or lines[0].startswith(".."):
            continue
        if any(HEADING.match(line) or BORDER.match(line) for line in lines):
            continue
        if not lines[0].startswith(LIST_MARKERS):
            out.append((False, " ".join(line.strip() for line in lines)))
            continue
        items: list[list[str]] = []   # a list: each line that starts with a marker starts an item
        for line in lines:
            if line.startswith(LIST_MARKERS):
                items.append([line[2:].strip()])
            else:
                items[-1].append(line.strip())
        out += [(True, " ".join(item)) for item in items]
    return out


def sentences(block: str, min_words: int, max_words: int) -> list[str]:
    """The block's kept sentences (none if the block holds markup that is not prose)."""
    if MARKUP.search(block):
        return []
    out = []
    for s in SPLIT.split(re.sub(r"\s+", " ", block).strip()):
        if (min_words <= len(s.split()) <= max_words and s[0].isupper() and s[-1] in ".?!"
                and ALLOWED.match(s) and not any(a in s for a in ABBREVIATIONS)):
            out.append(s)
    return out


def kept(source: Path, parts: dict[str, str], min_words: int, max_words: int, exclude: set[str]) -> list[tuple[str, str]]:
    """(register, sentence) for every kept sentence, first occurrences, in the registered order:
    sorted by the sha256 of the sentence's text."""
    missing = [part for part in parts if not (source / part).is_dir()]
    if missing:
        raise UserError(f"the Python 3.11 documentation's sources are not at {source} (no {', '.join(missing)}/): "
                        "install Debian's python3.11-doc (sudo apt-get install -y python3.11-doc; make test does it "
                        "as root), or name another folder of its _sources")
    out, seen = [], set(exclude)
    for part, register in parts.items():
        for path in sorted((source / part).rglob("*.rst.txt")):
            for item, block in blocks(path.read_text(encoding="utf-8")):
                for s in sentences(block, min_words, max_words):
                    if s not in seen:
                        seen.add(s)
                        out.append(("python-list" if item else register, s))
    return sorted(out, key=lambda rs: hashlib.sha256(rs[1].encode("utf-8")).hexdigest())


def size(words: list[int], rate: float, target_rows: int, plan: float, max_sentences: int) -> int:
    """The fewest sentences (in order; `words`: each one's words, one displayed row each) whose
    rows make plan * target_rows rows above half at `rate`, capped at `max_sentences`."""
    if rate <= 0:
        return min(max_sentences, len(words))
    need, total = math.ceil(plan * target_rows / rate), 0
    for n, w in enumerate(words, 1):
        total += w
        if total >= need or n == max_sentences:
            return n
    return len(words)


NOTICE = """The sentences of {file} are from the Python 3.11 documentation, as Debian's python3.11-doc
ships its reStructuredText sources ({source}), chosen by the rule docs/study.yml registers
(`fresh_corpus`) and written by `python -m model.fresh`. They are reproduced under the Python
Software Foundation License Version 2, whose notice follows:

Copyright (c) 2001-2023 Python Software Foundation; All Rights Reserved.

The documentation is distributed under the terms of the PSF License Agreement: PSF hereby
grants Licensee a nonexclusive, royalty-free, world-wide license to reproduce, analyze, test,
perform and/or display publicly, prepare derivative works, distribute, and otherwise use Python
alone or in any derivative version, provided, however, that PSF's License Agreement and PSF's
notice of copyright, i.e., "Copyright (c) 2001-2023 Python Software Foundation; All Rights
Reserved" are retained in Python alone or in any derivative version prepared by Licensee.
PSF is making Python available to Licensee on an "AS IS" basis. PSF MAKES NO REPRESENTATIONS OR
WARRANTIES, EXPRESS OR IMPLIED. The full agreement: https://docs.python.org/3.11/license.html
"""


def write(study_file: Path, rate: float, source: Path | None = None) -> tuple[Path, int, int]:
    """Write the fresh corpus and its notice beside `study_file`, sized at the pilot's `rate`;
    (path, sentences written, sentences kept by the rule)."""
    from .study import read_corpus

    raw = yaml.safe_load(study_file.read_text(encoding="utf-8"))
    rule = raw["fresh_corpus"]
    source = Path(source or rule["source"])
    exclude = set()
    for name in (raw["corpus"], raw["confirmation"]["corpus"], raw["replication"]["corpus"]):
        exclude |= set(read_corpus(study_file.parent / name)[0])
    chosen = kept(source, rule["parts"], int(rule["min_words"]), int(rule["max_words"]), exclude)
    n = size([len(s.split()) for _, s in chosen], rate, int(rule["target_rows"]), float(rule["plan"]),
             int(rule["max_sentences"]))
    out = study_file.parent / rule["corpus"]
    out.write_text("".join(f"{register}\t{text}\n" for register, text in chosen[:n]), encoding="utf-8")
    (out.parent / (out.stem + ".NOTICE")).write_text(NOTICE.format(source=source, file=out.name), encoding="utf-8")
    return out, n, len(chosen)


def pilot_rate(results: dict, model: str) -> float:
    """The pilot's share of rows above half, as the study's measurement recorded it."""
    try:
        return float(results["models"][model]["calibration"]["mean_ablation"]["pilot"]["rate"])
    except KeyError as exc:
        raise UserError(f"no pilot for {model} in these results ({exc.args[0]!r} missing): measure the study with "
                        "fresh_corpus registered first (python -m model measure --results FILE)") from None


if __name__ == "__main__":
    import json

    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m model.fresh RESULTS.json [SOURCE]   (the pilot's rate is read from RESULTS.json)")
    study = Path("docs/study.yml")
    model = yaml.safe_load(study.read_text(encoding="utf-8"))["fresh_corpus"]["models"][0]
    rate = pilot_rate(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")), model)
    path, n, of = write(study, rate, Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    print(f"{path}: {n} sentences of the {of} the rule keeps, at the pilot's rate {rate:.4f} ({model})")
