"""Checks the shape of the `optimizer` package: no import cycles, no import pointing up the layers, no module over
MAX_LINES lines, every subpackage listed in pyproject.toml (or a wheel would leave it out). Imports inside functions
count: a lazy import is still a dependency.

    python .ci/check_layout.py            # exit 0 when clean, 1 with every problem listed
    python .ci/check_layout.py --graph    # also print each module's imports
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "optimizer"
MAX_LINES = 450

LAYERS: list[tuple[str, ...]] = [
    # 0: leaves with no project imports of note (a family package itself is a docstring; its modules are placed below)
    ("optimizer.text", "optimizer.stats", "optimizer.cost", "optimizer.files", "optimizer.run",
     "optimizer.secrets", "optimizer.prompt_files", "optimizer.schema_metadata"),
    # 1: the contract types
    ("optimizer.definitions", "optimizer.run.config", "optimizer.models.base", "optimizer.models.defaults",
     "optimizer.models.limits"),
    # 2: the core
    ("optimizer.tasks", "optimizer.scoring", "optimizer.files.store", "optimizer.files.patch", "optimizer.servers",
     "optimizer.cost.estimate", "optimizer.cost.history", "optimizer.cost.budget", "optimizer.lint",
     "optimizer.source", "optimizer.references", "optimizer.search",
     "optimizer.gate", "optimizer.stats.call_change"),
    # 3: vendors, agents, proposers and judges behind their protocols
    ("optimizer.models", "optimizer.propose", "optimizer.judge", "optimizer.tool_search", "optimizer.readers",
     "optimizer.run.episode", "optimizer.run.context", "optimizer.run.evaluate", "optimizer.files.pin",
     "optimizer.tasks.generate", "optimizer.tasks.offline", "optimizer.tasks.explore", "optimizer.tasks.known",
     "optimizer.tasks.journal", "optimizer.tasks.validate", "optimizer.tasks.coverage", "optimizer.html_report"),
    # 4: one owner of an open run
    ("optimizer.run.harness",),
    # 5: the libraries behind the commands
    ("optimizer.evaluation", "optimizer.optimize", "optimizer.regress", "optimizer.review", "optimizer.serve"),
    # 6: the command line
    ("optimizer.cli",),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str, modules: set[str]) -> set[str]:
    """Project modules `path` imports anywhere in its body (resolved relative imports included). `from pkg import
    sub` imports the submodule `pkg.sub`, not the package's own code, when `sub` is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m == "optimizer" or m.startswith("optimizer.")}


def layer_of(name: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = name == prefix or name.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None


def build_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in imports_of(path, name, set(modules)):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported not in (name, "optimizer"):
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def problems(graph: dict[str, set[str]]) -> list[str]:
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    for name, targets in sorted(graph.items()):
        if name == "optimizer":
            continue
        mine = layer_of(name)
        if mine is None:
            out.append(f"{name}: not in any layer of .ci/check_layout.py")
            continue
        for target in sorted(targets):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                out.append(f"upward import: {name} (layer {mine}) imports {target} (layer {theirs})")
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            out.append(f"{path.relative_to(ROOT)}: {lines} lines (at most {MAX_LINES})")
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if (package := module_name(init)) not in listed:
            out.append(f"{package}: not in pyproject.toml's [tool.setuptools] packages")
    return out


def main(argv: list[str]) -> int:
    graph = build_graph()
    if "--graph" in argv:
        for name, targets in sorted(graph.items()):
            print(f"{name} -> {', '.join(sorted(targets)) or '-'}")
    found = problems(graph)
    for problem in found:
        print(problem)
    print(f"layout: {len(graph)} modules, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
