"""Registration (livenumbers/registration.py) on copies of the toy write-up, whose mkdocs.yml
registers the `scoring` block of docs/settings.yml and whose shares are read under it: accept
records the block, a silent edit fails the gate, an amendment passes once accepted and its
pages state it, and a recorded amendment cannot be taken back."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_toy import TOY, settings

from livenumbers import accepting, gate, lock, registration
from livenumbers.markup import PageError

AMENDMENT = ('\namendments:\n  scoring:\n    - {date: 2026-12-01, reason: bruised fruit were scored by mistake, '
             'changes: "bruised: counted -> left out"}\n')
SILENT_EDIT = ("docs/settings.yml: the registered block 'scoring' changed since it was registered (commit unknown, "
               "unknown) and no amendment says why: add one under amendments.scoring with its date and reason")


@pytest.fixture
def toy(tmp_path) -> Path:
    """A copy of the toy write-up, no lock yet."""
    root = tmp_path / "toy"
    shutil.copytree(TOY, root, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    return root


@pytest.fixture
def accepted(toy) -> Path:
    """The toy's copy, its lock accepted (no git: its registration's commit is unknown)."""
    assert not accepting.accept(settings(toy)).refused
    return toy


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def commit_the_toy(root: Path) -> list[str]:
    """The toy's copy as a git checkout of one commit: [its hash, its date]."""
    git(root, "init", "-q")
    git(root, "add", "docs", "mkdocs.yml", "toy_source.py")
    git(root, "commit", "-qm", "the toy, its scoring registered")
    return git(root, "log", "-1", "--format=%H %cs").split()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def amend(root: Path) -> None:
    """A registered line changed, with the amendment that says when and why."""
    edit(root / "docs" / "settings.yml", "bruised: counted", "bruised: left out")
    with open(root / "docs" / "settings.yml", "a", encoding="utf-8") as f:
        f.write(AMENDMENT)


def state_registration(root: Path) -> None:
    with open(root / "docs" / "index.md", "a", encoding="utf-8") as f:
        f.write('\n{{ registration("scoring") }}\n')


def recorded(root: Path) -> registration.Registration:
    return lock.read(root / "docs" / "numbers.lock.json").registrations["scoring"]


def test_accept_records_the_blocks_hash_and_the_commit_that_gave_it_its_content(toy):
    registered = commit_the_toy(toy)
    edit(toy / "docs" / "settings.yml", "# How the toy counts", "# How the toy scores")   # a comment: not the block
    git(toy, "commit", "-qam", "a comment reworded")
    assert not accepting.accept(settings(toy)).refused
    entry = recorded(toy)
    assert [entry.commit, entry.date] == registered
    assert entry.sha256 == registration.digest({"unit": "point", "bruised": "counted"}) and entry.amendments == ()


def test_accept_refuses_a_block_not_committed_as_it_is(toy):
    """Its registration is a commit: accept cannot record one that does not exist yet."""
    commit_the_toy(toy)
    assert not accepting.accept(settings(toy)).refused
    before = settings(toy).lock.read_bytes()
    amend(toy)
    state_registration(toy)
    refused = accepting.accept(settings(toy))
    assert refused.refused and settings(toy).lock.read_bytes() == before
    assert ("docs/settings.yml: the registered block 'scoring' is not committed as it is now: commit it, then accept "
            "(its registration is the commit that gives it this content)") in refused.text


def test_an_edit_with_no_amendment_fails_the_gate_and_accept_writes_nothing(accepted):
    edit(accepted / "docs" / "settings.yml", "bruised: counted", "bruised: left out")
    report = gate.run(settings(accepted))
    assert report.registrations.broken == [SILENT_EDIT] and not report.ok
    assert SILENT_EDIT in report.message(settings(accepted).lock)
    before = settings(accepted).lock.read_bytes()
    refused = accepting.accept(settings(accepted))
    assert refused.refused and SILENT_EDIT in refused.text
    assert settings(accepted).lock.read_bytes() == before


def test_a_dated_amendment_with_its_reason_passes_once_accepted(accepted):
    amend(accepted)
    state_registration(accepted)
    report = gate.run(settings(accepted))
    assert report.registrations.pending == ["docs/settings.yml: the amendment of 'scoring' of 2026-12-01 ('bruised "
                                            "fruit were scored by mistake') is not in the lock yet"]
    assert not report.ok and not report.registrations.broken
    assert ("~ registration 'scoring': commit unknown, unknown; amended 2026-12-01 ('bruised fruit were scored by "
            "mistake')") in accepting.accept(settings(accepted)).text
    assert gate.run(settings(accepted)).ok
    entry = recorded(accepted)
    assert entry.amendments == (registration.Amendment("2026-12-01", "bruised fruit were scored by mistake",
                                                       "bruised: counted -> left out"),)
    assert entry.sha256 == registration.digest({"unit": "point", "bruised": "left out"})


