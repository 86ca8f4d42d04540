"""Executing a notebook page once per input, through the same cache as the numbers.

The notebook's markdown cells are replaced by their rendered text (live numbers in),
its code cells run in a fresh kernel from the project root (so `import model` reads
the same cached results), and the executed copy is stored under the cache folder,
keyed by the notebook's bytes and the results key. A warm build reuses it untouched;
mkdocs-jupyter then converts the executed copy without running anything.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import write_atomic


class NotebookError(RuntimeError):
    pass


def executed_path(nb_path: Path, relpath: str, rendered_cells: dict[int, str], results_key: str,
                  cache_dir: Path) -> Path:
    """Where the executed copy is (or will be): `cache_dir/notebooks/<key>/<relpath>`."""
    key = hashlib.sha256(
        nb_path.read_bytes() + results_key.encode() + json.dumps(rendered_cells, sort_keys=True).encode()
    ).hexdigest()[:24]
    return cache_dir / "notebooks" / key / relpath


def executed_copy(nb_path: Path, relpath: str, rendered_cells: dict[int, str], results_key: str,
                  cache_dir: Path, root: Path) -> Path:
    """Path of the executed notebook, inside `cache_dir/notebooks/<key>/<relpath>`."""
    source = nb_path.read_bytes()
    out = executed_path(nb_path, relpath, rendered_cells, results_key, cache_dir)
    if out.is_file():
        return out
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.reads(source.decode("utf-8"), as_version=4)
    for index, text in rendered_cells.items():
        nb.cells[index].source = text
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(root)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        raise NotebookError(f"{relpath}: a cell failed while executing the notebook:\n{exc}") from exc
    write_atomic(out, nbformat.writes(nb))
    return out
