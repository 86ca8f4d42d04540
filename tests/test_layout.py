"""The package's shape: no module of model/ imports, even for type checking only, a
module that imports it back (the types a layer uses live below it)."""
from __future__ import annotations

import ast
from pathlib import Path

MODEL = Path(__file__).resolve().parent.parent / "model"


def module_name(path: Path) -> str:
    parts = path.relative_to(MODEL.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The model.* modules a file imports, anywhere in it (functions and TYPE_CHECKING too)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *filter(None, [node.module])])
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        out |= {t for t in targets if t.split(".")[0] == "model"}
    return out


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in MODEL.rglob("*.py")}
    return {name: {t for t in imports(p) if t in files and t != name} for name, p in files.items()}


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as a path of module names, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(g[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(g):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_the_cycle_finder_finds_a_circle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_imports_are_read_from_relative_and_type_checking_imports():
    g = graph()
    assert "model.corpus" in g["model.stats.rows"]     # a plain relative import, one package up
    assert "model.measure" in g["model.views"]         # under `if TYPE_CHECKING:`


def test_no_import_circle_in_model():
    found = cycle(graph())
    assert found is None, "import circle: " + " -> ".join(found)
