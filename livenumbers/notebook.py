"""Executing a notebook page once per input, through the same cache as the numbers.

The notebook's markdown cells are replaced by their rendered text (live numbers in),
its code cells run in a fresh kernel from the project root (so the project's own modules read
the same cached results), and the executed copy is a cache entry keyed by the
notebook's bytes, its rendered cells and the results' key. A warm build reuses it
untouched; mkdocs-jupyter then converts the executed copy without running anything.
"""
from __future__ import annotations

from pathlib import Path

from . import cache, timing
from .errors import UserError


class NotebookError(UserError, RuntimeError):
    pass


def _key(nb_path: Path, rendered_cells: dict[int, str], results_key: str) -> str:
    return cache.key("notebook", nb_path.read_text(encoding="utf-8"), rendered_cells, results_key)


def executed_dir(nb_path: Path, rendered_cells: dict[int, str], results_key: str, cache_dir: Path) -> Path:
    """Where `execute` puts (or has put) the folder holding the executed copy."""
    return cache.entry_dir(cache_dir, "notebook", _key(nb_path, rendered_cells, results_key))


@timing.stage("notebook")
def execute(nb_path: Path, relpath: str, rendered_cells: dict[int, str], results_key: str,
            cache_dir: Path, root: Path) -> Path:
    """The folder holding the executed copy of the notebook at `relpath` (executing it
    first unless the cache has it)."""
    key = _key(nb_path, rendered_cells, results_key)
    folder = cache.read(cache_dir, "notebook", key)
    if folder is not None:
        return folder
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.reads(nb_path.read_text(encoding="utf-8"), as_version=4)
    for index, text in rendered_cells.items():
        nb.cells[index].source = text
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(root)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        raise NotebookError(f"{relpath}: a cell failed while executing the notebook:\n{exc}") from exc
    return cache.write(cache_dir, "notebook", key, {relpath: nbformat.writes(nb)})
