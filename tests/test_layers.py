"""The package's layers, held by a test: a package imports only its own layer and those below it, and no
two packages import each other, however indirectly.

content <- looks (a view drawn as an image) <- world <- store <- programs, docs (the program API and the
rules document, built from the registries the service hands them) <- service (the host and its query
registry) <- server (the faces) <- eval, agents <- tasks, web (the pages of a served match) <- env (the
Gymnasium and PettingZoo faces), runner (sweeps and forks), inspectai (Inspect AI tasks) <- bench, cli, the
examples and handbook (the documentation site's generated pages); the small utility modules sit under everything. Imports inside functions count (a lazy import is
still a dependency); imports only for type checking do not.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "wildhold"

LAYERS: list[set[str]] = [
    {"(root)", "extras", "helptext", "readable", "revision", "terminal"},
    {"content"},
    {"looks"},
    {"world"},
    {"store"},
    {"programs", "docs"},
    {"service"},
    {"server"},
    {"eval", "agents"},
    {"tasks", "web"},
    {"env", "runner", "inspectai"},
    {"bench", "cli", "examples", "handbook"},
]


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _imports_in(body: list[ast.stmt]):
    """The import statements among these statements and those nested in them (functions, classes, branches,
    handlers), leaving out `if TYPE_CHECKING:` blocks; expressions are never walked, so this reads the tree quickly."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _imports_in(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _imports_in([n for n in getattr(node, field, []) if isinstance(n, (ast.stmt, ast.excepthandler))])


def _imported(body: list[ast.stmt]):
    """Modules imported by these statements (see `_imports_in`)."""
    for node in _imports_in(body):
        if isinstance(node, ast.ImportFrom):
            if node.module:
                yield node.module
        else:
            yield from (a.name for a in node.names)


@functools.cache
def imports() -> dict[str, dict[str, set[str]]]:
    """For each package, the packages it imports and, for each, the files that do."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) > 1:
            here = rel.parts[0]
        else:
            here = "(root)" if rel.stem in ("__init__", "__main__") else rel.stem
        for name in _imported(ast.parse(path.read_text()).body):
            if name.startswith("wildhold.") and (there := _package(name)) != here:
                graph.setdefault(here, {}).setdefault(there, set()).add(str(rel))
    return graph


def layer_of(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def test_every_package_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert packages | modules <= set().union(*LAYERS), "place each new package in LAYERS"


def test_no_package_imports_a_layer_above_its_own():
    upward = [f"{here} -> {there} ({', '.join(sorted(files))})"
              for here, targets in imports().items() for there, files in targets.items()
              if layer_of(there) > layer_of(here)]
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def test_no_cycle_between_packages():
    graph = {here: set(targets) for here, targets in imports().items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in graph.get(node, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    cyclic = sorted(p for p in graph if reaches(p, p))
    assert not cyclic, f"import cycles through {cyclic}"


def module_imports(package: str) -> dict[str, set[str]]:
    """For each module of one package, the modules of that package it imports: `from a import b` imports module
    a.b where that is a module, else a (the package's `__init__`)."""
    paths = {}
    for path in (PACKAGE / package).rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = graph[name] = set()
        for node in _imports_in(ast.parse(path.read_text()).body):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in paths)
            elif node.module in paths:
                targets.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module
                               for a in node.names)
    return graph


def test_no_part_imports_a_module_that_imports_it_back():
    """The world's parts are plug-ins: what reads several of them (the world, observations, the wealth formula) sits
    above them, and no part imports such a module, however indirectly. What two of them share lives in a module
    below both (the market's dealings, read by the market part and the wealth formula)."""
    graph = module_imports("world")
    parts = [m for m in graph if m.startswith("wildhold.world.parts.")]

    def path_back(start: str) -> list[str] | None:
        trail, todo = {start: [start]}, [start]
        while todo:
            node = todo.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    return trail[node] + [start]
                if nxt not in trail:
                    trail[nxt] = trail[node] + [nxt]
                    todo.append(nxt)
        return None

    cycles = [" -> ".join(path) for part in parts if (path := path_back(part))]
    assert not cycles, "parts imported back:\n" + "\n".join(cycles)
