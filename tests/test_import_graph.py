"""The package's layers (docs/architecture.md): every import, at module level or inside a function, points down.

The graph is read from the source with :mod:`ast` (nothing is imported), so an import hidden in a function body
counts as much as one at the top of a file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "saferl"

#: the folders (and top-level modules) of saferl, lowest first; a module imports only from a lower layer or from
#: its own folder; folders of one layer do not import each other
LAYERS = (
    ("foundation",),
    ("core",),
    ("envs",),
    ("algos", "tabular"),
    ("training",),
    ("analysis",),
    ("api",),  # the Python API: what experiments and reproduce targets are written against, as a user's are
    ("experiments",),
    ("reproduce",),
    ("cli",),
    ("__init__",),  # the package's face: hands the API on, on first use
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The saferl modules ``name`` imports (module level or in a function), each with its first line."""
    is_package = path.name == "__init__.py"
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != name and target.startswith("saferl"):
                found.setdefault(target, node.lineno)
    return found


def graph() -> dict[str, dict[str, int]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def part(module: str) -> str:
    """The folder (or top-level module) of saferl that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(edges: dict[str, dict[str, int]]) -> list[str]:
    wrong = []
    for source, targets in edges.items():
        for target, line in targets.items():
            a, b = part(source), part(target)
            if a == b:
                continue
            if RANK[b] >= RANK[a]:
                wrong.append(f"{source}:{line} imports {target} ({b} is not below {a})")
    return wrong


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_folder_of_the_package_has_a_layer():
    assert {part(name) for name in modules()} <= set(RANK), {part(name) for name in modules()} - set(RANK)


def test_imports_point_down_the_layers():
    assert upward_imports(graph()) == []


def test_the_import_graph_has_no_cycle():
    assert cycles(graph()) == []


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"saferl.core.a": {"saferl.training.b": 3}, "saferl.training.b": {}}, ["saferl.core.a:3 imports"]),
        ({"saferl.algos.a": {"saferl.tabular.b": 1}, "saferl.tabular.b": {}}, ["saferl.algos.a:1 imports"]),
        ({"saferl.training.a": {"saferl.core.b": 1}, "saferl.core.b": {}}, []),
    ],
)
def test_an_upward_import_is_reported(edges, expected):
    found = upward_imports(edges)
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected))


def test_a_cycle_is_reported():
    edges = {
        "saferl.core.a": {"saferl.core.b": 1},
        "saferl.core.b": {"saferl.core.c": 1},
        "saferl.core.c": {"saferl.core.a": 1},
        "saferl.core.d": {"saferl.core.a": 1},
    }
    assert cycles(edges) == [["saferl.core.a", "saferl.core.b", "saferl.core.c"]]


def test_a_function_level_import_counts(tmp_path):
    path = tmp_path / "late.py"
    path.write_text("def f():\n    from saferl.training import runs\n    return runs\n")
    assert imported("saferl.core.late", path, {"saferl.training.runs": Path("x")}) == {"saferl.training.runs": 2}
