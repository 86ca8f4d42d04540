"""Executing a notebook page once per input (model/site/notebook.py): its markdown cells
replaced by their rendered text, its code run in a fresh kernel, the executed copy kept
in the cache."""
from __future__ import annotations

import json
import shutil

import nbclient
import pytest

from conftest import TINY
from livenumbers import notebook

CELLS = {0: "# A notebook\n\nUnder α the median sink share is 26.6%."}


@pytest.fixture
def nb(tmp_path):
    path = tmp_path / "docs" / "notebook.ipynb"
    path.parent.mkdir()
    shutil.copy(TINY / "docs" / "notebook.ipynb", path)
    return path


def test_executed_once_with_its_rendered_cells(nb, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    folder = notebook.execute(nb, "notebook.ipynb", CELLS, "k" * 64, cache_dir, tmp_path)
    assert folder == notebook.executed_dir(nb, CELLS, "k" * 64, cache_dir)
    done = json.loads((folder / "notebook.ipynb").read_text())
    assert "".join(done["cells"][0]["source"]) == CELLS[0]
    assert "".join(done["cells"][1]["outputs"][0]["text"]) == "42\n"
    # Again with the same inputs: the cached copy, no kernel.
    monkeypatch.setattr(nbclient, "NotebookClient", lambda *a, **k: pytest.fail("executed twice"))
    assert notebook.execute(nb, "notebook.ipynb", CELLS, "k" * 64, cache_dir, tmp_path) == folder
    # Other results, another entry.
    assert notebook.executed_dir(nb, CELLS, "j" * 64, cache_dir) != folder


def test_a_failing_cell_names_the_notebook(nb, tmp_path):
    data = json.loads(nb.read_text())
    data["cells"][1]["source"] = ["raise RuntimeError('the cell fails')"]
    nb.write_text(json.dumps(data))
    with pytest.raises(notebook.NotebookError, match=r"^notebooks/x\.ipynb: a cell failed while executing the notebook:"):
        notebook.execute(nb, "notebooks/x.ipynb", CELLS, "k" * 64, tmp_path / "cache", tmp_path)
    assert not list((tmp_path / "cache").rglob("*.ipynb"))      # nothing half-executed is kept
