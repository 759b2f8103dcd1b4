"""One dependency direction, no import circles: read from the code's own import statements.

The layers, lowest first (ARCHITECTURE.md):

    veetbot (core)  <-  memory  <-  recall  <-  reconsolidation  <-  surfaces  <-  evals  <-  tests

* ``veetbot`` core is what every app stands on: settings, clock, identity, RLS, the database.
  The project's composition root — urls, wsgi, celery, DRF authentication and the error
  envelope, admin, its commands, the MCP endpoint — imports the apps, so it is a surface.
* Surfaces are what people and processes call: each app's ``api/``, ``management/``,
  ``tasks``, ``admin`` and ``apps`` (where hooks are registered), and ``review_ui``.
* ``recall`` imports nothing from ``reconsolidation``: reconsolidation registers its read-time
  view through ``recall.hooks`` at start-up, as it registers invalidation with ``memory.hooks``.

An import may go to its own layer or lower, never higher, and the modules never form a circle.
A function-level import of a project module hides an edge from readers; outside ``tests/`` each
one left needs a comment on its line or the line above saying why it cannot be at the top.

Run it alone: ``python -m pytest tests/test_dependency_direction.py``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("veetbot", "memory", "recall", "reconsolidation", "review_ui", "evals", "tests")
CORE, MEMORY, RECALL, RECONSOLIDATION, SURFACE, EVALS, TESTS = range(7)
LAYER_NAMES = ("veetbot core", "memory", "recall", "reconsolidation", "surface", "evals", "tests")
APP_LAYERS = {"veetbot": CORE, "memory": MEMORY, "recall": RECALL, "reconsolidation": RECONSOLIDATION,
              "review_ui": SURFACE, "evals": EVALS, "tests": TESTS}
# Inside an app, these names are its surfaces (a module or a package of that name).
SURFACE_PARTS = {"api", "management", "tasks", "admin", "apps"}
# The project's composition root lives in the veetbot package but wires every app together.
VEETBOT_SURFACES = {"urls", "wsgi", "auth", "api_errors", "admin", "admin_apps", "management", "mcp_server"}


def layer(module: str) -> int:
    parts = module.split(".")
    base = APP_LAYERS[parts[0]]
    if base in (SURFACE, EVALS, TESTS):
        return base
    if parts[0] == "veetbot":
        return SURFACE if len(parts) > 1 and parts[1] in VEETBOT_SURFACES else CORE
    return SURFACE if any(part in SURFACE_PARTS for part in parts[1:]) else base


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    deferred: bool  # inside a function
    explained: bool  # a comment on its line or the one above


def modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            relative = path.relative_to(root)
            if "migrations" in relative.parts:
                continue  # migrations are frozen history, loaded by Django alone
            name = ".".join(relative.with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def edges(root: Path = ROOT) -> list[Edge]:
    known = modules(root)
    found = []
    for name, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def explained(lineno: int) -> bool:
            own = lines[lineno - 1]
            above = lines[lineno - 2].strip() if lineno > 1 else ""
            return "#" in own or above.startswith("#")

        def visit(node: ast.AST, deferred: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join([*parts, base] if base else parts)
                    # "from a import b" depends on a.b when b is a module, else on a.
                    targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                               for alias in child.names]
                for target in targets:
                    resolved = _resolve(target, known)
                    if resolved is not None and resolved != name:
                        found.append(Edge(name, resolved, child.lineno, deferred, explained(child.lineno)))
                visit(child, inner)

        tree = ast.parse(text)
        # "if TYPE_CHECKING:" imports never run: they are annotations, not dependencies.
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                node.body = []
        visit(tree, False)
    return found


def upward(found: list[Edge]) -> list[str]:
    return sorted(
        f"{e.source}:{e.line} imports {e.target} ({LAYER_NAMES[layer(e.source)]} -> {LAYER_NAMES[layer(e.target)]})"
        for e in found if layer(e.target) > layer(e.source)
    )


def circles(found: list[Edge]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for e in found:
        graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0

    def connect(start: str) -> None:  # Tarjan, iteratively (deep chains would overflow recursion)
        nonlocal counter
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return result


def unexplained_deferred(found: list[Edge]) -> list[str]:
    return sorted({f"{e.source}:{e.line} imports {e.target} inside a function"
                   for e in found if e.deferred and not e.explained and layer(e.source) != TESTS})


def test_no_import_runs_against_the_dependency_direction():
    assert upward(edges()) == []


def test_the_project_modules_form_no_import_circle():
    assert circles(edges()) == []


def test_every_function_level_import_of_a_project_module_says_why():
    assert unexplained_deferred(edges()) == []


def test_the_check_sees_an_upward_import_and_a_circle(tmp_path):
    """The check can fail: a recall module importing reconsolidation, which imports it back."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "recall" / "retriever.py").write_text("from reconsolidation import read_path\n")
    (tmp_path / "reconsolidation" / "read_path.py").write_text(
        "def later():\n    from recall import retriever\n")
    found = edges(tmp_path)
    assert upward(found) == [
        "recall.retriever:1 imports reconsolidation.read_path (recall -> reconsolidation)"]
    assert circles(found) == [["recall.retriever", "reconsolidation.read_path"]]
    assert unexplained_deferred(found) == [
        "reconsolidation.read_path:2 imports recall.retriever inside a function"]
