"""The study's updates and corrections (issue 48): its lock's history, backfilled from git with
the reasons of docs/numbers.reasons.yml, and how the built site shows it in both editions."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import mkdocs_build, output, use_small_corpus
from livenumbers import accepting, backfill, cache, gate, history, lock
from model.site.source import study_settings
from test_french_edition import english_in

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "docs" / "numbers.lock.json"
REASONS = ROOT / "docs" / "numbers.reasons.yml"


@pytest.fixture(scope="module")
def entries() -> tuple[history.Entry, ...]:
    return lock.read(LOCK).history


def by_commit(entries, commit: str) -> history.Entry:
    (entry,) = [e for e in entries if e.commit == commit]
    return entry


def test_the_history_is_what_backfill_writes_from_git_and_the_reasons():
    """Rerun `make backfill` after a commit that changed the lock without accept recording it
    (this fails until then, naming nothing: compare `git log --first-parent -- docs/numbers.lock.json`)."""
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("needs the repository's whole git history")
    versions = backfill.read_versions(ROOT, "docs/numbers.lock.json")
    written, missing = backfill.backfilled(versions, backfill.read_reasons(REASONS), "en", ROOT, "docs/numbers.lock.json")
    assert not missing, "\n".join(missing)
    assert tuple(e for e in lock.read(LOCK).history if e.commit) == written, "run `make backfill` and commit the lock"


def test_the_backfill_lists_the_restoration_of_part_9s_registered_truth(entries):
    restored, first = by_commit(entries, "8c0a523"), by_commit(entries, "56a66f3")
    assert "registered word truth" in restored.reason["en"] and "published under the layer truth" in restored.reason["en"]
    assert "vérité de couche" in restored.reason["fr"] and not restored.reformatted
    assert len(restored.moved("en")) >= 120 and "l6.cal.confirmation.word.alpha.n_badged" in restored.changed
    assert "layer truth" in first.reason["en"] and first.added > 0 and first.changed == {}
    assert entries[0].commit == "cffe87d" and entries[0].date == "2026-11-29"   # after the first version, 50a94c4


def test_every_published_reason_is_short_and_the_french_ones_pass_the_english_check(entries):
    reasons = yaml.safe_load(REASONS.read_text(encoding="utf-8"))
    assert {e.commit for e in entries if e.commit} == set(reasons)
    for entry in entries:
        assert set(entry.reason) == {"en", "fr"}, entry.commit
        assert all(len(text) <= history.REASON_LIMIT and not re.search(r"(?<![A-Za-z])\d{2,}", text) for text in entry.reason.values()), \
            f"{entry.commit}: a reason is one sentence, at most {history.REASON_LIMIT} characters, no number typed"
        assert english_in([entry.reason["fr"]], []) == [], entry.commit


@pytest.mark.measured
def test_the_built_site_shows_the_updates_in_both_editions(built_site, entries):
    for prefix, heading, restored in (("", '<h2 id="updates">Updates', "registered word truth"),
                                      ("fr/", '<h2 id="mises-a-jour">Mises à jour', "vérité du mot préenregistrée")):
        listing = (built_site / prefix / "updates" / "index.html").read_text(encoding="utf-8")
        assert listing.count('<span id="update-') == len(entries) and restored in listing
        assert listing.index(f'id="update-{len(entries)}"') < listing.index('id="update-1"')   # newest first
        page = (built_site / prefix / "articles" / "calibration" / "index.html").read_text(encoding="utf-8")
        updates = page[page.index(heading):]
        assert restored in updates and "<code>l6.cal.confirmation.word.alpha.n_badged</code>" in updates
        assert re.search(r'<sup class="number-update"><a href="#update-\d+"', page)
        version = page[page.index('<small class="lock-version">'):]
        assert re.search(r"sha256 <code>[0-9a-f]{64}</code>, (as of|à jour au) ", version)
        assert '<a href="../../updates/">' in version


@pytest.mark.measured
def test_changing_the_corpus_is_refused_without_a_reason_then_shown_with_it(project, monkeypatch):
    """The small site over the real study (its hooks, its source): a smaller corpus moves its
    numbers; accept refuses to write them without a reason, records one given, and the build
    shows on the page citing them what they said, what they say and why."""
    (project / "docs" / "updates.md").write_text("# Updates\n\n{{ updates() }}\n", encoding="utf-8")   # the site-wide page
    with (project / "mkdocs.yml").open("a", encoding="utf-8") as yml:
        yml.write("  - Updates: updates.md\n")   # the nav is mkdocs.yml's last entry (conftest.tiny_mkdocs_yml)
    use_small_corpus(project, models=[{"name": "minilm-l6", "key": "l6"}, {"name": "minilm-l3", "key": "l3"}])
    monkeypatch.setattr(cache, "_MEMO", {})
    before = (project / "docs" / "numbers.lock.json").read_bytes()
    refused = accepting.accept(study_settings(project))
    assert refused.refused and "no reason in the site's language (en)" in refused.text
    assert (project / "docs" / "numbers.lock.json").read_bytes() == before
    reason = {"en": "The corpus was cut to its first sentences.", "fr": "Le corpus est réduit à ses premières phrases."}
    accepted = accepting.accept(study_settings(project), reason=reason)
    assert not accepted.refused, accepted.text
    (entry,) = lock.read(project / "docs" / "numbers.lock.json").history
    assert "l6.alpha.median_sink" in entry.moved("en") and entry.reason == reason
    build = mkdocs_build(project)
    assert build.returncode == 0, output(build)
    page = (project / "site" / "index.html").read_text(encoding="utf-8")
    updates = page[page.index('<h2 id="updates">Updates'):]
    said, says = entry.changed["l6.alpha.median_sink"].said("en"), entry.changed["l6.alpha.median_sink"].says("en")
    assert "The corpus was cut to its first sentences&#46;" in updates
    assert f"<del>{said[0].replace('.', '&#46;')}</del>" in updates and says[0].replace(".", "&#46;") in updates
    assert re.search(r'<sup class="number-update"><a href="#update-1"', page)
    assert '<a href="updates/#update-1">The whole update</a>' in updates
    listing = (project / "site" / "updates" / "index.html").read_text(encoding="utf-8")
    assert "The corpus was cut to its first sentences&#46;" in listing and "<code>l6.alpha.median_sink</code>" in listing
