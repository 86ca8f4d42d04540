"""Part 10: a truth outside the lens's algebra (docs/study.yml `mean_ablation`, `fresh_corpus`).

Per displayed row on alpha's head, the value vectors of [CLS] and [SEP] (or of the content)
replaced by their means over corpus.tsv's fit half, as far as the word's row sees them, the change
run to the word's final representation; every reading on alpha's head scored against it, with
intervals whose verdicts no seed decides. One concept a module:

- `means`:    the reference means of every layer's value vectors, per head;
- `bounds`:   a share's lower bounds (the bootstrap's with its Monte Carlo margin, the exact one);
- `scores`:   one reading against one truth on one set of rows, read for a verdict;
- `verdicts`: a reading's verdict over the corpora, and a model's (Bonferroni over the readings);
- `run`:      what Part 9's run calls: the settings, a set's scores, the pilot, the summary.

Not here: the intervention's arithmetic (model/ground_truth.py), the runs that measure it beside
Part 9's truths (model/calibration/), the fresh corpus's rule (model/fresh.py).
The names callers use are re-exported here.
"""
from .means import value_means
from .run import on_set, pilot, summary
