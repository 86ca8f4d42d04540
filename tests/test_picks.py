"""Picks over floats and their margins (model/picks.py), by hand."""
import numpy as np
import pytest

from model import picks


def test_best_takes_the_first_within_the_tolerance():
    assert picks.best([0.3, 0.5, 0.4995], 1e-3).index == 1
    assert picks.best([0.4995, 0.5], 1e-3).index == 0                     # tied: the first
    assert picks.best([0.4985, 0.5], 1e-3).index == 1                     # a real gap
    assert picks.least([0.1, 0.05, 0.0501], 1e-4).index == 1


@pytest.mark.parametrize("scores, tolerance, margin, alternative", [
    ([0.5, 0.2, 0.5], 0.0, 0.3 / 0.5, 1),          # an exact tie is one by construction: left out
    ([0.3, 0.5, 0.4995], 1e-3, 0.0015 / 0.5, 2),   # the later one must rise past 0.501 to turn it
    ([0.4985, 0.5, 0.1], 1e-3, 0.0005 / 0.5, 0),   # the earlier one is 5e-4 below the band
    ([0.5, 0.4, 0.5005], 1e-3, 0.0005 / 0.5005, 2),  # the pick is 5e-4 inside the band
])
def test_best_columns_margin_and_alternative(scores, tolerance, margin, alternative):
    pick, m, alt = picks.best_columns(np.array(scores)[:, None], tolerance)
    assert m[0] == pytest.approx(margin) and alt[0] == alternative


def test_the_margin_is_what_a_nudge_needs_to_turn_the_pick():
    """Scores nudged by less than the margin keep the pick; by more, they can turn it."""
    rng = np.random.default_rng(0)
    s = rng.random((40, 500))
    pick, margin, alt = picks.best_columns(s, 1e-2)
    for _ in range(20):
        nudge = rng.uniform(-1, 1, s.shape) * 0.49 * margin * s.max(axis=0)   # each score by < margin / 2
        assert (picks.best_columns(s + nudge, 1e-2)[0] == pick).all()
    turned = 0
    for c in range(s.shape[1]):    # the nearest constraint broken: the alternative is chosen
        t = s[:, c].copy()
        gap = margin[c] * s[:, c].max()
        t[alt[c]] += 2 * gap if alt[c] != pick[c] else 0
        t[pick[c]] -= 2 * gap if alt[c] != pick[c] else 0
        turned += picks.best(t, 1e-2).index != pick[c]
    assert turned > s.shape[1] * 0.9


def test_threshold_and_count_margins():
    assert picks.threshold_margin([0.4, 0.51, np.nan], 0.5) == pytest.approx(0.02)
    assert picks.threshold_margin([], 0.5) == picks.NO_MARGIN
    # a row whose alternative head lands on the other side: its head's margin counts
    assert picks.count_margin([0.2, 0.8], 0.5, [0.6, 0.9], [1e-6, 1e-3]) == pytest.approx(1e-6)
    assert picks.count_margin([0.2, 0.8], 0.5, [0.3, 0.9], [1e-6, 1e-3]) == pytest.approx(0.6)
    assert picks.count_margin([0.2], 0.5, [np.nan], [1e-4]) == pytest.approx(1e-4)   # unmeasured: could turn
    assert picks.comparison_margin([1.0, 2.0], [1.1, 2.0]) == pytest.approx(0.1 / 1.1)


def test_top_margins_and_leads():
    assert picks.top_margins([[0.1, 0.5, 0.4], [0.5, 0.5, 0.0]]).tolist() == pytest.approx([0.2, np.inf])
    assert picks.lead_margin(0, [3e-6, 1e-3]) == 3e-6      # a tie turns with one row
    assert picks.lead_margin(2, [3e-6, 1e-3]) == 1e-3      # a lead of two needs two
    assert picks.lead_margin(3, [3e-6, 1e-3]) == picks.NO_MARGIN
    assert picks.family("above_50", 0.1, 4)["above_50_share"] == (0.1, 0.25)
    assert picks.family("above_50", 0.1, 4)["above_50_share_lo"] == (0.1, 0.75)   # a bound moves by up to 3 rows' share


def test_rank_margins_turn_with_the_lead():
    # counts 10, 9, 5, 5: first place leads by one (one row turns it), second is one behind the
    # first and four ahead of the third (one row), third ties the fourth (one row)
    margins = [1e-3, 2e-3, 3e-3, 4e-3, 5e-3]
    assert picks.rank_margins([10, 9, 5, 5], margins) == [1e-3, 1e-3, 1e-3]
    assert picks.rank_margins([10, 7, 4], margins) == [3e-3, 3e-3, 3e-3]   # leads of 3: the 3rd smallest
    assert picks.rank_margins([10], margins) == [picks.NO_MARGIN]
    assert picks.row_margins([0.5005, 0.9], 0.5, [1.0, 1e-4]).tolist() == pytest.approx([1e-3, 1e-4])


def test_a_count_ignores_rows_not_measured_whatever_their_pick():
    assert picks.count_margin([np.nan, 0.2], 0.5, [0.9, 0.2], [1e-6, 1.0]) == pytest.approx(0.6)
