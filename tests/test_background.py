"""Work a cold build runs beside the measurement (model/site/background.py)."""
from __future__ import annotations

import threading

import pytest

from livenumbers import background


@pytest.fixture(autouse=True)
def no_jobs_left():
    yield
    background.wait_all()


def test_a_job_runs_beside_and_its_result_is_waited_for():
    release = threading.Event()
    background.start("job", lambda x: release.wait(5) and x * 2, 21)
    release.set()
    assert background.wait("job") == 42
    assert background.wait("job") is None                       # waited for: gone


def test_a_name_runs_once_until_it_is_waited_for():
    runs = []
    release = threading.Event()
    background.start("once", lambda: release.wait(5) and runs.append(1))
    background.start("once", lambda: runs.append(2))
    release.set()
    background.wait("once")
    assert runs == [1]


def test_a_jobs_error_is_raised_where_it_is_waited_for():
    def fail():
        raise ValueError("the notebook failed")

    background.start("bad", fail)
    with pytest.raises(ValueError, match="the notebook failed"):
        background.wait("bad")


def test_wait_all_ends_every_job():
    done = []
    for i in range(3):
        background.start(f"job{i}", done.append, i)
    background.wait_all()
    assert sorted(done) == [0, 1, 2] and background.wait("job0") is None
