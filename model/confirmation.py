"""The confirmation and replication corpora: sentences no one here wrote, picked from WordNet
3.0 by the rules docs/study.yml registers (`confirmation`, `replication`), before any of them
was measured.

    python -m model.confirmation [WORDNET_DIR]     writes docs/confirmation.tsv, docs/replication.tsv
                                                   and their NOTICEs

WordNet's data files (Debian's wordnet-base: /usr/share/wordnet) hold, in each synset's gloss
(after " | "), example phrases in double quotes. The rule: the files data.noun, data.verb,
data.adj, data.adv in that order, their lines in file order (the licence header, whose lines
start with a space, skipped); in each gloss every quoted string, stripped; kept if it has
`min_words` whitespace-separated words or more, only its first occurrence, and not if the
corpus already holds it; then every `every`-th of those kept, from the `offset`-th (0 unless
the block says). The build reads the committed files; only this command reads WordNet.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from .errors import UserError
from .study import read_corpus

FILES = ("noun", "verb", "adj", "adv")
WORDNET = Path("/usr/share/wordnet")
QUOTED = re.compile(r'"([^"]*)"')


def examples(wordnet: Path, min_words: int, exclude: set[str]) -> list[tuple[str, str]]:
    """(part of speech, example) for every kept example, in the rule's order."""
    missing = [f"data.{pos}" for pos in FILES if not (wordnet / f"data.{pos}").is_file()]
    if missing:
        raise UserError(f"WordNet 3.0 is not at {wordnet} (no {', '.join(missing)}): install Debian's wordnet-base "
                        "(sudo apt-get install -y wordnet-base; make test, make measure-large and make bench do it "
                        "as root), or name another folder of WordNet's data files")
    out, seen = [], set(exclude)
    for pos in FILES:
        with open(wordnet / f"data.{pos}", encoding="utf-8", errors="strict") as fh:
            for line in fh:
                if line.startswith(" ") or " | " not in line:
                    continue
                for text in QUOTED.findall(line.split(" | ", 1)[1]):
                    text = text.strip()
                    if len(text.split()) >= min_words and text not in seen:
                        seen.add(text)
                        out.append((pos, text))
    return out


NOTICE = """The sentences of {file} are example phrases from WordNet 3.0, chosen by the rule
docs/study.yml registers (`{block}`) and written by `python -m model.confirmation`
from Debian's wordnet-base ({source}). They are reproduced under WordNet's licence:

WordNet Release 3.0. This software and database is being provided to you, the LICENSEE, by
Princeton University under the following license. By obtaining, using and/or copying this
software and database, you agree that you have read, understood, and will comply with these
terms and conditions.:

Permission to use, copy, modify and distribute this software and database and its
documentation for any purpose and without fee or royalty is hereby granted, provided that you
agree to comply with the following copyright notice and statements, including the disclaimer,
and that the same appear on ALL copies of the software, database and documentation, including
modifications that you make for internal use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO
REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION,
PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS
FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR
DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER
RIGHTS.

The name of Princeton University or Princeton may not be used in advertising or publicity
pertaining to distribution of the software and/or database. Title to copyright in this
software, database and any associated documentation shall at all times remain with Princeton
University and LICENSEE agrees to preserve same.
"""


BLOCKS = ("confirmation", "replication")   # study.yml's corpora chosen from WordNet by a rule


def write(study_file: Path, wordnet: Path = WORDNET, block: str = "confirmation") -> tuple[Path, int, int]:
    """Write the corpus `block` registers and its notice beside `study_file`; (path, sentences
    written, examples kept before every `every`-th was taken)."""
    raw = yaml.safe_load(study_file.read_text(encoding="utf-8"))
    rule = raw[block]
    corpus, _ = read_corpus(study_file.parent / raw["corpus"])
    kept = examples(wordnet, int(rule["min_words"]), set(corpus))
    chosen = kept[int(rule.get("offset", 0))::int(rule["every"])]
    out = study_file.parent / rule["corpus"]
    out.write_text("".join(f"wordnet-{pos}\t{text}\n" for pos, text in chosen), encoding="utf-8")
    notice = NOTICE.format(source=wordnet, file=out.name, block=block)
    (out.parent / (out.stem + ".NOTICE")).write_text(notice, encoding="utf-8")
    return out, len(chosen), len(kept)


if __name__ == "__main__":
    study = Path("docs/study.yml")
    for name in BLOCKS:
        if name in yaml.safe_load(study.read_text()):
            path, n, of = write(study, Path(sys.argv[1]) if len(sys.argv) > 1 else WORDNET, name)
            print(f"{path}: {n} sentences of the {of} WordNet examples kept by the rule ({name} in {study})")
