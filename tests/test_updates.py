"""Updates and corrections on a write-up's pages (livenumbers/updates.py), end to end on the toy
(livenumbers/starter/): its data changes, accept refuses to write without a reason for readers,
records one given, and the build shows on the page citing the moved numbers what they said,
what they say and why, marks each of them, and lists the entry on the site-wide page; in a
French edition, in French words, the reason as given. A reader's local accept records nothing."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from livenumbers import lock
from test_i18n import bilingual_toy  # noqa: F401  (a fixture)
from test_toy import run, toy  # noqa: F401  (a fixture)

REASON = "The apple's points were miscounted in the data."


def change_the_data(root: Path) -> None:
    (root / "docs" / "data.json").write_text('{"apple": 13, "pear": 5, "plum": 3}', encoding="utf-8")


def history(root: Path) -> list:
    return json.loads((root / "docs" / "numbers.lock.json").read_text(encoding="utf-8")).get("history", [])


def test_a_moved_number_is_refused_without_a_reason_then_shown_with_it(toy):
    change_the_data(toy)
    before = (toy / "docs" / "numbers.lock.json").read_bytes()
    refused = run(toy, "livenumbers", "accept")
    assert refused.returncode == 1 and (toy / "docs" / "numbers.lock.json").read_bytes() == before
    assert "5 number(s) print another text, 0 no longer cited, 0 cited for the first time" in refused.stdout
    assert 'Accept again with --reason "why, for readers"' in refused.stdout
    accepted = run(toy, "livenumbers", "accept", "--reason", REASON)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "history entry 1 (" in accepted.stdout
    (entry,) = history(toy)
    assert entry["reason"] == {"en": REASON} and entry["changed"]["fruit.apple.share"]["before"]["en pct:0"] == "60%"
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (toy / "site" / "index.html").read_text(encoding="utf-8")
    updates = page[page.index('<h2 id="updates">Updates</h2>'):]
    assert "The apple&#39;s points were miscounted in the data&#46;" in updates
    assert re.search(r"<td><code>fruit\.apple\.share</code></td>\s*<td><del>60%</del>, <del>60&#46;0%</del></td>\s*"
                     r"<td>62%, 61&#46;9%</td>", updates), updates
    assert re.search(r'the apple has 13<sup class="number-update"><a href="#update-1" title="Changed on \d{4}-\d\d-\d\d: '
                     r'see Updates"', page)
    assert '<td>5</td>' in page   # the pear's score did not move: no mark
    assert '<a href="updates/#update-1">The whole update</a>' in updates
    listing = (toy / "site" / "updates" / "index.html").read_text(encoding="utf-8")
    assert "Numbers printed otherwise: 5." in listing and "<td><code>total</code></td>" in listing
    digest = hashlib.sha256((toy / "docs" / "numbers.lock.json").read_bytes()).hexdigest()
    assert (f'<small class="lock-version">Cite this version: numbers lock sha256 <code>{digest}</code>, as of '
            f'{entry["date"]}. <a href="updates/">Updates and corrections</a>.</small>') in page


def test_a_readers_local_accept_records_nothing(toy):
    change_the_data(toy)
    local = run(toy, "livenumbers", "accept", "--local")
    assert local.returncode == 0 and "--local: this machine's lock; nothing is recorded in its history" in local.stdout
    assert history(toy) == [] and lock.read(toy / "docs" / "numbers.lock.json").numbers["total"].value == 21


def test_a_french_edition_shows_the_update_in_french_and_the_english_reason_marked(bilingual_toy):  # noqa: F811
    root = bilingual_toy
    change_the_data(root)
    accepted = run(root, "livenumbers", "accept", "--reason", REASON)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert run(root, "mkdocs", "build", "--strict").returncode == 0
    french = (root / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="mises-a-jour">Mises à jour</h2>' in french
    assert f'<span lang="en">The apple&#39;s points were miscounted in the data&#46;</span>' in french
    assert "<del>60\u202f%</del>" in french and "<th>Disait</th>" in french
    assert 'title="Modifié le ' in french and "Citer cette version\u00a0: verrou des nombres sha256 <code>" in french
    change = (root / "docs" / "data.json")
    change.write_text('{"apple": 14, "pear": 5, "plum": 3}', encoding="utf-8")
    again = run(root, "livenumbers", "accept", "--reason", "Counted once more.", "--reason-in", "fr", "Recompté une fois de plus.")
    assert again.returncode == 0, again.stdout + again.stderr
    assert run(root, "mkdocs", "build", "--strict").returncode == 0
    french = (root / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert "Recompté une fois de plus&#46;" in french and "Counted once more" not in french
    listing = (root / "site" / "fr" / "updates" / "index.html").read_text(encoding="utf-8")
    assert listing.index("Recompté une fois de plus") < listing.index("The apple&#39;s points")   # newest first
