"""tests/MUTATIONS.md stays applicable: every deliberate bug names a file that exists and a
line written there exactly once (four rows had gone stale as the code moved: the mutation
script would have refused them only when someone ran `make mutations`)."""
from __future__ import annotations

from pathlib import Path

import mutate

ROOT = Path(__file__).resolve().parent.parent


def test_every_mutation_names_a_line_that_is_in_its_file_once():
    mutations = mutate.load()
    assert len(mutations) >= 18
    stale = [f"{m.name}: {m.file}: {m.old!r}" for m in mutations
             if not (ROOT / m.file).is_file() or (ROOT / m.file).read_text(encoding="utf-8").count(m.old) != 1]
    assert not stale, "\n".join(stale)
