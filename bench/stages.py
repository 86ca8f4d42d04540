"""The stage timings a build writes (model/timing.py), checked against what the bench expects.

A stage's path is the names of the stages open around it, joined by "/". A stage the
bench expects and a build's timings lack is an error that names it: renaming or moving a
timer must show here, never as a silent zero.
"""
from __future__ import annotations

import json
from pathlib import Path


class MissingStage(Exception):
    pass


def read(path: Path, pid: int) -> dict[str, dict]:
    """The stages written by process `pid` to `path` (a child of the build that also
    timed something and wrote last would be caught here)."""
    if not path.is_file():
        raise MissingStage(f"{path.name}: the build wrote no stage timings (is model/timing.py imported "
                           f"by the code it ran, and BUILD_TIMINGS passed to it?)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("pid") != pid:
        raise MissingStage(f"{path.name}: written by process {data.get('pid')}, not by the build ({pid})")
    return data["stages"]


def cold_expected(models: list[str], runtime_models: list[str]) -> list[str]:
    """Every stage a cold build must time, for study.yml's models and runtime models."""
    per_model = ["", "/weights", "/reference", "/reference/import torch", "/ground truth", "/checks", "/checks/oracle",
                 "/checks/oracle/ground truth", "/views", *CALIBRATION]
    out = ["gate", "gate/measurement"]
    out += [f"gate/measurement/model {k}{s}" for k in models for s in per_model]
    out += ["gate/charts", "gate/page rendering", "publishing files", "publishing files/waiting for vega",
            "Vega bundle", "notebook", "waiting for notebook"]
    if runtime_models:
        out += ["publishing files/runtime export", "publishing files/runtime export/weights"]
    return out


# Part 9's stages in a model's (model/calibration/): the confirmation corpus's forward pass,
# the truths (the downstream ones nested), the scores.
CALIBRATION = ["/calibration", "/calibration/reference", "/calibration/calibration truths",
               "/calibration/calibration truths/downstream", "/calibration/scores"]

WARM_EXPECTED = ["gate", "publishing files"]


def measurement_expected(key: str) -> list[str]:
    """The stages `results.compute` on a one-model study must time."""
    return [f"measurement/model {key}", f"measurement/model {key}/reference/import torch"]


def check(stages: dict[str, dict], expected: list[str], what: str) -> None:
    missing = [s for s in expected if s not in stages]
    if missing:
        raise MissingStage(f"{what}: expected stage(s) missing from the build's timings: "
                           + ", ".join(repr(s) for s in missing)
                           + f" (timed: {', '.join(sorted(stages)) or 'nothing'})")


def seconds(stages: dict[str, dict], path: str) -> float:
    return stages[path]["seconds"]


def under(stages: dict[str, dict], prefix: str, name: str) -> float:
    """The seconds of every stage named `name` below `prefix`, wherever a corpus's own stage
    nests it ("calibration/reference" and "calibration/fresh corpus/reference")."""
    return sum(v["seconds"] for p, v in stages.items() if p.startswith(prefix + "/") and p.endswith("/" + name))


# Display order of stage names (unknown names go last, by name), and what the untimed
# rest inside a stage is.
ORDER = ["gate", "measurement", "model", "weights", "reference", "import torch", "ground truth", "calibration",
         "calibration truths", "downstream", "scores", "fresh corpus", "checks", "oracle", "views",
         "charts", "page rendering", "publishing files", "waiting for vega", "Vega bundle", "runtime export",
         "waiting for notebook", "notebook"]
REST = {
    "gate": "rest: provenance digests, lock, compare",
    "measurement": "rest: results assembled",
    "model": "rest: tokenize, rows, statistics, bootstrap, flip",
    "reference": "rest: the forward passes (corpus, flip pairs)",
    "checks": "rest: unit-norm, [CLS]-zero, mutant",
    "calibration": "rest: the confirmation corpus's rows and Part 8 truth, the readings",
    "calibration truths": "rest: the layer truth",
    "fresh corpus": "rest: its rows and Part 8 truth, the readings",
    "oracle": "rest: the oracle's forward pass",
    "publishing files": "rest: index, listing, cache reads",
    "runtime export": "rest: export, cache write",
}


def sort_key(path: str, models: list[str]) -> tuple:
    key = []
    for name in path.split("/"):
        if name.startswith("model "):
            k = name[len("model "):]
            key.append((ORDER.index("model"), models.index(k) if k in models else len(models), name))
        else:
            key.append((ORDER.index(name) if name in ORDER else len(ORDER), 0, name))
    return tuple(key)


def tree(paths: set[str], models: list[str]) -> list[tuple[str, int, str | None]]:
    """(label, depth, path or None) in display order: a stage below the nearest of its
    ancestors that is listed too, labelled by the names between (its own name, where every
    ancestor is listed; its whole path, where none is). A listed stage with timed children
    gets a "rest" line after them (path "rest:<stage>"; its value is the stage minus them)."""
    rows: list[tuple[str, int, str | None]] = []
    ordered = sorted(paths, key=lambda p: sort_key(p, models))
    for i, path in enumerate(ordered):
        parts = path.split("/")
        depth = next((d for d in range(len(parts) - 1, 0, -1) if "/".join(parts[:d]) in paths), 0)
        rows.append(("/".join(parts[depth:]), depth, path))
        # Close every stage this one is the last descendant of.
        nxt = ordered[i + 1] if i + 1 < len(ordered) else ""
        for d in range(len(parts) - 1, 0, -1):
            parent = "/".join(parts[:d])
            if parent in paths and not nxt.startswith(parent + "/"):
                name = parts[d - 1]
                kind = "model" if name.startswith("model ") else name
                rows.append((REST.get(kind, "rest, untimed"), d, "rest:" + parent))
    return rows


def children(stages: dict[str, dict], parent: str) -> list[str]:
    depth = parent.count("/") + 1
    return [p for p in stages if p.startswith(parent + "/") and p.count("/") == depth]


def value(stages: dict[str, dict], path: str) -> float | None:
    """A stage's seconds; for "rest:<stage>", the stage minus its direct children timed in
    the same kind of thread (a thread's seconds beside the main one overlap its wall time);
    None if the stage did not run."""
    if path.startswith("rest:"):
        parent = path[len("rest:"):]
        if parent not in stages:
            return None
        main = stages[parent]["main_thread"]
        return stages[parent]["seconds"] - sum(stages[c]["seconds"] for c in children(stages, parent)
                                               if stages[c]["main_thread"] == main)
    return stages[path]["seconds"] if path in stages else None


def top_level(stages: dict[str, dict]) -> float:
    """Seconds of the main thread's outermost stages (work beside the build excluded)."""
    return sum(s["seconds"] for p, s in stages.items() if "/" not in p and s["main_thread"])
