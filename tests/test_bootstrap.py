"""Bootstrap intervals over sentences (model/bootstrap.py), against a brute-force
resampling of the same draws: each resample is built row by row, every row of a drawn
sentence repeated as often as the sentence was drawn, and the statistic computed on it
with plain NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from model.bootstrap import Resampler, _EXACT_ROWS, units

LEVEL = 0.95


def rows_by_sentence(n_units: int, seed: int, max_rows: int = 6):
    """Random rows, 1 to max_rows per unit: (values [R], unit [R])."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_rows + 1, n_units)
    unit = np.repeat(np.arange(n_units), sizes)
    return rng.random(unit.size), unit


def brute_force(r: Resampler, values, unit, statistic) -> tuple[float, float]:
    per_resample = []
    for counts in r.counts:
        picked = np.concatenate([np.repeat(values[unit == s], c, axis=0) for s, c in enumerate(counts) if c])
        per_resample.append(statistic(picked))
    tail = (1 - r.level) / 2 * 100
    lo, hi = np.percentile(per_resample, [tail, 100 - tail])
    return float(lo), float(hi)


def test_the_draws_are_resampled_corpora_of_sentences():
    r = Resampler(7, 500, seed=1, level=LEVEL)
    assert r.counts.shape == (500, 7)
    assert (r.counts.sum(axis=1) == 7).all()            # each resample is a corpus of 7 sentences
    assert (r.counts == 0).any(axis=1).mean() > 0.9      # most leave some sentence out
    assert np.array_equal(Resampler(7, 500, seed=1, level=LEVEL).counts, r.counts)   # the seed fixes them
    assert not np.array_equal(Resampler(7, 500, seed=2, level=LEVEL).counts, r.counts)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_median_is_the_brute_force_median(seed):
    values, unit = rows_by_sentence(15, seed)
    r = Resampler(15, 300, seed=seed, level=LEVEL)
    assert r.median(values, unit) == pytest.approx(brute_force(r, values, unit, np.median), abs=1e-12)


def test_max_share_and_mean_are_the_brute_force_ones():
    values, unit = rows_by_sentence(20, 5)
    r = Resampler(20, 300, seed=5, level=LEVEL)
    assert r.max(values, unit) == pytest.approx(brute_force(r, values, unit, np.max), abs=1e-12)
    flags = values > 0.7
    assert r.share(flags, unit) == pytest.approx(brute_force(r, flags, unit, np.mean), abs=1e-12)
    assert r.mean(values, unit) == pytest.approx(brute_force(r, values, unit, np.mean), abs=1e-12)


def test_binned_median_is_within_one_bin_of_the_exact_one():
    values, unit = rows_by_sentence(400, 7, max_rows=12)
    assert values.size > _EXACT_ROWS                       # the binned path
    r = Resampler(400, 200, seed=7, level=LEVEL)
    one_bin = (values.max() - values.min()) / 8192
    lo, hi = r.median(values, unit)
    exact_lo, exact_hi = brute_force(r, values, unit, np.median)
    assert abs(lo - exact_lo) <= one_bin and abs(hi - exact_hi) <= one_bin
    assert lo < hi


def test_rows_of_one_sentence_move_together():
    """Ten sentences of 100 identical rows each, values 0.0 ... 0.9: resampling sentences
    the median moves by whole sentences (a wide interval); resampling the 1,000 rows as if
    independent would pin it near 0.45."""
    unit = np.repeat(np.arange(10), 100)
    values = unit / 10.0
    lo, hi = Resampler(10, 2000, seed=3, level=LEVEL).median(values, unit)
    assert lo <= 0.25 and hi >= 0.65
    assert set(np.round([lo, hi], 10)) <= {round(k / 10 + d, 10) for k in range(10) for d in (0, 0.05)}


def test_identical_sentences_give_an_interval_of_zero_width():
    unit = np.repeat(np.arange(5), 3)
    values = np.tile([0.1, 0.5, 0.9], 5)
    r = Resampler(5, 400, seed=0, level=LEVEL)
    assert r.median(values, unit) == (0.5, 0.5)
    assert r.max(values, unit) == (0.9, 0.9)
    assert r.share(values > 0.4, unit) == pytest.approx((2 / 3, 2 / 3))


def test_the_level_sets_the_percentiles():
    r = Resampler(3, 10, seed=0, level=0.8)
    assert r.interval(np.arange(11.0)) == pytest.approx((1.0, 9.0))   # 10th and 90th percentiles


def test_units_are_positions_in_the_set_of_sentences():
    assert units(np.array([5, 5, 9, 2]), [9, 5, 2]).tolist() == [1, 1, 0, 2]


def test_rank_statistics_and_slopes_by_blocks_of_resamples_are_the_whole_ones_to_the_bit(monkeypatch):
    """Spearman, AUC and slope run a block of resamples at a time (the [B, R] arrays of the
    fresh corpus took 3.6 GB whole): blocks of 7 resamples, the last one short, give the
    bytes of one block of all 300."""
    from model import bootstrap

    rng = np.random.default_rng(3)
    rows = 500
    unit = rng.integers(0, 60, rows)
    x = np.round(rng.normal(size=rows), 1)            # ties
    y = x + rng.normal(size=rows)
    flags = y > 0.5
    rs = Resampler(60, 300, seed=1, level=0.95)

    def everything():
        return np.concatenate([rs.spearman_draws(x, y, unit), rs.auc_draws(x, flags, unit), rs.slope(x, y, unit)])

    whole = everything()
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 7 * rows)
    blocks = everything()
    assert blocks.tobytes() == whole.tobytes()
