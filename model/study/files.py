"""The study's text files, read strictly: one sentence a line (UTF-8, no blank line), the
corpus's `register<TAB>sentence` lines, a YAML file; and `StudyError`, whose message names
the file and line a reader must fix.

Not here: what the settings mean (schema.py) or how they are checked (parse.py, pairs.py).
"""
from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import UserError


class StudyError(UserError, ValueError):
    """A study file or corpus a reader must fix; the message names file and line."""


def read_lines(path: Path) -> list[str]:
    """A UTF-8 file's lines. Blank lines and undecodable bytes are errors, not skipped."""
    if not path.is_file():
        raise StudyError(f"{path}: sentences file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StudyError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from exc
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028, form feeds and
    # the like, which would split a sentence in two and shift every line number after it.
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines:
        raise StudyError(f"{path}: no sentences")
    for i, line in enumerate(lines, 1):
        if not line.strip():
            raise StudyError(f"{path}:{i}: empty line (one sentence a line, no blank lines)")
    return lines


def read_sentences(path: Path) -> list[str]:
    """One sentence a line (the CLI's input)."""
    return [line.strip() for line in read_lines(path)]


def read_corpus(path: Path) -> tuple[list[str], list[str]]:
    """The corpus: one `register<TAB>sentence` a line -> (sentences, registers)."""
    sentences, registers = [], []
    for i, line in enumerate(read_lines(path), 1):
        register, tab, sentence = line.partition("\t")
        if not tab or not register.strip() or not sentence.strip() or "\t" in sentence:
            raise StudyError(f"{path}:{i}: expected 'register<TAB>sentence' (one tab), got {line[:60]!r}")
        if sentence.strip() in sentences:
            raise StudyError(f"{path}:{i}: the same sentence is already on line {sentences.index(sentence.strip()) + 1}")
        sentences.append(sentence.strip())
        registers.append(register.strip())
    return sentences, registers


def read_yaml(path: Path, what: str):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise StudyError(f"{path}: {what} not found") from exc
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: not valid YAML ({exc})") from exc
