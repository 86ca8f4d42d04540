"""Tokenization with the `tokenizers` library: WordPiece, uncased, with word ids.

A `Tokenized` sentence keeps, for every token, the id of the word it came from (the
tokenizer's own word ids), so subword rows can be aggregated to words later. [CLS]
and [SEP] have no word id.
"""
from __future__ import annotations

from .errors import UserError

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


class TokenizeError(UserError, ValueError):
    """A sentence the model cannot take; the message names it."""


@dataclass(frozen=True)
class Tokenized:
    text: str
    ids: list[int]                   # [T], [CLS] ... [SEP]
    tokens: list[str]                # [T]
    word_ids: list[int | None]       # [T], None for [CLS] and [SEP]
    words: list[str]                 # one per word id, as written in the sentence

    @property
    def n_tokens(self) -> int:
        return len(self.ids)


@lru_cache(maxsize=4)
def load_tokenizer(folder: Path):
    from tokenizers import Tokenizer
    from tokenizers.implementations import BertWordPieceTokenizer

    if (folder / "tokenizer.json").is_file():
        return Tokenizer.from_file(str(folder / "tokenizer.json"))
    if (folder / "vocab.txt").is_file():
        return BertWordPieceTokenizer(str(folder / "vocab.txt"), lowercase=True)
    raise TokenizeError(f"{folder}: no tokenizer.json or vocab.txt")


def tokenize(text: str, tokenizer_dir: Path, max_tokens: int, where: str = "sentence") -> Tokenized:
    """One sentence -> tokens with word ids. `where` names it in errors ("corpus.txt:3")."""
    if not text.strip():
        raise TokenizeError(f"{where}: empty sentence")
    tok = load_tokenizer(Path(tokenizer_dir))
    tok.no_truncation()  # a long sentence must fail, not be silently cut
    tok.no_padding()
    enc = tok.encode(text)
    if len(enc.ids) > max_tokens:
        raise TokenizeError(
            f"{where}: {len(enc.ids)} tokens, longer than the model's limit of {max_tokens}"
        )
    word_ids = list(enc.word_ids)
    if all(w is None for w in word_ids):
        raise TokenizeError(f"{where}: no tokens (only characters the tokenizer drops)")
    n_words = 1 + max(w for w in word_ids if w is not None)
    words = [text[slice(*enc.word_to_chars(w))] for w in range(n_words)]
    return Tokenized(
        text=text,
        ids=list(enc.ids),
        tokens=list(enc.tokens),
        word_ids=word_ids,
        words=words,
    )
