"""The live site's contract, on a temporary copy of the project: the drift gate, the
injection errors, claims, the cache, and what a prose edit costs."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from model.site import cache, gate, lock

from conftest import mkdocs_build

ARTICLE = "articles/norm-lens.md"


def settings(project: Path) -> gate.Settings:
    return gate.Settings.at(project)


def edit(project: Path, page: str, old: str, new: str) -> None:
    path = project / "docs" / page
    text = path.read_text()
    assert old in text, f"{old!r} not in {page}"
    path.write_text(text.replace(old, new, 1))


def test_the_working_tree_passes_the_gate(project):
    report = gate.run(settings(project))
    assert report.ok, report.message(settings(project).lock)
    assert "l6.alpha.median_sink" in report.cited


def test_a_moved_number_fails_the_build_naming_key_values_and_page(project):
    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    recorded = data["numbers"]["l6.alpha.median_sink"]["value"]
    data["numbers"]["l6.alpha.median_sink"]["value"] = recorded + 0.01
    lock_path.write_text(json.dumps(data))
    (project / "site").mkdir()
    (project / "site" / "previous.html").write_text("the last good site")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "l6.alpha.median_sink" in out
    assert repr(recorded + 0.01) in out and repr(recorded) in out
    assert ARTICLE in out
    # The gate runs before MkDocs cleans site/: a failed build leaves the last good site.
    assert (project / "site" / "previous.html").read_text() == "the last good site"


def test_drift_names_what_changed_in_the_provenance(project):
    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] += 0.01
    data["provenance"]["libraries"]["numpy"] = "1.0.0"
    lock_path.write_text(json.dumps(data))
    report = gate.run(settings(project))
    assert not report.ok
    assert any(c.startswith("libraries.numpy: 1.0.0 ->") for c in report.provenance_changes)
    assert "libraries.numpy" in report.message(lock_path)


def test_unknown_key_fails_with_page_and_line(project):
    edit(project, ARTICLE, "## The problem", '## The problem\n\nOops {{ num("l6.alpha.no_such_thing", "pct:1") }}.')
    line = next(i for i, l in enumerate((project / "docs" / ARTICLE).read_text().splitlines(), 1) if "no_such_thing" in l)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"{ARTICLE}:{line}: unknown number 'l6.alpha.no_such_thing'" in proc.stdout + proc.stderr


@pytest.mark.parametrize("snippet, message", [
    ('{{ num("l6.alpha.median_sink", "percent") }}', "bad format 'percent'"),
    ('{{ num("l6.alpha.median_sink", "pct:1" }}', "template syntax error"),
    ('{{ table("no_such_table", model="l6") }}', "unknown table 'no_such_table'"),
    ('{{ chart("no_such_chart") }}', "unknown chart 'no_such_chart'"),
    ('{{ claim("l6.alpha.median_sink >") }}', "is not a valid expression"),
    ('{{ claim("l6.alpha.nope > 0") }}', "names an unknown number"),
    ('{{ text("l6.alpha.median_sink") }}x{{ num("l6.alpha.worst_word", "pct:1") }}', "is text"),
])
def test_page_errors_name_page_and_line(project, snippet, message):
    edit(project, ARTICLE, "## The result", f"## The result\n\n{snippet}\n")
    line = next(i for i, l in enumerate((project / "docs" / ARTICLE).read_text().splitlines(), 1) if l == snippet)
    with pytest.raises(Exception) as info:
        gate.run(settings(project))
    assert str(info.value).startswith(f"{ARTICLE}:{line}:"), str(info.value)
    assert message in str(info.value)


def test_a_claim_that_stops_holding_fails_the_build(project):
    edit(project, ARTICLE, "## The problem", '## The problem\n\n{{ claim("l6.alpha.median_sink > 0.99") }}')
    report = gate.run(settings(project))
    assert not report.ok
    assert [c.expr for c in report.failed_claims] == ["l6.alpha.median_sink > 0.99"]
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "claim(s) no longer hold" in proc.stdout + proc.stderr
    assert "l6.alpha.median_sink > 0.99" in proc.stdout + proc.stderr


def test_cited_but_unlocked_and_locked_but_uncited_are_errors(project):
    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    del data["numbers"]["l6.alpha.worst_sink"]
    uncited = next(k for k in sorted(gate.numbers.flatten(gate.load_results(settings(project))[0]))
                   if k not in data["numbers"])
    data["numbers"][uncited] = {"value": 1, "tolerance": 0}
    lock_path.write_text(json.dumps(data))
    report = gate.run(settings(project))
    assert report.unlocked == ["l6.alpha.worst_sink"]
    assert report.uncited == [uncited]
    assert not report.ok


def test_accept_rewrites_the_lock_and_prints_the_diff(project):
    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] = 0.5
    lock_path.write_text(json.dumps(data))
    out = subprocess.run([sys.executable, "-m", "model", "accept"], cwd=project, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "~ l6.alpha.median_sink: 0.5 ->" in out.stdout
    assert gate.run(settings(project)).ok
    again = subprocess.run([sys.executable, "-m", "model", "accept"], cwd=project, capture_output=True, text=True)
    assert again.stdout.strip() == "no change"


def test_check_command_fails_on_drift_without_mkdocs(project):
    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    data["numbers"]["l6.alpha.above_50"]["value"] += 1
    lock_path.write_text(json.dumps(data))
    out = subprocess.run([sys.executable, "-m", "model", "check"], cwd=project, capture_output=True, text=True)
    assert out.returncode == 1
    assert "l6.alpha.above_50" in out.stderr


def test_a_corrupt_cache_entry_is_recomputed(project):
    s = settings(project)
    report = gate.run(s)
    path = cache.entry_path(s.cache_dir, "results", report.results_key)
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[: len(path.read_text()) // 2])  # truncated mid-write
    gate._MEMO.clear()
    assert cache.read(s.cache_dir, "results", report.results_key) is None
    results, key = gate.load_results(s)
    assert key == report.results_key
    assert json.loads(path.read_text())["sha256"] == good["sha256"]
    # an entry whose payload was edited no longer matches its digest
    tampered = json.loads(path.read_text())
    tampered["payload"]["models"]["l6"]["summary"]["alpha"]["stats"]["median_sink"] = 0.0
    path.write_text(json.dumps(tampered))
    assert cache.read(s.cache_dir, "results", report.results_key) is None


def test_a_prose_edit_rebuilds_without_torch_altair_or_a_kernel(project):
    mkdocs_build(project, check=True)  # warm the cache copy
    executed = sorted((project / ".cache" / "notebooks").rglob("*.ipynb"))
    stamps = [p.stat().st_mtime_ns for p in executed]
    edit(project, ARTICLE, "Disclosure is honest; it is not a repair.", "Disclosure is honest, but it is no repair.")
    probe = (
        "import sys\n"
        "from mkdocs.commands.build import build\n"
        "from mkdocs.config import load_config\n"
        "build(load_config('mkdocs.yml'))\n"
        "print(sorted(m for m in ('torch', 'altair', 'vl_convert', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True,
                         env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "no repair" in (project / "site" / "articles" / "norm-lens" / "index.html").read_text()
    # the notebook was not executed again: same executed copies, untouched
    assert sorted((project / ".cache" / "notebooks").rglob("*.ipynb")) == executed
    assert [p.stat().st_mtime_ns for p in executed] == stamps


def test_under_serve_a_drift_is_a_banner_not_a_crash(project):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    lock_path = project / "docs" / "numbers.lock.json"
    data = json.loads(lock_path.read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] += 0.01
    lock_path.write_text(json.dumps(data))
    cfg = load_config(str(project / "mkdocs.yml"))
    cfg.plugins.on_startup(command="serve", dirty=False)
    try:
        build(cfg, serve_url="http://127.0.0.1:8000/")
    finally:
        cfg.plugins.on_startup(command="build", dirty=False)
    html = (project / "site" / "articles" / "norm-lens" / "index.html").read_text()
    assert "drift-banner" in html and "l6.alpha.median_sink" in html
    # a page that does not cite the moved number gets no banner
    citing = gate.run(settings(project)).cited["l6.alpha.median_sink"]
    assert "evidence/flip.md" not in citing
    assert "drift-banner" not in (project / "site" / "evidence" / "flip" / "index.html").read_text()


def test_lock_file_errors_name_file_and_key(tmp_path):
    path = tmp_path / "numbers.lock.json"
    path.write_text('{"numbers": {"a": {"value": 1}}}')
    with pytest.raises(lock.LockError, match="number 'a' has no 'tolerance'"):
        lock.read(path)
    path.write_text('{"numbers": {"a": {"value": 1, "tolerance": 0}, "a": {"value": 2, "tolerance": 0}}}')
    with pytest.raises(lock.LockError, match="duplicate key 'a'"):
        lock.read(path)
    path.write_text('{"numbers": ')
    with pytest.raises(lock.LockError, match=r"numbers.lock.json:1: not valid JSON"):
        lock.read(path)


def test_the_articles_numbers_equal_the_clis(project):
    """What `python -m model measure` prints on the corpus is what the pages publish."""
    report = gate.run(settings(project), with_charts=False)
    out = subprocess.run([sys.executable, "-m", "model", "measure", "--sentences", "docs/corpus.txt", "--json"],
                         cwd=project, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    published = report.results["models"]["l6"]
    assert cli["summary"] == published["summary"]
    assert cli["rows"] == published["rows"]
    locked = lock.read(settings(project).lock).numbers
    assert locked["l6.alpha.median_sink"].value == cli["summary"]["alpha"]["stats"]["median_sink"]
