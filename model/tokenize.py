"""Tokenization with the `tokenizers` library: WordPiece, uncased, with word ids.

A `Tokenized` sentence keeps, for every token, the id of the word it came from (the
tokenizer's own word ids), so subword rows can be aggregated to words later. [CLS]
and [SEP] (MPNet's <s> and </s>) have no word id.

The tokenizer comes from a model folder (tokenizer.json or vocab.txt), or, for a model
read out of an archive, from tokenizer.json's text (`TokenizerJSON`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import UserError


class TokenizeError(UserError, ValueError):
    """A sentence the model cannot take; the message names it."""


@dataclass(frozen=True)
class Tokenized:
    text: str
    ids: list[int]                   # [T], [CLS] ... [SEP] (MPNet: <s> ... </s>)
    tokens: list[str]                # [T]
    word_ids: list[int | None]       # [T], None for [CLS] and [SEP]
    words: list[str]                 # one per word id, as written in the sentence

    @property
    def n_tokens(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class TokenizerJSON:
    """tokenizer.json's text, for a tokenizer that ships inside an archive, not a folder."""
    text: str = field(repr=False)
    where: str  # where the text came from ("all-mpnet-base-v2.zip:.../tokenizer.json")


@lru_cache(maxsize=4)
def load_tokenizer(folder: Path | TokenizerJSON):
    from tokenizers import Tokenizer
    from tokenizers.implementations import BertWordPieceTokenizer

    if isinstance(folder, TokenizerJSON):
        try:
            return Tokenizer.from_str(folder.text)
        except Exception as exc:  # tokenizers raises its own Exception subclass
            raise TokenizeError(f"{folder.where}: not a tokenizer.json ({exc})") from exc
    if (folder / "tokenizer.json").is_file():
        return Tokenizer.from_file(str(folder / "tokenizer.json"))
    if (folder / "vocab.txt").is_file():
        return BertWordPieceTokenizer(str(folder / "vocab.txt"), lowercase=True)
    raise TokenizeError(f"{folder}: no tokenizer.json or vocab.txt")


def tokenize(
    text: str, tokenizer_dir: Path | TokenizerJSON, max_tokens: int, where: str = "sentence"
) -> Tokenized:
    """One sentence -> tokens with word ids. `where` names it in errors ("corpus.txt:3")."""
    if not text.strip():
        raise TokenizeError(f"{where}: empty sentence")
    tok = load_tokenizer(tokenizer_dir if isinstance(tokenizer_dir, TokenizerJSON) else Path(tokenizer_dir))
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
