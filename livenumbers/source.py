"""What a write-up gives the engine: its results, their keys, its tables, charts and files.

The engine (markup, lock, gate, cache, render, finder, the serve-time aids) knows nothing
of what the numbers mean. A write-up subclasses `Source` and hands it over:

    inputs()              everything the results depend on, as JSON-able data, cheap to
                          read (no model loaded): the results' cache key is its digest
    compute()             the results (a JSON-able dict) and the files computed with them
                          that the site publishes (stored in the cache beside the results)
    numbers(results)      the flat namespace of citable keys -> values (a Mapping); it may
                          also answer margin(key) (how near the decision behind a key came
                          to turning, and how far the value moves if it does), suggest(key)
                          (did-you-mean for keys it does not list) and keys_for(pattern)
    tables                name -> fn(renderer, **args) -> a Markdown table, every number
                          through renderer.cite
    charts                a livenumbers.charts.Charts registry, or None
    functions(renderer)   page functions of the source's own: name -> callable
    route_page            a page whose links' fragments are routes its script reads, not
                          anchors (check_route checks each); None if there is none
    published(...)        site path -> a file to copy (a Path) or its content
    registered_keys(results)  key pattern (fnmatch) -> the registered settings block the
                          keys are read under: a page citing one of a block with
                          amendments must state them (livenumbers/registration.py)
    interval_level(results)   the confidence level `ci()` prints (default 0.95)
    measured_here(timings)    numbers measured where the results were computed (their time,
                          a stage's): cited by measured(), never locked (livenumbers/here.py)
    margin_floor(results)     how near a tie a cited decision (a pick, a count, a verdict)
                          may come before the gate calls it fragile: the results' numerical
                          noise, by the source's measure (default 0: no floor)

Everything has a default but `inputs`, `compute` and `numbers`; the starter
(livenumbers/starter/, what `python -m livenumbers new` writes) is a write-up of a dozen
lines that uses the defaults.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping


class Source:
    """A write-up's results and what its pages can ask of them (see the module docstring)."""

    name = "live numbers"                       # for messages and the serve-time listing
    tables: Mapping[str, Callable[..., str]] = {}
    charts = None                               # a livenumbers.charts.Charts, or None
    route_page: str | None = None
    function_names: tuple[str, ...] = ()        # the names `functions` gives (a built site is searched for them)
    code_dirs: tuple[Path, ...] = ()            # the source's page-side code: pages render again when it changes

    def inputs(self) -> Any:
        raise NotImplementedError

    def compute(self) -> tuple[dict, dict[str, str | bytes]]:
        """(results, files published with them: site path -> content)."""
        raise NotImplementedError

    def numbers(self, results: dict) -> Mapping[str, Any]:
        raise NotImplementedError

    def functions(self, renderer) -> dict[str, Callable[..., Any]]:
        """Page functions beside num, ci, text, table, chart and claim."""
        return {}

    def check_args(self, renderer, what: str, kwargs: dict[str, Any]) -> None:
        """Raise a NumberError if a table's or chart's arguments name nothing the results hold."""

    def check_route(self, renderer, fragment: str) -> None:
        """Raise a NumberError if a link into `route_page` names nothing its data holds."""

    def registered_keys(self, results: dict) -> dict[str, str]:
        """Citable key patterns ("l6.cal.*", fnmatch) -> the registered block they are read under."""
        return {}

    def interval_level(self, results: dict) -> float:
        """The confidence level of the intervals `ci()` prints ("95% CI", "IC à 95 %")."""
        return 0.95

    def measured_here(self, timings: dict) -> dict[str, float]:
        """Numbers measured where the results were computed, for `measured(key, fmt)`: from
        `timings` ({"seconds", "stages": {stage path: seconds}, "machine"}: livenumbers/here.py)."""
        return {"results.seconds": timings["seconds"]}

    def margin_floor(self, results: dict) -> float:
        """The margin a published decision must clear: a cited pick whose margin (the
        numbers' `margin(key)`) is below it fails the gate, as another machine's rounding
        could turn it."""
        return 0.0

    def published(self, results: dict, results_entry: Path, files_entry: Path, cache_dir: Path,
                  lock: Path | None) -> dict[str, Path | str]:
        """Site path -> a file to copy (a Path) or its content: by default the results and
        the lock as downloads, and the files `compute` returned."""
        from .cache import PAYLOAD

        files: dict[str, Path | str] = {"downloads/results.json": results_entry / PAYLOAD}
        if lock is not None and lock.is_file():
            files["downloads/numbers.lock.json"] = lock
        files.update(listed(files_entry))
        return files


def listed(folder: Path, under: str = "") -> dict[str, Path]:
    """A cache entry's files (or those under `under`) as site path -> file."""
    from .cache import MANIFEST

    root = folder / under if under else folder
    return {p.relative_to(folder).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and p != folder / MANIFEST}
