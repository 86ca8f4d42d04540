"""The study as the engine's source (livenumbers/source.py): what its results depend on and
how they are measured, their key schema, its tables, charts and page functions, and the
instrument's files.
"""
from __future__ import annotations

import re
from pathlib import Path

from livenumbers import gate, project
from livenumbers.source import Source

from .. import results as results_mod
from .. import study as study_mod
from . import links, numbers, published
from .charts import CHARTS
from .tables import TABLES

STUDY_FILE = "study.yml"   # in docs/, unless the engine's options in mkdocs.yml say otherwise


_SEEN: dict[Path, tuple] = {}   # study file -> (its input files, their stats, the study)


class StudySource(Source):
    """The study `docs/study.yml` describes, measured on its models."""

    name = "the study"
    tables = TABLES
    charts = CHARTS
    route_page = links.INSTRUMENT_PAGE
    function_names = ("instrument", "row_link")
    code_dirs = (Path(__file__).parent,)   # model/site: its tables, charts and key schema

    def __init__(self, study: Path):
        self.study = Path(study)

    @classmethod
    def in_docs(cls, docs_dir: Path, study: str = STUDY_FILE) -> "StudySource":
        return cls(Path(docs_dir) / study)

    def load(self) -> study_mod.Study:
        """The study, parsed again only when its file, its corpus or its flip pairs file
        changed: parsing the YAML is most of a warm build's gate, and `mkdocs serve` asks on
        every save (with a new source each time: it reads mkdocs.yml again)."""
        seen = _SEEN.get(self.study)
        if seen is not None and _stats(seen[0]) == seen[1]:
            return seen[2]
        study = study_mod.load(self.study)
        inputs = list(study.files)
        _SEEN[self.study] = (inputs, _stats(inputs), study)
        return study

    def inputs(self) -> dict:
        """The results' provenance (study, corpus, measurement code, library versions,
        weights); reading it never imports torch."""
        return results_mod.provenance(self.load())

    def compute(self) -> tuple[dict, dict[str, str]]:
        results, views = results_mod.compute(self.study)
        return results, published.view_files(views)

    def numbers(self, results: dict):
        return numbers.flatten(results)

    def functions(self, renderer) -> dict:
        return links.page_functions(renderer)

    def check_args(self, renderer, what: str, kwargs: dict) -> None:
        if "model" in kwargs:
            links.check_model(renderer.results, kwargs["model"], what)

    def check_route(self, renderer, fragment: str) -> None:
        links.check_route(renderer.results, fragment)

    def registered_keys(self, results: dict) -> dict[str, str]:
        """Part 9's verdicts are read under study.yml's registered `calibration` block, the
        replication's under `replication` (livenumbers/registration.py)."""
        return {"*.cal.fit.*": "calibration", "*.cal.fit_layer.*": "calibration", "*.cal.verdict.*": "calibration", "*.cal.verdict_registered.*": "calibration",
                "*.cal.model_verdict.*": "calibration", "*.cal.replicates.*": "replication"}

    def interval_level(self, results: dict) -> float:
        """The study's bootstrap level."""
        return results["bootstrap"]["level"]

    def measured_here(self, timings: dict) -> dict[str, float]:
        """The colophon's times, measured where the results were (livenumbers/here.py): the
        whole measurement, and the forward passes of every model over the corpus (each model's
        `reference` stage, model/activations.py)."""
        stages = timings["stages"]
        forward = sum(s for path, s in stages.items() if re.fullmatch(r"measurement/model [^/]+/reference", path))
        return {"results.seconds": timings["seconds"], "measurement.seconds": stages.get("measurement", timings["seconds"]),
                "forward_passes.seconds": forward}

    def margin_floor(self, results: dict) -> float:
        """study.yml's `picks.margin_floor`, recorded in the results (model/picks.py)."""
        return results["picks"]["margin_floor"]

    def published(self, results, results_entry, files_entry, cache_dir, lock) -> dict:
        return super().published(results, results_entry, files_entry, cache_dir, lock) | published.study_files(results, cache_dir)


def _stats(paths: list[Path]) -> tuple:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def study_settings(root: Path) -> gate.Settings:
    """The engine's settings for this project under `root`, read from its mkdocs.yml as the
    hooks and every command read them (livenumbers/project.py): its docs, its lock, its
    bibliography, its cache and the study as the source."""
    return project.settings_at(Path(root) / "mkdocs.yml")


def from_options(docs_dir: Path, options: dict) -> StudySource:
    """The source as mkdocs.yml's live-numbers options name it (`source:
    model.site.source:from_options`, `options: {study: study.yml}`)."""
    return StudySource.in_docs(docs_dir, options.get("study", STUDY_FILE))
