"""`make bench`'s reading of a build's stage timings (bench/stages.py): what the table prints
as a stage's untimed rest, and a stage summed wherever a corpus's own stage nests it."""
from __future__ import annotations

from bench import stages

M = "gate/measurement/model l6/calibration"


def timed(seconds: float, main: bool = True) -> dict:
    return {"seconds": seconds, "calls": 1, "main_thread": main}


RUN = {
    M: timed(100.0),
    f"{M}/reference": timed(5.0),
    f"{M}/calibration truths": timed(40.0),
    f"{M}/calibration truths/downstream": timed(70.0, main=False),    # two threads' seconds
    f"{M}/fresh corpus": timed(50.0),
    f"{M}/fresh corpus/reference": timed(3.0),
    f"{M}/fresh corpus/calibration truths": timed(45.0),
    f"{M}/fresh corpus/calibration truths/downstream": timed(80.0, main=False),
}


def test_a_stage_s_rest_leaves_out_the_seconds_of_threads_beside_it():
    assert stages.value(RUN, f"rest:{M}/calibration truths") == 40.0       # not 40 - 70
    assert stages.value(RUN, f"rest:{M}/fresh corpus") == 2.0               # 50 - 3 - 45
    assert stages.value(RUN, f"rest:{M}") == 5.0                            # 100 - 5 - 40 - 50


def test_the_threads_own_table_has_no_rest_of_a_stage_it_does_not_list():
    beside = {p for p, v in RUN.items() if not v["main_thread"]}
    rows = stages.tree(beside, ["l6"])
    assert [path for _, _, path in rows] == sorted(beside, key=lambda p: stages.sort_key(p, ["l6"]))
    assert [(label, depth) for label, depth, _ in rows] == [(path, 0) for _, _, path in rows]   # named in full
    main = {p for p, v in RUN.items() if v["main_thread"]}
    rows = stages.tree(main, ["l6"])
    assert [path for _, _, path in rows if path.startswith("rest:")] == [f"rest:{M}/fresh corpus", f"rest:{M}"]
    assert [(label, depth) for label, depth, path in rows if not path.startswith("rest:")] == [
        (M, 0), ("reference", 4), ("calibration truths", 4), ("fresh corpus", 4), ("reference", 5),
        ("calibration truths", 5)]


def test_a_stage_is_summed_wherever_a_corpus_nests_it():
    assert stages.under(RUN, M, "reference") == 8.0
    assert stages.under(RUN, M, "calibration truths") == 85.0
    assert stages.under(RUN, M, "downstream") == 150.0
    assert stages.under(RUN, f"{M}/fresh corpus", "calibration truths") == 45.0
