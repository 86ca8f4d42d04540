"""What Part 8 publishes, a dataclass a table (results.json `ground_truth`), each with the
margins of its counts (model/picks.py); `TruthRun`, the reference's measures of one model,
kept for the oracle's check and the views; and `no_nan`, a record made fit for JSON.

Not here: how the figures are computed (summary.py, margins.py, oracle.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .sentence import Folded


@dataclass
class AblationStats:
    """The ground truth on the held-out rows, on the head one lens opens."""
    lens: str
    n_rows: int
    n_sentences: int                       # held-out sentences the rows come from
    median_share: float
    median_share_lo: float
    median_share_hi: float
    above_50: int
    above_50_share: float
    above_50_share_lo: float
    above_50_share_hi: float
    median_sink_effect: float
    median_content_effect: float
    median_head_effect: float
    median_head_effect_lo: float
    median_head_effect_hi: float
    harmful: int
    harmful_share: float
    harmful_share_lo: float
    harmful_share_hi: float
    registered_median_sink: float          # the same rows' registered sink share, for comparison
    median_share_without_word: float | None = None   # sensitivity: content without the word's own tokens (alpha)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FixStats:
    """A later fix read as a lens on the row the instrument opened under alpha."""
    fix: str
    n_sentences: int        # the sentences it is measured on (value zeroing: a sample)
    n_rows: int             # held-out rows among them
    n_test_sentences: int   # the held-out sentences those rows come from
    median_sink: float
    median_sink_lo: float
    median_sink_hi: float
    median_sink_other: float          # added: among the other words (own column dropped)
    median_sink_other_lo: float
    median_sink_other_hi: float
    median_self: float                # the word's own column
    median_self_lo: float
    median_self_hi: float
    above_50_share: float
    above_50_share_lo: float
    above_50_share_hi: float
    above_50_other_share: float
    # The stop rule, as registered, on every displayed row measured (both halves):
    rows_above: int
    n_rows_all: int
    adopted: bool
    rows_above_other: int             # added: the sink share among the other words
    adopted_other: bool
    max_sink: float                   # the largest sink share of those rows (added after review)
    max_sink_other: float             # ... among the other words
    # The norm lens (its own head) on the same rows: its rows above half there (added after
    # the third sceptical reading: a sample can pass the rule by having no such row)
    norm_lens_rows_above: int = 0
    # Sensitivity (Kobayashi 2021 and ALTI only): the layer of the strongest displayed arrow
    strongest_median_sink: float | None = None
    strongest_rows_above: int | None = None
    strongest_adopted: bool | None = None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Tracking:
    lens: str                         # a reading, or a position baseline (POSITION_BASELINES)
    n_rows: int
    n_sentences: int                  # held-out sentences the rows come from
    n_harmful: int
    spearman: float
    spearman_lo: float
    spearman_hi: float
    auc: float
    auc_lo: float
    auc_hi: float
    # Paired with alpha on the same rows and resamples (added after the third sceptical
    # reading): alpha's own statistic there, and this reading's minus alpha's.
    alpha_spearman: float | None = None
    spearman_vs_alpha: float | None = None
    spearman_vs_alpha_lo: float | None = None
    spearman_vs_alpha_hi: float | None = None
    alpha_auc: float | None = None
    auc_vs_alpha: float | None = None
    auc_vs_alpha_lo: float | None = None
    auc_vs_alpha_hi: float | None = None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Yardstick:
    """The harmful count at another yardstick than the registered one (added after the third
    sceptical reading): a row of alpha's head is harmful when its sink effect is above it."""
    threshold: float
    harmful: int                      # held-out rows of the sample, alpha's head
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class IdleHeads:
    """Under one norm lens: do its surviving rows sit on heads that do little to their word?"""
    lens: str
    n_survivors: int                  # held-out rows above half on the head this lens opens
    median_ratio_survivors: float
    median_ratio_survivors_lo: float
    median_ratio_survivors_hi: float
    median_ratio_others: float
    median_ratio_others_lo: float
    median_ratio_others_hi: float
    median_effect_survivors: float    # the measured head effect on those rows
    median_effect_survivors_lo: float
    median_effect_survivors_hi: float
    median_effect_others: float
    median_effect_others_lo: float
    median_effect_others_hi: float
    idle: bool                        # study.yml's decision
    # What the measured effects rest on (added after review): the survivors in the ablation's
    # sample, their sentences, those whose head moves the word more than the harmful threshold,
    # those harmful themselves, and their median head effect over the threshold.
    n_survivors_measured: int
    n_survivor_sentences_measured: int
    survivors_above_threshold: int
    survivors_harmful: int
    survivors_effect_over_threshold: float
    # The effect-weighted rule (chosen after seeing the reader's numbers):
    weighted_rows_above: int
    weighted_n_rows: int
    weighted_adopted: bool
    weighted_median_sink: float
    weighted_median_sink_lo: float
    weighted_median_sink_hi: float
    weighted_above_50_share: float
    weighted_above_50_share_lo: float
    weighted_above_50_share_hi: float
    weighted_same_head_share: float   # rows on the head the registered rule opens
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Agreement:
    """Reference against oracle, on the oracle's sentences (largest absolute difference)."""
    sentences: int
    ablation_sentences: int           # those in the ablation's sample: where ablation shares are compared
    zeroing_sentences: int
    max_abs_ablation_share: float
    max_abs_effect: float             # the effects themselves (cosine distances)
    max_abs_kobayashi2021: float      # normalized token rows
    max_abs_alti: float
    max_abs_value_zeroing: float
    max_abs_bound_ratio: float


