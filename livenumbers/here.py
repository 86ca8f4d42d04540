"""Numbers measured here: what varies by run or machine (how long the results took to
compute, a throughput), printed with the machine that measured it, never locked.

    {{ measured("results.seconds", "fixed:1") }} s, on {{ measured_on() }}
    {% if measured_here %}...{% else %}(a cache that kept no timings){% endif %}

When the results are computed, the engine keeps beside them (cache kind "timings", under the
results' key) the computation's wall time, the seconds of each of its timed stages
(livenumbers/timing.py) and the machine it ran on. The source turns them into citable keys
(`Source.measured_here`: by default `results.seconds`). Such a number is no result: it is not
in results.json nor in the lock, no build fails on it, and its element carries the attribute
`data-measured-here` (the machine), so that a comparison of two builds' text
(`report.published_text`) leaves it out. Results from a cache that kept no timings print
"not measured here".
"""
from __future__ import annotations

import html
import os
import platform
from pathlib import Path
from typing import Any

from . import cache
from . import formats as nums
from . import i18n

KIND = "timings"
NOT_MEASURED = "not measured here"
FUNCTIONS = ("measured", "measured_on")


def machine() -> dict[str, Any]:
    """What a reader needs to weigh a time: the processor, its cores and the system."""
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": cpu or platform.processor() or platform.machine(), "cores": os.cpu_count() or 1,
            "system": platform.system()}


def keep(cache_dir: Path, results_key: str, seconds: float, stages: dict[str, float]) -> None:
    """Keep a computation's times and machine beside its results."""
    cache.store_json(cache_dir, KIND, results_key, {"seconds": seconds, "stages": stages, "machine": machine()})


def read(cache_dir: Path, results_key: str) -> dict | None:
    """The times kept with the results of `results_key`, or None (a cache that kept none)."""
    return cache.load_json(cache_dir, KIND, results_key)


class MeasuredHere:
    """`measured()` and `measured_on()` on a page: a mixin of the page renderer
    (livenumbers/markup.py), given `here` (the source's measured keys) and `timings`."""

    here: dict[str, Any]
    timings: dict | None
    language: str
    languages: i18n.Languages

    def _marked(self, text: str) -> str:
        where = self._machine_text(in_english=True) if self.timings else NOT_MEASURED
        return f'<span class="measured-here" data-measured-here="{html.escape(where, quote=True)}">{text}</span>'

    def _measured(self, key: str, fmt: str) -> str:
        if self.timings is None:
            return self._marked(self.words(NOT_MEASURED))
        if key not in self.here:
            raise nums.NumberError(f"unknown measured number {key!r}" + nums.did_you_mean(key, sorted(self.here))
                                   + f" (measured here: {', '.join(sorted(self.here)) or 'none'})")
        return self._marked(nums.format_value(key, self.here[key], fmt, self.language))

    def _measured_on(self) -> str:
        if self.timings is None:
            return self._marked(self.words(NOT_MEASURED))
        return self._marked(nums.md_text(self._machine_text()))

    def _machine_text(self, in_english: bool = False) -> str:
        m = self.timings["machine"]
        cores = nums.format_value("cores", m["cores"], "int", "en" if in_english else self.language)
        skeleton = f"{i18n.OPEN}{m['cpu']}{i18n.CLOSE}, {i18n.OPEN}{cores}{i18n.CLOSE} cores, {i18n.OPEN}{m['system']}{i18n.CLOSE}"
        return i18n.unmark(skeleton) if in_english else self._translated(skeleton)
