"""Part 8 on the displayed rows: what [CLS] and [SEP] really do, and the later fixes.

Definitions are in docs/study.yml (`ground_truth`, `later_fixes`, and the amendments after
them); the arithmetic is model/ground_truth.py (the PyTorch reference) and
model/oracle_ground_truth.py (the oracle). This package asks them for the rows the
instrument displays and reduces what they return, one concept a module:

- `readings`: the later fixes read as lenses, their labels, and the lazy position scores;
- `inputs`:   the reference's layer inputs, kept on disk between its pass and the truths;
- `sentence`: what each sentence is asked for, its answers folded to words, the idle-head bound;
- `records`:  what Part 8 publishes (a dataclass a table) and the run it keeps;
- `run`:      the reference over the corpus, in batches on the runner, and `measure`;
- `rows`:     the ground truth beside every displayed row;
- `summary`:  the statistics of the held-out rows; `margins`: how near each count came to turning;
- `oracle`:   the oracle's check of the reference.

Not here: the measures' arithmetic (model/ground_truth.py, model/oracle_ground_truth.py),
Part 9's truths (model/calibration/). The names callers use are re-exported here.
"""
from .inputs import LayerInputs
from .oracle import oracle_check
from .readings import CHEAP, FIX_CITED, FIX_LABELS, FIX_TITLES, FIXES
from .records import GroundTruth, TruthRun
from .rows import row_table, rows_json
from .run import measure, run_reference
from .sentence import Folded, ablation_share