@dataclass
class HarmfulRows:
    """What the harmful rows (held-out, alpha's head) are (added after review)."""
    n_rows: int
    first_word: int                           # ... that are their sentence's first word
    top_head: str | None                      # the head holding most of them ("L6H4"; ties: lowest layer, head)
    top_head_rows: int
    top_head_opened: int                      # every displayed row (both halves) the rule opens that head for
    top_head_opened_first_word: int           # ... that are first words
    top_head_opened_share: float = 0.0        # ... as a share of every displayed row (a near-tie row moves a count by one)
    top_head_opened_first_word_share: float = 0.0   # ... the share of those that are first words
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class GroundTruth:
    harmful_threshold: float                  # the median head effect, alpha rows, every sentence of the sample
    n_threshold_rows: int                     # the rows it is the median of (both halves of the sample)
    ablation_every: int                       # the ablation's sample: every n-th sentence
    n_ablation_sentences: int
    value_zeroing_every: int
    n_zeroing_sentences: int
    ablation: dict[str, AblationStats]
    fixes: dict[str, FixStats]
    tracking: dict[str, Tracking]
    idle: dict[str, IdleHeads]
    bound_effect_spearman: float              # the bound ratio against the measured head effect (alpha's head)
    bound_effect_spearman_lo: float
    bound_effect_spearman_hi: float
    harmful_rows: HarmfulRows | None = None
    yardsticks: dict[str, Yardstick] = field(default_factory=dict)   # harmful at other yardsticks
    agreement: Agreement | None = None        # reference against oracle (checks.py fills it in)


@dataclass
class TruthRun:
    """The reference's measures of one model, kept for the oracle's check and the views."""
    asks: list
    folded: list[Folded]
    ratios: list[np.ndarray]                  # per sentence, bound_ratios [L, nh, n_words]
    ablation: list[int]                       # the ablation sample
    zeroing: list[int]                        # the value-zeroing sample
    table: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)   # row_table
    results: GroundTruth | None = None


def no_nan(obj):
    """A dataclass's float fields with NaN (an empty subset's statistic) as None: results
    are published as JSON, which has no NaN."""
    for name, value in vars(obj).items():
        if isinstance(value, float) and np.isnan(value):
            setattr(obj, name, None)
        elif isinstance(value, dict):
            for v in value.values():
                if hasattr(v, "__dataclass_fields__"):
                    no_nan(v)
        elif hasattr(value, "__dataclass_fields__"):
            no_nan(value)
    return obj
