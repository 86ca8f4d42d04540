"""Links into the instrument page: the study's own page functions.

    {{ instrument("l6", 3, 2, "alpha") }}     a link to that row in the instrument
    {{ row_link("l6.alpha.worst") }}          ... to the row a results entry names

The instrument reads a link's fragment (`l6/3/2/alpha`, `l6/3`, `l6/3/2/alpha/1.5`) as a
route, so MkDocs' anchor check cannot: `check_route` checks each against what the
instrument's data holds, for every link a page writes (through these functions or by hand).
"""
from __future__ import annotations

import re

from livenumbers.formats import NumberError, did_you_mean, lookup

from ..instrument import LENSES
from ..truth import FIX_LABELS

INSTRUMENT_PAGE = "instrument.md"

_SHOWN: dict = {"results": None, "models": {}}   # the last results' model -> sentence -> words with a row


def check_model(results: dict, model, what: str) -> str:
    """`model` if it is one of the study's model keys, else a NumberError naming them."""
    if model not in results["models"]:
        raise NumberError(f"{what}: unknown model {model!r}" + did_you_mean(str(model), list(results["models"]), cutoff=0.4)
                          + f" (study.yml's models: {', '.join(results['models'])})")
    return model


def _shown_words(results: dict, model: str) -> dict[int, list[int]]:
    if _SHOWN["results"] is not results:
        _SHOWN.update(results=results, models={})
    per = _SHOWN["models"]
    if model not in per:
        rows, shown = results["models"][model]["rows"], {}
        for s, w in zip(rows["sentence"], rows["word_index"]):
            shown.setdefault(s, []).append(w)
        per[model] = shown
    return per[model]


def check_route(results: dict, fragment: str) -> None:
    """A link into the instrument names what its data holds: a known model, a corpus
    sentence, a word with a displayed row, one of its lenses (part 8's comparison lenses
    included), a layer and head of that model."""
    model, *rest = fragment.split("/")
    check_model(results, model, f"instrument link #{fragment}")
    if not rest:
        return
    typed = rest[0].startswith("text=")   # a sentence of the reader's own: nothing to check it against
    n = len(results["sentences"])
    if not typed and (not rest[0].isdigit() or int(rest[0]) >= n):
        raise NumberError(f"instrument link #{fragment}: no sentence {rest[0]!r} (the corpus has sentences 0 to {n - 1})")
    if len(rest) > 1 and rest[1] != "" and not typed:
        sentence = int(rest[0])
        shown = _shown_words(results, model).get(sentence, [])
        if not rest[1].isdigit() or int(rest[1]) not in shown:
            raise NumberError(f"instrument link #{fragment}: sentence {sentence} has no displayed row for word "
                              f"{rest[1]!r} on {model} (rows for words {', '.join(map(str, shown)) or 'none'})")
    lenses = [*LENSES, *FIX_LABELS]
    if len(rest) > 2 and rest[2] not in lenses:
        raise NumberError(f"instrument link #{fragment}: unknown lens {rest[2]!r}"
                          + did_you_mean(rest[2], lenses) + f" (lenses: {', '.join(lenses)})")
    m = results["models"][model]
    head = re.match(r"^(?:all-)?(\d+)\.(\d+)$", rest[3]) if len(rest) > 3 else None
    if len(rest) > 3 and not (head and int(head[1]) < m["n_layers"] and int(head[2]) < m["n_heads"]):
        raise NumberError(f"instrument link #{fragment}: {rest[3]!r} is no head of {model} "
                          f"(LAYER.HEAD, layers 0-{m['n_layers'] - 1}, heads 0-{m['n_heads'] - 1})")
    if len(rest) > 4:
        raise NumberError(f"instrument link #{fragment}: expected model/sentence/word/lens[/layer.head], got more")


def instrument_url(r, model: str, sentence: int, word: int | None = None, lens: str = "alpha") -> str:
    """Relative link from the page `r` renders to one row of the instrument (checked)."""
    return r.route_link(f"{model}/{sentence}" + (f"/{word}/{lens}" if word is not None else ""))


def page_functions(r) -> dict:
    """The page functions the study adds: `instrument()`, `row_link()`, and `models` (the
    model keys in study.yml's order, for `{% for key in models %}`)."""
    def row_link(prefix: str, lens: str = "alpha") -> str:
        """The instrument's link to the row a results entry names: `row_link("l6.alpha.worst")`
        reads its `sentence` and `word_index` (so the link follows the data)."""
        model = prefix.split(".", 1)[0]
        sentence, word = (lookup(r.numbers, f"{prefix}.{k}") for k in ("sentence", "word_index"))
        return instrument_url(r, model, sentence, word, lens)

    def instrument(model: str, sentence: int, word: int | None = None, lens: str = "alpha") -> str:
        return instrument_url(r, model, sentence, word, lens)

    return {"instrument": instrument, "row_link": row_link, "models": list(r.results["models"])}
