"""Tables of what the study is made of: its provenance, its corpus, its tokenizer.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from .common import escape, model_name


def provenance(r) -> str:
    """Each measured model: what it is and which exact file the numbers come from."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt="int": r.cite(f"{key}.{k}", fmt)
        package = r.numbers[f"{key}.package"]
        rows.append([c("checkpoint", "text"), f"`{key}`", c("n_layers"), c("n_heads"), c("d_model"),
                     c('package', 'text') if package else "a local folder", c("source", "text"),
                     f"`{c('sha256', 'text')}`"])
    libs = ", ".join(f"{name} {r.cite(f'library.{name}', 'text')}" for name in r.results["provenance"]["libraries"])
    return (md_table(["Checkpoint", "Key", "Layers", "Heads", "Hidden size", "Package", "Weights", "sha256 of the weights"], rows)
            + f"\nLibraries: {libs}.\n")


def corpus(r) -> str:
    """What the corpus is made of: registers, and sentences per length."""
    regs = [[escape(name), r.cite(f"corpus.register.{name}", "int")] for name in r.results["corpus"]["registers"]]
    lengths = []
    for i, _ in enumerate(r.results["corpus"]["length_histogram"]):
        p = f"corpus.length{i}"
        lengths.append([f"{r.cite(f'{p}.from', 'int')}–{r.cite(f'{p}.to', 'int')}", r.cite(f"{p}.sentences", "int")])
    return (md_table(["Register", "Sentences"], regs) + "\n"
            + md_table(["Words per sentence (whitespace-separated)", "Sentences"], lengths))


def tokens(r) -> str:
    rows = [[model_name(r, key), r.cite(f"{key}.tokens_per_word", "fixed:2")] for key in r.results["models"]]
    return md_table(["Model", "Tokens per word"], rows)


TABLES = {f.__name__: f for f in (provenance, corpus, tokens)}
