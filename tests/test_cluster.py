"""The measurement's maps on Dask distributed (model/cluster.py, issue 35).

- The same results.json, byte for byte, in this process on two threads and on three, and on
  a local cluster of 2 workers (a small study of 40 sentences, 17 in each of Parts 9 and 10's
  corpora, and one model: big enough that every map has several items, two forward batches or
  more, three truth tasks on the corpus and two on each other; the whole measurement, checks
  included).
- A worker killed in the middle of a map costs a retry, not the run: the results equal an
  undisturbed run's.
- A model file damaged on one worker fails the run with that worker's message (the file,
  its sha256), and does not hang.
- The settings: MEASURE_WORKERS read by a build, a bad value named.

Local clusters listen on 127.0.0.1 only: nothing here leaves the machine.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, copy_project, use_small_corpus


@pytest.fixture(scope="module")
def small_project(tmp_path_factory) -> Path:
    import yaml

    from model.calibration.truths import SENTENCES_PER_TASK

    project = copy_project(ROOT, tmp_path_factory.mktemp("cluster") / "project")
    study = yaml.safe_load((ROOT / "docs" / "study.yml").read_text(encoding="utf-8"))
    use_small_corpus(project, n=40, models=[m for m in study["models"] if m["key"] == "l6"],
                     others=SENTENCES_PER_TASK + 1)   # two truth tasks each
    return project


def measure(project: Path, out: Path, *args: str, threads: int | None = None) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MEASURE_WORKERS", None)
    env.pop("MEASURE_THREADS", None)
    if threads:
        env["MEASURE_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-m", "model", "measure", "--results", str(out), *args], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out.read_bytes()


def test_the_results_are_the_same_in_process_on_2_and_3_threads_and_on_2_workers(small_project, tmp_path):
    """Every map item runs on one thread of arithmetic wherever it runs (cluster.one_thread), so
    the bytes do not depend on how many threads or workers share the items. Three measurements
    (each about a minute in float64): the build's two threads, three (more threads than cores,
    items finishing in another order), and a cluster of two workers (the items in other processes)."""
    here = measure(small_project, tmp_path / "here.json", threads=2)
    assert b'"calibration"' in here and b'"ground_truth"' in here     # the maps that run on the cluster ran
    assert measure(small_project, tmp_path / "threads3.json", threads=3) == here, "3 threads in process"
    assert measure(small_project, tmp_path / "workers2.json", "--workers", "2") == here, "2 workers"


@pytest.fixture(scope="module")
def chunks(l6):
    """The forward map's items for the real corpus (several batches), and their results here."""
    from model import activations, perturb, study
    from model.tokenize import tokenize

    st = study.load(ROOT / "docs" / "study.yml")
    ids = [tokenize(s, l6.tokenizer_dir, 512).ids for s in st.sentences[:120]]
    items = [activations.Chunk(l6.name, perturb.Perturbation(), [ids[i] for i in c], False)
             for c in activations.batches([len(x) for x in ids])]
    assert len(items) >= 4
    return items


def same(a, b) -> bool:
    return all(np.array_equal(x.alpha, y.alpha) and np.array_equal(x.hidden, y.hidden)
               for (x, _), (y, _) in zip(a, b))


def test_a_worker_killed_in_the_middle_costs_a_retry(chunks, l6):
    from model import activations, cluster, encoder

    model = encoder.Encoder.from_checkpoint(l6)
    want = [activations.forward(c, model) for c in chunks]
    runner = cluster.Cluster(2)
    try:
        pids = runner.client.run(os.getpid)
        got, killed = [], False
        for result in runner.map(activations.forward, chunks):
            got.append(result)
            if not killed:   # the others are in flight: one of them on the worker killed now
                os.kill(next(iter(pids.values())), signal.SIGKILL)
                killed = True
    finally:
        runner.close()
    assert killed and len(got) == len(want)
    assert all(same(g, w) for g, w in zip(got, want))


def test_a_model_damaged_on_one_worker_fails_with_that_worker_s_message(chunks, l6, tmp_path):
    from model import activations, cluster

    folder = tmp_path / "damaged"
    shutil.copytree(l6.weights_path.parent, folder)
    damaged = folder / l6.weights_path.name
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF                                    # one byte, inside the tensors
    damaged.write_bytes(bytes(data))

    def damage_here(path=str(damaged), original=str(l6.weights_path)):
        from pathlib import Path as P

        from model import weights

        real = weights.package_file
        weights.package_file = lambda dist, rel: P(path) if str(real(dist, rel)) == original else real(dist, rel)
        cluster._CHECKPOINTS.clear()
        cluster._ENCODERS.clear()

    runner = cluster.Cluster(2)
    try:
        first = next(iter(runner.client.scheduler_info()["workers"]))
        runner.client.run(damage_here, workers=[first])
        with pytest.raises(Exception) as failed:
            list(runner.map(activations.forward, chunks))
    finally:
        runner.close()
    assert str(damaged) in str(failed.value) and "sha256" in str(failed.value)


def test_the_settings(monkeypatch):
    from model import cluster
    from model.errors import UserError

    monkeypatch.delenv(cluster.WORKERS_ENV, raising=False)
    monkeypatch.delenv(cluster.SCHEDULER_ENV, raising=False)
    assert isinstance(cluster.from_settings(), cluster.InProcess)
    monkeypatch.setenv(cluster.WORKERS_ENV, "two")
    with pytest.raises(UserError, match="MEASURE_WORKERS='two'"):
        cluster.from_settings()
    with pytest.raises(UserError, match="at least one worker"):
        cluster.from_settings(0)
    monkeypatch.delenv(cluster.WORKERS_ENV)
    monkeypatch.setenv(cluster.THREADS_ENV, "3")
    assert cluster.from_settings().threads == 3
    for bad in ("three", "0"):
        monkeypatch.setenv(cluster.THREADS_ENV, bad)
        with pytest.raises(UserError, match=f"MEASURE_THREADS='{bad}'"):
            cluster.from_settings()


def test_a_local_cluster_listens_on_loopback_only():
    """Every socket the driver and its workers listen on is on 127.0.0.1, and there is no
    dashboard (bokeh is not installed; the scheduler's health routes are all that serve)."""
    import psutil

    from model import cluster

    runner = cluster.Cluster(2)
    try:
        pids = [os.getpid(), *runner.client.run(os.getpid).values()]
        listening = [c.laddr for pid in pids for c in psutil.Process(pid).net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN]
        assert len(listening) >= 3                       # the scheduler and each worker
        assert {addr.ip for addr in listening} == {"127.0.0.1"}, listening
        with pytest.raises(ImportError):
            import bokeh  # noqa: F401
    finally:
        runner.close()


def test_a_sentence_file_maps_on_workers_with_the_same_bytes(small_project, tmp_path):
    """`measure --sentences FILE --workers 2` runs its maps on the workers (no option is taken
    and ignored): the same output, byte for byte, as in this process."""
    sentences = tmp_path / "mine.txt"
    sentences.write_text("The cat sat on the mat.\nA storm closed the harbour for two days.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MEASURE_WORKERS", None)
    run = lambda *extra: subprocess.run([sys.executable, "-m", "model", "measure", "--sentences", str(sentences),
                                         "--json", *extra], cwd=small_project, env=env, capture_output=True, timeout=600)
    here, there = run(), run("--workers", "2")
    assert here.returncode == 0 and there.returncode == 0, (here.stderr + there.stderr)[-3000:]
    assert b"on a local cluster" in there.stderr and here.stdout == there.stdout

