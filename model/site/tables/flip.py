"""Tables of the adjective flip (Part 4): the rates, the sets of pairs, the heads' sign tests, every pair.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

import re

from livenumbers.tables import md_table

from ..numbers import flip_key, flip_set
from .common import NEAR_TIE, ci_cell, ci_label, decided, escape, model_name


def flip_summary(r, lens: str = "alpha") -> str:
    """Every flip pair (both orders), per model, under one lens."""
    rows = []
    for key in r.results["models"]:
        p = f"{key}.flip.{lens}"
        rows.append([model_name(r, key), r.cite(f"{p}.n_heads", "int"), r.cite(f"{p}.layer0_changed", "int"),
                     r.cite(f"{p}.changed_share", "pct:1"), ci_cell(r, f"{p}.changed_share", "pct:1"),
                     r.cite(f"{p}.toward_share", "pct:1"), ci_cell(r, f"{p}.toward_share", "pct:1"),
                     r.cite(f"{p}.follows_share", "pct:1"), r.cite(f"{p}.opposes_share", "pct:1"),
                     r.cite(f"{p}.heads.n_significant", "int")])
    return md_table(["Model", "Heads counted (layer 0 apart)", "Layer-0 heads whose winner changes",
                     "(pair, head) whose winner changes", ci_label(r), "... that moved toward the reader", ci_label(r),
                     "... whose winner changes with the reader", "... against the reader",
                     "Heads passing the corrected sign test"], rows)


SET_LABELS = {"": "both orders", "original": "as first written", "mirrored": "mirrored", "null": "null pairs"}


def flip_sets(r) -> str:
    """Per model and set of pairs (both orders; each order; the null pairs), under α: how
    often the heads moved the reader's way, the per-head sign tests and the null of their
    maximum, and the model's own probe. Narrow enough to print: the models by their short
    names, the best head's p left to `flip_top_heads`. The best head is the one with the
    smallest uncorrected p (study.yml): where none passes, the corrected p's are all 1."""
    rows = []
    for key in r.results["models"]:
        for name, label in SET_LABELS.items():
            p = flip_key(key, name)
            h = f"{p}.alpha.heads"
            model = f"{r.cite(f'{key}.model', 'text')} ({r.cite(f'{key}.n_layers', 'int')} layers)" if not name else ""
            rows.append([model, label, r.cite(f"{p}.n_pairs", "int"),
                         r.cite(f"{p}.alpha.toward_share", "pct:1"), ci_cell(r, f"{p}.alpha.toward_share", "pct:1"),
                         r.cite(f"{h}.n_significant", "int"),
                         (f"{r.cite(f'{h}.best', 'text')}: {r.cite(f'{h}.best_follows', 'int')} / "
                          f"{r.cite(f'{h}.best_opposes', 'int')}" if decided(r, f"{h}.best") else NEAR_TIE),
                         r.cite(f"{p}.alpha.most_pairs_followed", "int"), r.cite(f"{h}.null_max_follows", "fixed:0"),
                         r.cite(f"{p}.model_follows", "pct:1"), ci_cell(r, f"{p}.model_follows", "pct:1")])
    return md_table(["Model", "Pairs", "Number", "Heads moved toward the reader", ci_label(r),
                     "Heads passing the corrected sign test", "Head with the smallest uncorrected p: pairs with / against",
                     "Most pairs one head follows",
                     "... if swapped at random (95th pct.)", "Final state nearer the reader's noun", ci_label(r)], rows)


def flip_top_heads(r, model: str, more: int = 5) -> str:
    """The heads of one model with the smallest uncorrected p under α (every flip pair), the
    order of the best head (model/flip/heads.py): every head that passes and `more` after them,
    with their counts in each set of pairs."""
    heads = r.results["models"][model]["flips"]["lenses"]["alpha"]["heads"]
    order = sorted(range(len(heads["follows"])), key=lambda i: (heads["p_value"][i], -heads["follows"][i], i))
    rows = []
    for i in order[: heads["n_significant"] + more]:
        name = f"L{heads['layer'][i]}H{heads['head'][i]}"
        cell = lambda s: (f"{r.cite(f'{flip_key(model, s)}.alpha.head.{name}.follows', 'int')} / "
                          f"{r.cite(f'{flip_key(model, s)}.alpha.head.{name}.opposes', 'int')}")
        p = f"{model}.flip.alpha.head.{name}"
        rows.append([name, *(cell(s) for s in ("", "original", "mirrored", "null")), r.cite(f"{p}.p_value", "sci:1"),
                     r.cite(f"{p}.p_corrected", "sci:1"), r.cite(f"{p}.picks_reader", "pct:1")])
    return md_table(["Head", "Both orders: pairs with / against the reader", "As first written", "Mirrored",
                     "Null pairs", "p, both orders", "Corrected p", "Sentences whose winner is the reader's noun"], rows)


def flips(r, pairs: str = "flip") -> str:
    """Every flip pair, or every null pair, and per model the heads (α) that follow the
    reader's referent in it (a null pair's: the referent of the pair whose frame it shares).
    A null pair is shown by its frame's number and its two words, not its sentences again."""
    s = "" if pairs == "flip" else "null"
    models = list(r.results["models"])
    listed = flip_set(r.results["models"][models[0]]["flips"], s)["lenses"]["alpha"]["pairs"]
    out = []
    for i, pair in enumerate(listed):
        a, b = pair["sentences"]
        changed = [(x, y) for x, y in zip(re.findall(r"\w+", a), re.findall(r"\w+", b)) if x != y][0]
        # The pairs' words are data (r.data): never translated, nothing for a translator when a pair changes.
        where = ([r.data(escape(a)), r.data(escape(changed[1]))] if pairs == "flip"
                 else [str(pair["source"]), r.data(escape(" / ".join(changed)))])
        out.append([str(i + 1), "mirrored" if pair["order"] == "mirrored" else "as written", *where,
                    r.data(escape(" → ".join(pair["referents"]))),
                    *(r.cite(f"{flip_key(k, s)}.alpha.pair{i}.follows_reader", "int") for k in models)])
    where = ["Sentence A", "Sentence B changes it to"] if pairs == "flip" else ["Frame of pair", "“it was …”, A / B"]
    head = ["#", "Nouns named", *where, "Reader's referent, A → B" if pairs == "flip" else "Pseudo-referents, A → B"]
    head += [f"{r.cite(f'{k}.checkpoint', 'text')}: heads that follow (of {r.cite(f'{k}.flip.alpha.n_heads', 'int')})"
             for k in models]
    return md_table(head, out, summary=f"All {r.data(str(len(out)))} {'pairs' if pairs == 'flip' else 'null pairs'}")


TABLES = {f.__name__: f for f in (flip_summary, flip_sets, flip_top_heads, flips)}
