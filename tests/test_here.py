"""Numbers measured here (livenumbers/here.py), on the starter: the time its results took to
compute and the machine, printed and marked, never locked, never failing a build, kept out of
results.json and of every comparison of two builds' text."""
from __future__ import annotations

import json
import re

from livenumbers import cache, gate, here, project
from livenumbers.report import published_text

from test_toy import run
from test_toy import toy  # noqa: F401  (the fixture: the starter, its lock accepted)

MARKED = re.compile(r'<span class="measured-here" data-measured-here="([^"]*)">([^<]*)</span>')


def test_a_number_measured_here_is_printed_marked_with_its_machine_and_never_locked(toy):
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (toy / "site" / "index.html").read_text(encoding="utf-8")
    (seconds, shown), (machine, on) = MARKED.findall(page)
    assert machine == seconds and f"{here.machine()['cores']} cores" in machine    # the machine, named
    assert float(shown) > 0 and "cores" in on
    locked = json.loads((toy / "docs" / "numbers.lock.json").read_text(encoding="utf-8"))
    assert "results.seconds" not in json.dumps(locked)
    assert "seconds" not in (toy / "site" / "downloads" / "results.json").read_text(encoding="utf-8")


def test_another_time_measured_fails_nothing_and_no_comparison_sees_it(toy):
    settings = project.settings_at(toy / "mkdocs.yml")
    first = gate.run(settings)
    key = first.results_key
    timings = here.read(settings.cache_dir, key)
    cache.store_json(settings.cache_dir, here.KIND, key, {**timings, "seconds": timings["seconds"] * 1000 + 7,
                                                          "machine": {**timings["machine"], "cores": 96}})
    second = gate.run(settings)
    assert second.ok and "96 cores" in second.rendered["index.md"] and "96 cores" not in first.rendered["index.md"]
    assert published_text(first) == published_text(second)
    assert run(toy, "mkdocs", "build", "--strict").returncode == 0


def test_results_from_a_cache_that_kept_no_times_say_so(toy):
    settings = project.settings_at(toy / "mkdocs.yml")
    key = gate.results_key(settings)
    cache.entry_dir(settings.cache_dir, here.KIND, key).rename(settings.cache_dir / "timings-gone")
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (toy / "site" / "index.html").read_text(encoding="utf-8")
    assert [shown for _, shown in MARKED.findall(page)] == ["not measured here", "not measured here"]


def test_an_unknown_measured_number_is_a_problem_of_its_page(toy):
    page = toy / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + '\n{{ measured("results.secs", "fixed:1") }}\n', encoding="utf-8")
    check = run(toy, "livenumbers", "check")
    assert check.returncode == 2
    assert "index.md:17: unknown measured number 'results.secs'; did you mean 'results.seconds'?" in check.stderr
