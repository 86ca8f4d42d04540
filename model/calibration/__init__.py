"""Part 9: the instrument's badge held to what the sink does (docs/study.yml `calibration`).

Per displayed row (a word w, and the head (l, h) a reading opens for it), interventions at
w's tokens measure three truths: the layer's, the word's and the sentence's. A truth's sink
share is the sink's effect over the sink's and the content's. The readings are the sink
shares the instrument could show; each is scored against each truth, on the held-out half
and on the confirmation corpus, and a reading is fit to drive the badge on a model if both
lower bounds clear the registered bar on both. One concept a module:

- `truths`:   the interventions and the three truths, in float64, layer by layer;
- `readings`: the sink shares the instrument could show, on their heads and alternative picks;
- `scores`:   one reading against one truth: precision, recall, rank agreement, their margins;
- `verdicts`: fit, not fit, undetermined, replicates; the stop rule beside the criterion;
- `sets`:     Part 9 on one model (`run`): every set of rows scored, then judged; the floor.

Not here: the interventions' arithmetic (model/ground_truth.py), Part 8's run that the fixes'
rows come from (model/truth/). The names callers use are re-exported here.
"""
from .sets import at_floor, run
