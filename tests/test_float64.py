"""What is published is computed in float64 (issue 46): another CPU's float64 rounding (about
1e-16 relative an operation) sits ten orders of magnitude under every printed digit, where
float32's, amplified by a small effect or a log ratio, turned published numbers on three CPUs.

The small study is measured whole (the forward passes, Parts 8 and 9's truths and fixes, the
checks) with every torch operation watched: none may touch a float32 tensor. Float32 stays only
where it is the subject (the browser runtime and its parity test, tests/test_browser_runtime.py).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode


# What touches a float32 tensor without computing with its values: building a module (its
# parameters made and filled at random, then replaced by the checkpoint's, in float64), reading
# a shape, and converting to float64.
NO_ARITHMETIC = {"_VariableFunctionsClass.empty", "normal_", "uniform_", "kaiming_uniform_", "TensorBase.fill_",
                 "TensorBase.zero_", "TensorBase.dim", "TensorBase.size", "getset_descriptor.__get__"}


class Float32Watch(TorchFunctionMode):
    """Every torch function or method that computes with a float32 tensor, or makes one: its name."""

    def __init__(self):
        super().__init__()
        self.seen: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
        inputs = [x for x in (*args, *(kwargs or {}).values()) if isinstance(x, torch.Tensor)]
        outputs = [x for x in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(x, torch.Tensor)]
        made = any(t.dtype == torch.float32 for t in outputs)
        used = any(t.dtype == torch.float32 for t in inputs) and name != "TensorBase.to"   # float32 -> float64 is exact
        if (made or used) and name not in NO_ARITHMETIC:
            self.seen[name] = self.seen.get(name, 0) + 1
        return out


@pytest.fixture(scope="module")
def watched(l6, small_study):
    """The small study measured (self-checks included) on this thread, every torch call watched."""
    from model import checks, cluster, measure

    watch = Float32Watch()
    # One thread: a TorchFunctionMode watches the thread it is entered on.
    with cluster.using(cluster.InProcess(threads=1)), watch:
        m = measure.measure_model(l6, small_study, "l6")
        checks.run(l6, m, small_study)
    return m, watch


def test_no_torch_operation_of_the_published_path_touches_float32(watched):
    _, watch = watched
    assert watch.seen == {}, f"float32 on the published path: {watch.seen}"


def test_the_watch_sees_a_float32_product():
    """The watch itself: a float32 product is seen (the test above cannot pass by watching nothing)."""
    single, double = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)
    watch = Float32Watch()
    with watch:
        double @ double
        single.to(torch.float64)
    assert watch.seen == {}
    with watch:
        single @ single
    assert list(watch.seen.values()) == [1]


def test_every_array_the_measurements_read_is_float64(watched):
    m, _ = watched
    for acts in m.corpus.acts:
        for name in ("alpha", "value_norm", "output_norm", "hidden"):
            assert getattr(acts, name).dtype == np.float64, name
    for folded in m.truth.folded:
        for name, rows in folded.fix_rows.items():
            assert rows.dtype == np.float64, name


def test_the_reference_is_float64_and_float32_only_when_asked(l6):
    from model import encoder

    assert encoder.Encoder.from_checkpoint(l6).dtype == torch.float64
    as_trained = encoder.Encoder.from_checkpoint(l6, torch.float32)   # the browser runtime's comparison
    ids, mask = encoder.pad([[101, 7592, 102]])
    assert as_trained(ids, mask).hidden.dtype == torch.float32


def test_the_floors_are_a_thousand_times_what_two_kernel_paths_differ_by():
    """study.yml's margin floor and simulated machine are 1000x the measured difference of two
    real kernel paths (bench/kernels.py), rounded up to a power of ten: neither below (too
    little room for another CPU) nor far above (a floor that refuses honest picks)."""
    from conftest import ROOT
    from model import study

    st = study.load(ROOT / "docs" / "study.yml")
    for setting, measured in ((st.picks.margin_floor, st.kernel_paths.margin_move),
                              (st.simulated_machine.nudge, st.kernel_paths.layer_difference)):
        assert measured > 0 and 1000 * measured <= setting < 10_000 * measured
