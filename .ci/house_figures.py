"""The house figures of the package, as a new maintainer would count them.

    python .ci/house_figures.py          # the figures, one a line
    python .ci/house_figures.py --list   # and what each count is made of

A room is a folder of the package or a module at its top level; an arrow is a room that
imports another (any import, inside functions too, read with ``ast``); the floors are the
longest chain of arrows (a room that imports nothing is on floor 1); an upward arrow goes
to a room later in docs/design.md's layer table. A private cross-module import is
``from m import _name`` or ``m._name`` where ``m`` is another module of the package.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentic_machines"
LONG_MODULE = 600
LONG_DOCSTRING = 40


def modules() -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(module imported, the names taken from it) for every import of one module."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub, []) if sub in known else (target, [alias.name]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
    return [(t, names) for t, names in found if t in known and t != name]


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def private_uses(name: str, path: Path, known: dict[str, Path]) -> set[tuple[str, str]]:
    """(other module, private name) this module takes: imported, or read as ``m._x``."""
    found = {(t, n) for t, names in imports(name, path, known) for n in names if n[0] == "_"}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and aliases[node.value.id] != name
        ):
            found.add((aliases[node.value.id], node.attr))
    return {(t, n) for t, n in found if not n.startswith("__")}


def layer_order() -> dict[str, int]:
    """Room -> its row in docs/design.md's layer table."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text[text.index("| layer | folder | owns |") :].split("\n\n", 1)[0]
    order: dict[str, int] = {}
    for rank, line in enumerate(table.splitlines()[2:]):
        folder, owns = (cell.strip() for cell in line.split("|")[2:4])
        found = re.fullmatch(r"`agentic_machines/(\w+)(/|\.py)`", folder)
        if found:
            order[found.group(1)] = rank
            continue
        depth = 0
        for token in re.finditer(r"`([^`]*)`|\(|\)", owns):
            depth += {"(": 1, ")": -1}.get(token.group(0), 0)
            if token.group(1) is not None and depth == 0:
                order[token.group(1)] = rank
    return order


def figures() -> dict[str, object]:
    known = modules()
    graph = nx.DiGraph()
    rooms = nx.DiGraph()
    private: set[tuple[str, str, str]] = set()
    for name, path in known.items():
        graph.add_node(name)
        if room(name):
            rooms.add_node(room(name))
        for target, _ in imports(name, path, known):
            graph.add_edge(name, target)
            if room(name) and room(target) and room(name) != room(target):
                rooms.add_edge(room(name), room(target))
        private |= {(name, t, n) for t, n in private_uses(name, path, known)}
    cycles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    floor: dict[str, int] = {}
    condensed = nx.condensation(rooms)
    for node in reversed(list(nx.topological_sort(condensed))):
        below = [floor[s] for s in condensed.successors(node)]
        floor[node] = 1 + max(below, default=0)
    order = layer_order()
    upward = sorted(
        (a, b) for a, b in rooms.edges() if a in order and b in order and order[b] > order[a]
    )
    lengths = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in known.items()}
    long_docs = []
    longest = ("", 0)
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree, clean=False) or ""
        if len(doc.splitlines()) > LONG_DOCSTRING:
            long_docs.append((name, len(doc.splitlines())))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > longest[1]:
                    longest = (f"{name}.{node.name}", size)
    return {
        "modules": len(known),
        "lines": sum(lengths.values()),
        "rooms": rooms.number_of_nodes(),
        "floors": max(floor.values()),
        "arrows": rooms.number_of_edges(),
        "circles": len(cycles),
        "upward arrows": upward,
        "private cross-module names": sorted(private),
        "private module pairs": sorted({(a, b) for a, b, _ in private}),
        f"modules over {LONG_MODULE} lines": sorted(
            (n, k) for n, k in lengths.items() if k > LONG_MODULE
        ),
        f"module docstrings over {LONG_DOCSTRING} lines": sorted(long_docs),
        "longest function": longest,
    }


def main(argv: list[str]) -> int:
    for key, value in figures().items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            if "--list" in argv:
                for item in value:
                    print("   ", item)
        else:
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
