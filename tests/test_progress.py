"""A long computation says where it is: stage, done of total, time spent and left
(livenumbers/progress.py over livenumbers/timing.py)."""
from __future__ import annotations

import io
import json
import time

from livenumbers import progress, timing


def work(pause: float = 0.0, step=lambda: None) -> None:
    """A computation as the study's is timed: two models, each a counted loop (`step` runs
    after each of its steps)."""
    with timing.stage("measurement"):
        for key in timing.counted(["a", "b"], 2):
            with timing.stage(f"model {key}"), timing.stage("reference"):
                for _ in timing.counted(range(3), 3):
                    time.sleep(pause)
                    step()


def said_again(out: io.StringIO):
    """A step that, from the loop's second step on (the first has then been counted), waits
    up to 10 s (the machine may be busy) until the watch has said the loop's count and its
    time left, so that the test never depends on when the watch's thread wakes."""
    steps = []

    def step() -> None:
        steps.append(1)
        deadline = time.monotonic() + 10
        while len(steps) >= 2 and "reference about" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    return step


def test_each_stage_is_announced_with_its_count_and_time_spent(tmp_path):
    out = io.StringIO()
    with progress.watching("computing", tmp_path, stream=out, every=0.05):
        work(0.03, said_again(out))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("computing · 0:00 spent")
    assert any(line.startswith("computing: measurement (0 of 2) / model a / reference") for line in lines), lines
    assert any(line.startswith("computing: measurement (1 of 2) / model b") for line in lines), lines
    # a stage running on is said again, its loop's count and rate with it (no earlier run)
    assert any(" / reference (" in line and " of 3)" in line and "reference about 0:00 left" in line for line in lines), lines
    assert lines[-1].startswith("computing: done in 0:0")
    kept = json.loads((tmp_path / progress.STAGES_FILE).read_text(encoding="utf-8"))
    assert set(kept) >= {"measurement", "measurement/model a", "measurement/model a/reference"}


def test_a_loop_counted_with_no_stage_of_its_own_is_said_with_its_time_left(tmp_path):
    """`counted()` alone, no `timing.stage` around it (a source's first loop): the watch says
    how far it has come and how long the rest will take at its rate."""
    out = io.StringIO()
    with progress.watching("computing", tmp_path, stream=out, every=0.05):
        for i in timing.counted(range(4), 4):
            time.sleep(0.03)
            deadline = time.monotonic() + 10
            while i >= 1 and " left" not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.01)
    lines = out.getvalue().splitlines()
    assert any(line.startswith("computing (") and " of 4) · 0:00 spent · about 0:0" in line for line in lines), lines


def test_the_next_run_says_the_time_left_from_the_last_runs_stages(tmp_path):
    (tmp_path / progress.STAGES_FILE).parent.mkdir()
    (tmp_path / progress.STAGES_FILE).write_text(json.dumps({"measurement/model a": 60.0, "measurement/model b": 60.0}))
    out = io.StringIO()
    with progress.watching("computing", tmp_path, stream=out, every=10):
        with timing.stage("measurement"):
            with timing.stage("model a"):
                pass
            with timing.stage("model b"):
                # model a done, in no time where the last run took a minute: this run's pace (counted
                # once 5% of the work is done) says model b's minute will take no time either
                assert timing._listeners[-1].line().endswith("about 0:00 left")
    assert "about 2:00 left" in out.getvalue().splitlines()[0]   # nothing done yet: the last run's two minutes


def test_an_unreadable_estimate_is_no_estimate_and_stages_outside_the_watch_are_not_its(tmp_path):
    (tmp_path / progress.STAGES_FILE).parent.mkdir()
    (tmp_path / progress.STAGES_FILE).write_text("[not json")
    out = io.StringIO()
    with timing.stage("around"):
        with progress.watching("computing", tmp_path, stream=out, every=10):
            work()
    assert "left" not in out.getvalue().splitlines()[0]
    assert all("around" not in line for line in out.getvalue().splitlines())
    assert timing._listeners == []
