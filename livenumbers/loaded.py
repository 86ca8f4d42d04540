"""A project's own Python code as this process loaded it, against the code on disk now.

`mkdocs serve` keeps one process across rebuilds, and Python imports a module once: after
an edit of a write-up's source, the process would go on running the old code while the
files (and any code digest a source's `inputs()` reads off them) are the new ones, and a
result computed by the old code would be cached under the new code's key. So:

- the engine makes the source again on every build (`config.load_source`); if a module of
  the project's changed on disk since it was loaded, the project's modules are dropped and
  imported afresh first (`LoadedCode.forget`);
- before computing results, the gate asks whether the code loaded is still the code on
  disk; if not (an edit during a build), the results are computed in a fresh process
  (livenumbers/gate.py), which loads the code on disk;
- a page's cache key holds the digest of the code as loaded (`digest`), never the disk's;
  it covers every file of the packages the loaded modules belong to (a file not imported yet
  as on disk, which is what its import would load), so it does not depend on when a module
  is imported: a build that imports one while rendering has the digest of the next build.

A project's modules are those whose files lie under its folder (mkdocs.yml's), but the
engine's own and any installed package's (a virtual environment inside the project).
"""
from __future__ import annotations

import hashlib
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.live_numbers.loaded")

ENGINE = Path(__file__).resolve().parent
_INSTALLED = ("site-packages", "dist-packages")


def installed(path: str | Path) -> bool:
    """Whether `path` lies in an installed package's folder (a virtual environment's)."""
    return any(part in _INSTALLED for part in Path(path).parts)


class LoadedCode:
    """The project's modules loaded in this process: file -> (stat, digest) when loaded."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.files: dict[Path, tuple[tuple[int, int], str]] = {}
        self._seen: dict[str, tuple[int, Path | None]] = {}   # module name -> (id of the module, its project file)
        self._prefixes = (str(root), str(self.root))   # as the import path spells the folder, and resolved
        self._on_disk: dict[Path, tuple[tuple[int, int], str]] = {}   # a file not imported: its state, by stat

    def _modules(self) -> dict[str, Path]:
        """Module name -> its file, for the project's modules in sys.modules. Each module is
        looked at once (a process holds thousands: resolving each path every build would
        cost a third of a second), and again only if it is replaced."""
        found = {}
        for name, module in list(sys.modules.items()):
            seen = self._seen.get(name)
            if seen is None or seen[0] != id(module):
                seen = self._seen[name] = (id(module), self._project_file(module))
            if seen[1] is not None:
                found[name] = seen[1]
        return found

    def _project_file(self, module) -> Path | None:
        """The module's file if it is the project's own code, else None."""
        file = getattr(module, "__file__", None)
        if (not isinstance(file, str) or not file.endswith(".py") or not os.path.isabs(file)   # made in memory
                or not file.startswith(self._prefixes) or any(part in file for part in _INSTALLED)):
            return None
        path = Path(file).resolve()
        if path.is_file() and path.is_relative_to(self.root) and not path.is_relative_to(ENGINE):
            return path
        return None

    def note(self) -> dict[str, Path]:
        """Record the project's modules imported since the last note, as they are on disk
        (they were read from it a moment ago); returns every loaded module's file, by name."""
        modules = self._modules()
        for path in modules.values():
            if path not in self.files:
                self.files[path] = _state(path)
        return modules

    def changed(self) -> list[Path]:
        """The project's loaded files whose code on disk is no longer the code loaded."""
        self.note()
        out = []
        for path, (stat, digest) in self.files.items():
            try:
                now = _stat(path)
            except FileNotFoundError:
                out.append(path)
                continue
            if now != stat and _state(path)[1] != digest:
                out.append(path)
        return sorted(out)

    def forget(self) -> None:
        """Drop the project's modules, so the next import loads the code on disk."""
        for name in self._modules():
            del sys.modules[name]
            del self._seen[name]
        self.files.clear()

    def digest(self) -> str:
        """A digest of the project's code as this process runs it (file names and contents):
        every Python file of the packages its loaded modules belong to, as loaded, or as on
        disk for a file not imported yet. Not only the modules loaded so far: a module
        imported while a build renders would otherwise change the digest of the next build,
        and `mkdocs serve`'s first save would render every page again."""
        modules = self.note()
        h = hashlib.sha256()
        for path in sorted(self._packages_files(modules)):
            loaded = self.files.get(path)
            try:
                digest = loaded[1] if loaded is not None else self._disk_state(path)[1]
            except FileNotFoundError:   # deleted since the folder was listed
                continue
            h.update(f"{path.relative_to(self.root).as_posix()}\0{digest}\0".encode())
        return h.hexdigest()

    def _packages_files(self, modules: dict[str, Path]) -> set[Path]:
        """The project's Python files in the top-level packages (or modules) of its loaded `modules`."""
        out = set(self.files)
        for top in {name.split(".")[0] for name in modules}:
            for folder in getattr(sys.modules.get(top), "__path__", ()):   # a package: every file under it
                folder = Path(folder).resolve()
                if folder.is_relative_to(self.root) and not folder.is_relative_to(ENGINE):
                    out.update(p for p in folder.rglob("*.py") if not installed(p))
        return out

    def _disk_state(self, path: Path) -> tuple[tuple[int, int], str]:
        """A file's state on disk, read again only when its size or time changed."""
        stat = _stat(path)
        known = self._on_disk.get(path)
        if known is None or known[0] != stat:
            known = self._on_disk[path] = _state(path)
        return known


def claim(root: Path, module: str) -> None:
    """Make `import module` load the project's own file for it: a module of that name loaded
    from another folder (another project's source, in the same process) is dropped first."""
    top = module.split(".")[0]
    mine = {(Path(root) / f"{top}.py").resolve(), (Path(root) / top / "__init__.py").resolve()}
    held = getattr(sys.modules.get(top), "__file__", None)
    if held and Path(held).resolve() not in mine and any(p.is_file() for p in mine):
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[name]


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _state(path: Path) -> tuple[tuple[int, int], str]:
    return _stat(path), hashlib.sha256(path.read_bytes()).hexdigest()


# One per project folder: the process's modules are one table (sys.modules), whichever
# plugin or command asks.
_PROJECTS: dict[Path, LoadedCode] = {}


def of(root: Path) -> LoadedCode:
    """The loaded code of the project in folder `root`."""
    folder = Path(root).resolve()
    if folder not in _PROJECTS:
        _PROJECTS[folder] = LoadedCode(Path(os.path.abspath(root)))
    return _PROJECTS[folder]
