"""Word ids: subwords share their word's id, [CLS]/[SEP] have none, punctuation is its
own word, and words are the sentence's own (cased) text."""
from __future__ import annotations

import pytest

from model import tokenize


@pytest.fixture(scope="module")
def tok(l6):
    return lambda text: tokenize.tokenize(text, l6.tokenizer_dir, l6.config.max_position)


def test_subwords_share_one_word_id(tok):
    t = tok("It was unbelievably good.")
    ids = [w for w, piece in zip(t.word_ids, t.tokens) if w is not None and t.words[w] == "unbelievably"]
    assert len(ids) >= 3, t.tokens  # split into several WordPieces
    assert len(set(ids)) == 1
    pieces = [p for w, p in zip(t.word_ids, t.tokens) if w == ids[0]]
    assert not pieces[0].startswith("##")
    assert all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "unbelievably"
    # Word ids run 0, 1, 2, ... in order: "It", "was", "unbelievably", "good", "."
    assert t.words == ["It", "was", "unbelievably", "good", "."]
    real = [w for w in t.word_ids if w is not None]
    assert real == sorted(real) and sorted(set(real)) == list(range(len(t.words)))


def test_special_tokens_have_no_word_id(tok):
    t = tok("Hello there.")
    assert t.tokens[0] == "[CLS]" and t.tokens[-1] == "[SEP]"
    assert t.word_ids[0] is None and t.word_ids[-1] is None
    assert all(w is not None for w in t.word_ids[1:-1])
    assert len(t.ids) == len(t.tokens) == len(t.word_ids) == t.n_tokens


def test_punctuation_is_its_own_word(tok):
    t = tok("Well, it works!")
    assert t.words == ["Well", ",", "it", "works", "!"]
    comma, bang = t.tokens.index(","), t.tokens.index("!")
    assert t.words[t.word_ids[comma]] == ","
    assert t.words[t.word_ids[bang]] == "!"
    assert t.word_ids[comma] != t.word_ids[comma - 1]  # not glued to "well"
    assert t.word_ids[bang] != t.word_ids[bang - 1]    # not glued to "works"


def test_words_are_original_text_slices(tok):
    text = "The  CAT from Zürich didn't sleep."
    t = tok(text)
    # The tokenizer lowercases and strips accents; the words keep the sentence's text.
    assert "cat" in t.tokens and "CAT" not in t.tokens
    assert t.words == ["The", "CAT", "from", "Zürich", "didn", "'", "t", "sleep", "."]
    # Each word is the text between its own character offsets, in order, with only
    # whitespace between one word and the next.
    pos = 0
    for word in t.words:
        start = text.index(word, pos)
        assert text[pos:start].strip() == "", (word, text[pos:start])
        pos = start + len(word)
    assert text[pos:] == ""


def test_sentence_with_no_tokens(l6):
    with pytest.raises(tokenize.TokenizeError, match=r"^corpus\.txt:5:"):
        tokenize.tokenize("\u200b", l6.tokenizer_dir, l6.config.max_position, where="corpus.txt:5")


# --------------------------------------------------------------------------- mpnet-base
# MPNet's tokenizer.json comes out of the zip as text (a TokenizerJSON, not a folder):
# the same uncased WordPiece, with <s> and </s> where BERT has [CLS] and [SEP].


@pytest.fixture(scope="module")
def mp(mpnet):
    return lambda text: tokenize.tokenize(text, mpnet.tokenizer_dir, mpnet.config.max_position)


def test_mpnet_tokenizer_comes_from_the_zip(mpnet):
    assert isinstance(mpnet.tokenizer_dir, tokenize.TokenizerJSON)
    assert mpnet.tokenizer_dir.where.endswith("all-mpnet-base-v2/tokenizer.json")
    tok = tokenize.load_tokenizer(mpnet.tokenizer_dir)
    assert tok.get_vocab_size() == mpnet.config.vocab_size == 30527
    assert (tok.token_to_id("<s>"), tok.token_to_id("<pad>"), tok.token_to_id("</s>")) == (0, 1, 2)


def test_mpnet_special_tokens_first_and_last_without_word_id(mp):
    t = mp("Hello there.")
    assert t.tokens[0] == "<s>" and t.tokens[-1] == "</s>"
    assert t.ids[0] == 0 and t.ids[-1] == 2
    # The instrument takes the first and the last token for the two special tokens.
    assert t.word_ids[0] is None and t.word_ids[-1] is None
    assert all(w is not None for w in t.word_ids[1:-1])
    assert t.words == ["Hello", "there", "."]


def test_mpnet_subwords_share_one_word_id(mp):
    t = mp("It was unbelievably good.")
    assert t.words == ["It", "was", "unbelievably", "good", "."]
    pieces = [p for w, p in zip(t.word_ids, t.tokens) if w == 2]
    assert len(pieces) >= 3 and all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "unbelievably"


def test_mpnet_words_are_original_text_slices(mp):
    t = mp("The  CAT from Zürich didn't sleep.")
    assert "cat" in t.tokens and "zurich" in t.tokens  # lowercased, accents stripped
    assert t.words == ["The", "CAT", "from", "Zürich", "didn", "'", "t", "sleep", "."]


def test_mpnet_length_limit_counts_special_tokens(mpnet):
    limit = mpnet.config.max_position
    assert limit == 512  # 514 position rows less the two below the first position
    ok = tokenize.tokenize(" ".join(["word"] * (limit - 2)), mpnet.tokenizer_dir, limit)
    assert ok.n_tokens == limit
    with pytest.raises(tokenize.TokenizeError, match=r"513 tokens, longer than the model's limit of 512"):
        tokenize.tokenize(" ".join(["word"] * (limit - 1)), mpnet.tokenizer_dir, limit)


def test_tokenizer_json_that_is_not_one(mpnet):
    bad = tokenize.TokenizerJSON('{"model": ', where="x.zip:tokenizer.json")
    with pytest.raises(tokenize.TokenizeError, match=r"^x\.zip:tokenizer\.json: not a tokenizer\.json"):
        tokenize.tokenize("Hello.", bad, 512)
