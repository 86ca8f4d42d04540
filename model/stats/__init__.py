"""Summary statistics of the displayed rows, the rule-free view and the value norms.

Every figure is computed over one set of sentences (a half of the corpus, or all of
it); headline figures carry a bootstrap interval over those sentences (`_lo`, `_hi`
beside the figure; model/bootstrap.py). Counts come with the share they are of the
rows, so that no claim rests on the corpus's size. One concept a module:

- `rows`:   the statistics of a set of displayed rows (`SinkStats`), with their margins;
            the rows whose head the tie tolerance decides;
- `lenses`: per lens, the held-out rows' headline, and each norm lens against alpha;
- `layers`: the rule-free view: every head's rows, layer by layer;
- `norms`:  [CLS]'s, [SEP]'s and punctuation's norms over the content tokens'.

Not here: Part 8's and Part 9's statistics (model/truth/, model/calibration/), the flip's
(model/flip/). The names callers use are re-exported here.
"""
from .layers import LayerStats, per_layer
from .lenses import LensSummary, World, summaries
from .norms import CLS_LONG, RatioStats, head_ratios, long_heads, longest_layers, punct_ratios, ratio_of, value_ratios
from .rows import NearTies, SinkStats, near_ties, sink_stats