def test_a_page_citing_a_key_read_under_an_amended_block_states_the_amendment(toy):
    commit_the_toy(toy)
    assert not accepting.accept(settings(toy)).refused
    amend(toy)
    git(toy, "commit", "-qam", "scoring amended")
    with pytest.raises(PageError, match=r"index.md:4: index.md cites fruit.apple.share, read under the amended "
                                        r"registration 'scoring', but does not state the amendment: call "
                                        r'registration\("scoring"\) on the page$'):
        gate.run(settings(toy))
    state_registration(toy)
    assert not accepting.accept(settings(toy)).refused
    report = gate.run(settings(toy))
    assert report.ok
    commit, date = git(toy, "log", "-1", "--format=%h %cs").split()
    first, first_date = git(toy, "log", "--reverse", "--format=%h %cs").split()[:2]
    assert first != commit   # the statement leads with the first registration, the present form last
    assert (f"Registered in commit `{first}` ({first_date}). Amended on 2026-12-01: bruised fruit were scored by "
            f"mistake. What changed: `bruised: counted -> left out`. Settings in this form since commit `{commit}` ({date})."
            in report.rendered["index.md"])


def test_a_recorded_amendment_deleted_fails_the_gate(accepted):
    amend(accepted)
    state_registration(accepted)
    assert not accepting.accept(settings(accepted)).refused
    edit(accepted / "docs" / "settings.yml", AMENDMENT, "\n")
    assert gate.run(settings(accepted)).registrations.broken == [
        "docs/settings.yml: amendments.scoring no longer lists the amendment of 2026-12-01 ('bruised fruit were "
        "scored by mistake') as the lock recorded it: amendments are append-only; restore it and add a new one"]


@pytest.mark.parametrize("old, new, message", [
    ("scoring:\n  unit: point", "scorin:\n  unit: point",
     "docs/settings.yml: the registered block 'scoring' is gone (registered in commit unknown, unknown): restore it; "
     "a registered block is amended, never removed"),
    ("bruised: counted", f"bruised: left out\n{AMENDMENT.replace('reason: bruised fruit were scored by mistake, ', '')}",
     "docs/settings.yml: amendments.scoring, amendment 1: no reason (reason: why the registered settings changed)"),
])
def test_a_block_gone_or_an_amendment_with_no_reason_fails_the_gate(accepted, old, new, message):
    edit(accepted / "docs" / "settings.yml", old, new)
    assert gate.run(settings(accepted)).registrations.broken == [message]


def test_an_unknown_block_is_a_problem_of_its_page(accepted):
    edit(accepted / "docs" / "index.md", "# Fruit", '# Fruit\n\n{{ registration("scorng") }}')
    with pytest.raises(PageError, match=r"index.md:3: unknown registered block 'scorng'; did you mean 'scoring'\?"):
        gate.run(settings(accepted))


def test_the_study_s_registered_calibration_cannot_change_without_an_amendment(tmp_path):
    """The real study: docs/study.yml's registered blocks against the committed lock. As
    committed, nothing is broken or pending; the bar `adopt.precision_lo` edited without an
    amendment breaks the gate, naming the file and the block."""
    import shutil

    from livenumbers import config, lock, registration

    from conftest import ROOT

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("*.md", "*.ipynb", "javascripts", "stylesheets"))
    options = config.read(ROOT / "mkdocs.yml")["extra"]["live_numbers"]["registered"]
    declared = registration.declared(options)
    locked = lock.read(ROOT / "docs" / "numbers.lock.json").registrations
    assert set(locked) == {"calibration", "replication", "mean_ablation", "fresh_corpus"}
    found = registration.check(registration.read(docs, declared), locked)
    assert not found.broken and not found.pending
    study = docs / "study.yml"
    study.write_text(study.read_text(encoding="utf-8").replace("adopt: {precision_lo: 0.5,", "adopt: {precision_lo: 0.4,"),
                     encoding="utf-8")
    found = registration.check(registration.read(docs, declared), locked)
    assert found.broken == [f"docs/study.yml: the registered block 'calibration' changed since it was registered "
                            f"({locked['calibration'].since()}) and no amendment says why: add one under "
                            "amendments.calibration with its date and reason"]
