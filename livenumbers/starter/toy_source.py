"""The starter write-up (`python -m livenumbers new FOLDER` writes it; the engine's tests
build it as "the toy"): a hand-made results file, no model. Its page cites numbers, a table,
a chart, a claim and two works, and its shares are read under a registered settings block
(docs/settings.yml). To make it yours: put your data in docs/, compute your results in
`compute`, flatten them to citable keys in `numbers`, and put in `inputs` everything they
depend on, their code included (it is the cache key)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from livenumbers.charts import Chart, Charts, Words, altair, dataset
from livenumbers.source import Source
from livenumbers.tables import md_table


def scores(r) -> str:
    """One row per fruit: its score and its share of the total."""
    rows = [[name, r.cite(f"fruit.{name}.score", "int"), r.cite(f"fruit.{name}.share", "pct:1")]
            for name in r.results["fruit"]]
    return md_table(["Fruit", "Score", "Share"], rows)


def bars(results: dict):
    alt = altair()
    data = [{"fruit": k, "score": v["score"]} for k, v in results["fruit"].items()]
    return alt.Chart(dataset(data)).mark_bar().encode(x="fruit:N", y="score:Q")


def bars_words(results: dict, num) -> Words:
    best = max(results["fruit"], key=lambda k: results["fruit"][k]["score"])
    return Words(caption=f"Scores; {best} leads with {num(f'fruit.{best}.score', 'int')}.",
                 alt=f"A bar per fruit; the tallest is {best}.")


class ToySource(Source):
    name = "the fruit"
    tables = {"scores": scores}
    charts = Charts({"bars": Chart(bars, bars_words)}, choices=lambda results: {})

    def __init__(self, data: Path):
        self.data = data

    def inputs(self) -> dict:
        # The data and this file's code: a change to either computes the results again.
        return {"data": hashlib.sha256(self.data.read_bytes()).hexdigest(),
                "code": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}

    def compute(self) -> tuple[dict, dict]:
        raw = json.loads(self.data.read_text(encoding="utf-8"))
        total = sum(raw.values())
        return {"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}}, {}

    def registered_keys(self, results: dict) -> dict[str, str]:
        return {"fruit.*.share": "scoring"}   # a share counts points as settings.yml's `scoring` says

    def numbers(self, results: dict) -> dict:
        out = {"total": sum(v["score"] for v in results["fruit"].values())}
        for name, v in results["fruit"].items():
            out |= {f"fruit.{name}.score": v["score"], f"fruit.{name}.share": v["share"]}
        return out


def make(docs_dir: Path, options: dict) -> ToySource:
    """The source mkdocs.yml names (`source: toy_source:make`, `options: {data: ...}`)."""
    return ToySource(Path(docs_dir) / options.get("data", "data.json"))
