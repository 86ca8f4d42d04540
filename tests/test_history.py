"""The lock's history (livenumbers/history.py), its pages (livenumbers/updates.py), its backfill
from git (livenumbers/backfill.py) and the citation file that follows it (livenumbers/citation.py),
on hand-made locks: what counts as a change readers see, the reason it needs, how a page and the
site-wide listing show it, and a history written from a repository's past."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from livenumbers import backfill, citation, history, i18n, lock, updates
from livenumbers.history import REASON_LIMIT, Change, Entry, HistoryError
from livenumbers.lock import Locked

SHARE = "fruit.apple.share"


def locked(value: float, en: str, fr: str | None = None, fmt: str = "pct:1") -> Locked:
    printed = {f"en {fmt}": en} | ({f"fr {fmt}": fr} if fr else {})
    return Locked(value, 0.0005, printed=printed)


OLD = {SHARE: locked(0.6, "60.0%", "60,0\u202f%"), "total": locked(20, "20", "20", "int")}


def record(new: dict, reason=None, old=OLD, **kw) -> history.Recorded:
    return history.record((), old, new, {SHARE: {"index.md", "index.fr.md"}}, reason, "en", date="2026-12-06", **kw)


# -- what accept records ---------------------------------------------------------------------------

def test_a_moved_printed_text_needs_a_reason_and_is_recorded_with_it():
    new = OLD | {SHARE: locked(0.619, "61.9%", "61,9\u202f%")}
    refused = record(new)
    assert refused.history == () and refused.problems == (
        "1 number(s) print another text, 0 no longer cited, 0 cited for the first time",
        "no reason in the site's language (en)")
    done = record(new, {"en": "The apple was miscounted."})
    (entry,) = done.history
    assert entry == done.entry and entry.date == "2026-12-06" and entry.reason == {"en": "The apple was miscounted."}
    change = entry.changed[SHARE]
    assert change.said("en") == ["60.0%"] and change.says("en") == ["61.9%"] and change.says("fr") == ["61,9\u202f%"]
    assert change.pages == ("index.fr.md", "index.md") and set(entry.changed) == {SHARE}


def test_a_move_within_noise_that_prints_the_same_text_is_no_erratum():
    new = OLD | {SHARE: locked(0.60004, "60.0%", "60,0\u202f%")}
    assert record(new) == history.Recorded((), note="no published text changed: no entry in the lock's history")


def test_a_number_added_or_removed_needs_a_reason_too():
    added = record(OLD | {"fruit.fig.share": locked(0.1, "10.0%")})
    removed = record({SHARE: OLD[SHARE]})
    assert "0 number(s) print another text, 0 no longer cited, 1 cited for the first time" in added.problems
    assert "0 number(s) print another text, 1 no longer cited, 0 cited for the first time" in removed.problems
    entry = record({SHARE: OLD[SHARE]}, {"en": "The total is no longer cited."}).entry
    assert entry.removed == {"total": ()} and entry.changed == {} and entry.added == 0


def test_another_format_counts_only_where_a_text_it_printed_is_printed_no_more():
    more = OLD | {SHARE: Locked(0.6, 0.0005, printed=OLD[SHARE].printed | {"en pct:0": "60%"})}
    fewer_digits = OLD | {SHARE: locked(0.6, "60%", "60\u202f%", fmt="pct:0")}
    assert record(more).entry is None and not record(more).problems
    assert record(fewer_digits).problems and record(fewer_digits, {"en": "Rounded."}).entry.changed[SHARE].says("en") == ["60%"]


def test_french_typography_alone_changes_the_french_edition_only():
    new = OLD | {SHARE: locked(0.6, "60.0%", "60,0 %")}
    entry = record(new, {"en": "French spacing."}).entry
    assert entry.moved("fr") == {SHARE: entry.changed[SHARE]} and entry.moved("en") == {}
    assert history.latest(record(new, {"en": "x"}).history) == {"fr": {SHARE: 1}}


def test_the_first_lock_and_a_local_accept_record_nothing():
    new = OLD | {SHARE: locked(0.619, "61.9%")}
    assert record(new, old={}).history == () and not record(new, old={}).problems
    local = record(new, local=True)
    assert local.history == () and not local.problems and "--local" in local.note


@pytest.mark.parametrize("reason, problem", [
    ({"en": "x" * (REASON_LIMIT + 1)}, f"the en reason has {REASON_LIMIT + 1} characters, more than {REASON_LIMIT}"),
    ({"en": "Two\nlines."}, "the en reason spans lines"),
    ({"en": "   "}, "no reason in the site's language (en)"),
    ({"fr": "Seulement en français."}, "no reason in the site's language (en)"),
    ({"en": "Fine.", "fr": ""}, "the fr reason is empty"),
], ids=["too long", "two lines", "blank", "no default language", "empty translation"])
def test_a_reason_is_one_sentence_for_readers_in_the_sites_language(reason, problem):
    new = OLD | {SHARE: locked(0.619, "61.9%")}
    assert any(p.startswith(problem) for p in record(new, reason).problems)


def test_a_removed_keys_pages_come_from_the_last_entry_that_named_them():
    first = record(OLD | {SHARE: locked(0.619, "61.9%")}, {"en": "Moved."}).history
    gone = history.record(first, OLD | {SHARE: locked(0.619, "61.9%")}, {"total": OLD["total"]}, {}, {"en": "Gone."},
                          "en", date="2026-12-07")
    assert gone.entry.removed == {SHARE: ("index.fr.md", "index.md")}


# -- the lock keeps it -----------------------------------------------------------------------------

def test_the_history_round_trips_in_the_lock(tmp_path):
    entries = record(OLD | {SHARE: locked(0.619, "61.9%", "61,9\u202f%")}, {"en": "Moved.", "fr": "Déplacé."}).history
    path = tmp_path / "numbers.lock.json"
    lock.write(path, OLD, {}, None, entries)
    assert lock.read(path).history == entries and list(json.loads(path.read_text()))[0] == "history"
    lock.write(path, OLD, {})
    assert "history" not in path.read_text() and lock.read(path).history == ()


@pytest.mark.parametrize("entry, message", [
    ("x", "history entry 1: expected an object"),
    ({"date": "yesterday", "reason": {"en": "x"}}, "history entry 1: bad date 'yesterday'"),
    ({"date": "2026-12-06", "reason": "x"}, "'reason' must map a language to its text"),
    ({"date": "2026-12-06", "reason": {"en": "x"}, "changed": {"k": {"before": {"en int": 1}}}}, "key 'k' needs"),
    ({"date": "2026-12-06", "reason": {"en": "x"}, "added": -1}, "'added' must be a count"),
], ids=["not an object", "bad date", "reason a string", "a text not a string", "negative count"])
def test_a_history_that_cannot_be_trusted_names_the_lock_and_the_entry(tmp_path, entry, message):
    path = tmp_path / "numbers.lock.json"
    path.write_text(json.dumps({"numbers": {}, "history": [entry]}), encoding="utf-8")
    with pytest.raises(HistoryError, match=rf"^{path}: .*{message}"):
        lock.read(path)


# -- on the pages ----------------------------------------------------------------------------------

ENTRIES = (Entry("2026-12-04", {"en": "The registered truth is restored."},
                 {SHARE: Change({"en pct:1": "60.0%", "fr pct:1": "60,0\u202f%"}, {"en pct:1": "61.9%", "fr pct:1": "61,9\u202f%"},
                                ("index.md", "index.fr.md")),
                  "fruit.best": Change({"en text": "pear", "fr text": "pear"}, {"en text": "apple", "fr text": "apple"})},
                 {"fruit.fig.share": ()}, 3, "8c0a523"),)
LANGUAGES = i18n.Languages(("en", "fr"))
CATALOGUE = i18n.Catalogue.read(None, LANGUAGES)


def edition(page: str) -> updates.Edition:
    return updates.Edition.of(page, LANGUAGES, CATALOGUE)


def test_a_mark_links_its_number_to_its_entry_except_inside_a_tag_and_after_a_link():
    mark = updates.marker(1)
    text = (f"Apple: 61.9%{mark}. [Apple 61.9%{mark} of all](other.md#x) "
            f'<div aria-label="61.9%{mark}">figure 61.9%{mark}</div> [layer 4{mark}, head\n9{mark}](row.md) [a] 2 < 3{mark}')
    out = updates.place_marks(text, ENTRIES, edition("index.md"))
    link = ('<sup class="number-update"><a href="#update-1" title="Changed on 2026-12-04: see Updates" '
            'aria-label="Changed on 2026-12-04: see Updates">†</a></sup>')
    assert out == (f"Apple: 61.9%{link}. [Apple 61.9% of all](other.md#x){link} "
                   f'<div aria-label="61.9%">figure 61.9%{link}</div> [layer 4, head\n9](row.md){link}{link} [a] 2 < 3{link}')
    assert 'title="Modifié le 4 décembre 2026\u00a0: voir les mises à jour"' in updates.place_marks(
        f"61,9 %{mark}", ENTRIES, edition("index.fr.md"))


def test_a_pages_updates_list_what_its_numbers_said_and_say_and_why():
    section = updates.section({SHARE, "total"}, updates.moved_in(ENTRIES, "en"), edition("sub/index.md"), "../updates.md")
    assert section.splitlines()[:2] == ["## Updates", ""]
    assert ('<span id="update-1"></span>**2026&#45;12&#45;04.** The registered truth is restored&#46; '
            "[The whole update](../updates.md#update-1).") in section
    assert "| `fruit.apple.share` | <del>60&#46;0%</del> | 61&#46;9% |" in section and "fruit.best" not in section
    assert updates.section({"total"}, updates.moved_in(ENTRIES, "en"), edition("index.md"), None) == ""


def test_a_french_page_frames_an_english_reason_and_translates_its_own_words():
    section = updates.section({SHARE, "fruit.best"}, updates.moved_in(ENTRIES, "fr"), edition("index.fr.md"), "updates.md")
    assert section.startswith("## Mises à jour\n")
    assert '**4 décembre 2026.** <span lang="en">The registered truth is restored&#46;</span>' in section
    assert "| `fruit.apple.share` | <del>60,0\u202f%</del> | 61,9\u202f% |" in section
    assert '| `fruit.best` | <del><span lang="en">pear</span></del> | <span lang="en">apple</span> |' in section
    french = (Entry("2026-12-04", {"en": "Restored.", "fr": "Rétablie : la vérité du mot"}, ENTRIES[0].changed),)
    assert "**4 décembre 2026.** Rétablie\u00a0&#58; la vérité du mot&#46;" in updates.section(
        {SHARE}, updates.moved_in(french, "fr"), edition("index.fr.md"), None)   # French typography, as the catalogue's


def test_the_site_wide_listing_gives_every_entry_newest_first():
    later = Entry("2026-12-05", {"en": "French spacing."},
                  {"total": Change({"en int": "1000", "fr int": "1000"}, {"en int": "1000", "fr int": "1\u202f000"})})
    text = updates.listing(ENTRIES + (later,), edition("updates.md"), LANGUAGES, removed_shown=1)
    assert text.index("### 2026&#45;12&#45;05") < text.index("### 2026&#45;12&#45;04")
    assert "Numbers printed otherwise in French: 1. Commit `8c0a523`." not in text
    assert "Numbers printed otherwise in French: 1." in text
    assert ("Numbers printed otherwise: 2. Numbers no longer cited: 1. Numbers cited for the first time: 3. "
            "Commit `8c0a523`.") in text
    assert "| `fruit.apple.share` | <del>60&#46;0%</del> | 61&#46;9% | `index.md` |" in text
    assert "No longer cited: `fruit.fig.share`." in text
    assert updates.listing((), edition("updates.fr.md"), LANGUAGES) == "Aucun nombre publié n'a encore changé."


# -- the citation names it -------------------------------------------------------------------------

def test_build_info_says_as_of_when_in_the_pages_language(tmp_path):
    from livenumbers.buildinfo import BuildInfo, placeholder

    info = BuildInfo(tmp_path, tmp_path / "numbers.lock.json", "2026-12-04")
    assert info.in_language(None)["updated"] == "2026-12-04" and info.in_language("fr")["updated"] == "4 décembre 2026"
    assert info.fill(f"as of {placeholder('updated')}, à jour au {placeholder('updated', 'fr')}") == \
        "as of 2026-12-04, à jour au 4 décembre 2026"
    assert BuildInfo(tmp_path, tmp_path / "numbers.lock.json").values["updated"] == "unknown"   # no history



def test_citation_cff_takes_the_date_of_the_last_update(tmp_path):
    cff = tmp_path / "CITATION.cff"
    cff.write_text('cff-version: 1.2.0\ndate-released: "2026-12-03"\npreferred-citation:\n  date-released: 2026-12-01\n',
                   encoding="utf-8")
    assert citation.follow(tmp_path, "2026-12-06") == "CITATION.cff: date-released 2026-12-06 (the lock's last update)"
    assert cff.read_text() == 'cff-version: 1.2.0\ndate-released: "2026-12-06"\npreferred-citation:\n  date-released: "2026-12-06"\n'
    assert citation.follow(tmp_path, "2026-12-06") is None and citation.follow(tmp_path / "none", "2026-12-06") is None


# -- backfilled from git ---------------------------------------------------------------------------

def git(repo: Path, *args: str, day: int = 1) -> str:
    when = f"2026-12-0{day}T12:00:00"
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True,
                          env=os.environ | {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repo: Path, numbers: dict, message: str, day: int, hist=()) -> str:
    lock.write(repo / "docs" / "numbers.lock.json", numbers, {}, None, hist)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, day=day)
    return git(repo, "rev-parse", "--short=7", "HEAD")


@pytest.fixture
def repo(tmp_path) -> SimpleNamespace:
    """A write-up's past: a first lock that records no printed texts (version 1), a
    change its later formats print, a change within noise, and a version that records them."""
    root = tmp_path / "writeup"
    (root / "docs").mkdir(parents=True)
    git(root, "init", "-q")
    first = commit(root, {SHARE: Locked(0.6, 0.0005), "total": Locked(20, 0.0)}, "First version", 1)
    moved = commit(root, {SHARE: Locked(0.625, 0.0005), "total": Locked(21, 0.0)}, "Data fix", 2)
    noise = commit(root, {SHARE: Locked(0.62504, 0.0005), "total": Locked(21, 0.0)}, "Provenance only", 3)
    recorded = commit(root, {SHARE: locked(0.62504, "62.5%", "62,5\u202f%"), "total": locked(21, "21", "21", "int"),
                             "fig": locked(0.1, "10.0%")}, "Printed texts recorded; the fig cited", 4)
    return SimpleNamespace(root=root, first=first, moved=moved, noise=noise, recorded=recorded,
                           settings=SimpleNamespace(lock=root / "docs" / "numbers.lock.json",
                                                    docs_dir=root / "docs", languages=LANGUAGES))


def reasons(repo, **by_commit) -> Path:
    path = repo.root / "reasons.yml"
    path.write_text("".join(f'"{c}": {{en: "{t}"}}\n' for c, t in by_commit.items()), encoding="utf-8")
    return path


def test_backfill_writes_an_entry_per_change_readers_saw_with_its_reason(repo):
    out = backfill.run(repo.settings, reasons(repo, **{repo.moved: "The data was fixed.", repo.recorded: "The fig is new."}))
    assert "2 entries backfilled from 4 versions in git" in out
    moved, fig = lock.read(repo.settings.lock).history
    assert (moved.commit, moved.reason, moved.reformatted) == (repo.moved, {"en": "The data was fixed."}, True)
    # The first version records no texts: printed as the nearest later version prints the key.
    assert moved.changed[SHARE].said("en") == ["60.0%"] and moved.changed[SHARE].says("fr") == ["62,5\u202f%"]
    assert moved.changed["total"].said("fr") == ["20"] and moved.date == "2026-12-02"
    assert (fig.commit, fig.added, fig.changed, fig.reformatted) == (repo.recorded, 1, {}, True)


def test_backfill_names_each_commit_still_without_a_reason_and_writes_nothing(repo):
    before = repo.settings.lock.read_bytes()
    with pytest.raises(backfill.BackfillError) as err:
        backfill.run(repo.settings, reasons(repo, **{repo.moved: "x" * (REASON_LIMIT + 1), "abcdef1": "Stray."}))
    text = str(err.value)
    assert f"  {repo.moved} (2026-12-02): 2 number(s) print another text" in text and "Data fix" in text
    assert f"  {repo.recorded} (2026-12-04): 0 number(s) print another text, 0 no longer cited, 1 cited" in text
    assert "  abcdef1: a reason for no commit of the published line that changed the lock" in text
    assert repo.noise not in text and repo.settings.lock.read_bytes() == before


def test_backfill_again_keeps_what_accept_recorded_and_skips_its_commit(repo):
    path = reasons(repo, **{repo.moved: "The data was fixed.", repo.recorded: "The fig is new."})
    backfill.run(repo.settings, path)
    current = lock.read(repo.settings.lock)
    own = history.record(current.history, current.numbers, current.numbers | {"total": locked(22, "22", "22", "int")},
                         {}, {"en": "Accepted with a reason."}, "en", date="2026-12-09")
    commit(repo.root, current.numbers | {"total": locked(22, "22", "22", "int")}, "Accept", 9, own.history)
    backfill.run(repo.settings, path)
    again = lock.read(repo.settings.lock).history
    assert [e.reason["en"] for e in again] == ["The data was fixed.", "The fig is new.", "Accepted with a reason."]


def test_backfill_wants_the_lock_committed_as_it_is(repo):
    lock.write(repo.settings.lock, {SHARE: locked(0.7, "70.0%")}, {})
    with pytest.raises(backfill.BackfillError, match="not the last commit's; commit the lock as it is"):
        backfill.run(repo.settings, reasons(repo))
