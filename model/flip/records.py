"""What the adjective flip publishes (results.json `flip`): a pair, the per-head tests, a lens
over a set of pairs, a set, the heads that pass counted on the null pairs, and the whole;
each with the margins of what it counts (model/picks.py).

Not here: how any of it is computed (measure.py, analysis.py, heads.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PairResult:
    sentences: list[str]
    candidates: list[str]
    referents: list[str]          # the reader's, in the first and the second sentence (null pairs: pseudo-referents)
    order: str                    # "original" or "mirrored"
    source: int | None            # the pair it mirrors, or (a null pair) whose frame it shares; 1-based
    changed: int                  # heads (layer 0 left out) whose winner differs
    follows_reader: int           # heads whose winner is the reader's referent in both
    toward_reader: int            # heads whose preference shifted toward the reader
    mean_shift: float             # mean shift toward the reader over those heads
    layer0_changed: int           # heads of layer 0 whose winner differs: must be 0
    closer: list[str]             # the candidate the pronoun's final state is closer to, in each sentence
    # Per head, in the order layer * nh + head (layer 0 included), the winner's index in
    # `candidates`: one character per head, in the first sentence and in the second.
    winners: list[str]
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class HeadTests:
    """Per head outside layer 0 (lists in the order layer * nh + head): the sign test."""
    layer: list[int]
    head: list[int]
    follows: list[int]            # pairs whose winner changes the reader's way
    opposes: list[int]            # ... the other way round
    picks_reader: list[float]     # share of the sentences whose winner is the reader's referent (descriptive)
    p_value: list[float]          # one-sided binomial sign test, follows against opposes (1 without a change)
    p_corrected: list[float]      # Bonferroni: times `family`, capped at 1
    family: int                   # heads in the correction: the model's heads outside layer 0
    alpha: float
    n_significant: int
    significant: list[str]        # "L6H3", ...: corrected p below alpha, smallest first
    best: str                     # the smallest uncorrected p (ties: most follows, then the lowest head)
    best_follows: int
    best_opposes: int
    best_p_value: float
    best_p_corrected: float
    best_picks_reader: float
    null_max_follows: float       # the null_quantile of the largest follow count, each pair's sentences swapped at random
    permutations: int
    n_powered: int                # heads that change in enough pairs to pass, were every change the reader's way
    # Filled in for a set with both orders: the heads that pass within every order, each
    # order tested alone (a description of the within-order tests, not a test of its own).
    significant_in_every_order: list[str] = field(default_factory=list)
    n_significant_in_every_order: int = 0
    margins: dict = field(default_factory=dict)   # field -> (margin, step); "per_head": [margin] (picks.py)


@dataclass
class FlipLens:
    lens: str
    n_pairs: int
    n_heads: int                  # per pair, layer 0 left out
    changed_share: float          # of (pair, head): the winner changes
    changed_share_lo: float
    changed_share_hi: float
    toward_share: float           # of (pair, head): shifted toward the reader (0.5 if blind)
    toward_share_lo: float
    toward_share_hi: float
    follows_share: float          # of (pair, head): the reader's referent wins in both
    follows_share_lo: float
    follows_share_hi: float
    follows_every_pair: int       # heads that follow the reader in every pair
    most_pairs_followed: int      # the most pairs any one head follows the reader in
    opposes_share: float          # of (pair, head): the winner changes the other way round
    most_pairs_opposed: int       # the most pairs any one head goes against the reader in
    layer0_changed: int           # over every pair: must be 0
    heads: HeadTests | None = None
    pairs: list[PairResult] = field(default_factory=list)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FlipSet:
    """One set of pairs, analysed: every lens, and the model's own resolution."""
    n_pairs: int
    lenses: dict[str, FlipLens]
    model_follows: float          # of sentences: the pronoun's final state is closer to the reader's referent
    model_follows_lo: float
    model_follows_hi: float
    model_flips_with_reader: int  # pairs where that closer candidate flips the reader's way
    model_flips_share: float
    referent_a_named_first: int   # pairs whose first sentence's referent is named first in it
    orders: dict[str, "FlipSet"] = field(default_factory=dict)  # the same, within each order (pairs not repeated)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class PassingOnNull:
    """The heads that pass on the flip pairs (both orders), counted on the null pairs and on
    the flip pairs: their changes summed over those heads, and the share that goes the
    (borrowed) reader's way, with its interval over pairs."""
    heads: int
    null_follows: int
    null_opposes: int
    null_share: float | None      # None without a change (no head passes)
    null_share_lo: float | None
    null_share_hi: float | None
    flip_follows: int
    flip_opposes: int
    flip_share: float | None
    flip_share_lo: float | None
    flip_share_hi: float | None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FlipResults(FlipSet):
    """Every flip pair (both orders): the registered analysis; `null`, the control set."""
    null: FlipSet | None = None
    passing_on_null: dict[str, PassingOnNull] = field(default_factory=dict)   # per lens
    # The first pair, every head, for a figure: [weight on candidate 0, on candidate 1]
    # in the first sentence, then in the second (alpha lens).
    example: list[list[float]] = field(default_factory=list)
