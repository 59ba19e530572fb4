"""The layout holds: cek/ imports run one way, and every architecture follows the protocol.

The import check reads the source (``ast``), so it sees imports inside functions too,
which a runtime check of ``sys.modules`` would miss.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import networkx as nx
import pytest

import agentic_machines
from agentic_machines.architectures import ARCHITECTURE_NAMES, ARCHITECTURES, Architecture

PACKAGE = Path(agentic_machines.__file__).resolve().parent
CEK = PACKAGE / "cek"

# The import order inside cek/, lowest first: a module may import only modules of a
# strictly lower rank. Reading text (reader) and printing it (printer) sit on either
# side of the compiled expressions; strategies (Hypothesis) uses the reader and printer.
CEK_RANK = {
    "syntax": 0,
    "values": 1,
    "expr": 2,
    "reader": 2,
    "printer": 3,
    "machine": 4,
    "strategies": 4,
    "evaluator": 5,
    "stepper": 5,
    "theorem": 6,
    "realize": 7,
    "__init__": 8,
}

# No cek module imports one above it: the printer installs itself as the node types'
# printer (syntax.install_printer) and the stepper attaches the frames' repr.
DOCUMENTED_UPWARD: set[tuple[str, str]] = set()


def cek_imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported cek module, line, inside a function?) for every import of a sibling."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.ImportFrom):
                targets: list[str] = []
                if child.level == 1 and child.module:
                    targets = [child.module.split(".")[0]]
                elif child.level == 1:
                    targets = [a.name for a in child.names]
                elif child.module and child.module.startswith("agentic_machines.cek."):
                    targets = [child.module.split(".")[2]]
                found.extend((t, child.lineno, in_function) for t in targets)
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("agentic_machines.cek."):
                        found.append((alias.name.split(".")[2], child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


def test_every_cek_module_has_a_rank() -> None:
    modules = {p.stem for p in CEK.glob("*.py")}
    assert modules == set(CEK_RANK), (
        "add the new cek module to CEK_RANK (and docs/design.md, layers)"
    )


@pytest.mark.parametrize("module", sorted(CEK_RANK))
def test_cek_imports_run_one_way(module: str) -> None:
    path = CEK / f"{module}.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    for target, line, in_function in cek_imports(path):
        assert target in CEK_RANK, f"{module}.py:{line} imports unknown cek module {target}"
        if CEK_RANK[target] < CEK_RANK[module]:
            continue
        assert (module, target) in DOCUMENTED_UPWARD, (
            f"cek/{module}.py:{line} imports {target}, which is not below it; "
            "move the code down a layer or document the cycle in DOCUMENTED_UPWARD"
        )
        assert in_function, f"cek/{module}.py:{line}: a documented cycle must import in a function"
        assert "#" in lines[line - 1], f"cek/{module}.py:{line}: say why the import is here"


def test_cek_in_function_imports_say_why() -> None:
    # An in-function import hides a dependency, so each one carries its reason.
    for path in sorted(CEK.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for target, line, in_function in cek_imports(path):
            if in_function:
                assert "#" in lines[line - 1], f"{path.name}:{line} (import of {target})"


def test_no_cek_module_imports_one_that_imports_it_back() -> None:
    graph = {m: {t for t, _, _ in cek_imports(CEK / f"{m}.py")} for m in CEK_RANK}
    for a, targets in graph.items():
        for b in targets:
            if a in graph.get(b, ()):
                pair = (a, b) if (a, b) in DOCUMENTED_UPWARD else (b, a)
                assert pair in DOCUMENTED_UPWARD, f"cek/{a}.py and cek/{b}.py import each other"


def test_the_reader_does_not_print() -> None:
    imported = {t for t, _, _ in cek_imports(CEK / "reader.py")}
    assert imported <= {"syntax", "values"}, imported


# -- the layers of the package ------------------------------------------------------------------

DESIGN = PACKAGE.parent / "docs" / "design.md"


def module_graph() -> nx.DiGraph:
    """The package's import graph from the source: module -> module it imports.

    Imports inside functions count (``ast`` sees them; ``sys.modules`` would not), and
    ``from . import x`` names the submodule ``x`` when there is one. Imports under
    ``if TYPE_CHECKING:`` count too: a type-only circle is still a circle of the design.
    """
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [f"{target}.{a.name}" for a in node.names]
                targets = [n if n in modules else target for n in names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


GRAPH = module_graph()


def room(module: str) -> str:
    """The folder or top-level module a module belongs to (``cek``, ``machine``, ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def design_layers() -> dict[str, int]:
    """Room -> its row in docs/design.md's layer table (the layer order, core first).

    >>> layers = design_layers()
    >>> layers["machine"], layers["runtime"] < layers["cek"] < layers["cli"]
    (0, True)
    """
    text = DESIGN.read_text(encoding="utf-8")
    table = text[text.index("| layer | folder | owns |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    ranks: dict[str, int] = {}
    for rank, row in enumerate(rows):
        _, _, folder, owns, _ = (cell.strip() for cell in row.split("|"))
        if folder == "`agentic_machines/` (top level)":
            # the core's modules: each named in backticks before its description
            names = re.findall(r"(?:^|\), )`(\w+)` \(", owns)
        else:
            names = [re.fullmatch(r"`agentic_machines/(\w+)(?:/|\.py)`", folder).group(1)]
        for name in names:
            assert name not in ranks, f"docs/design.md's layer table names {name} twice"
            ranks[name] = rank
    return ranks


LAYERS = design_layers()

# The imports that go up a layer, each for a reason docs/design.md gives.
DOCUMENTED_LAYER_EXCEPTIONS = {
    ("strategies", "cek"),  # the public strategies module offers programs too
}

# The import circles that remain, each opened by an import inside a function, with the
# reason docs/design.md gives. The list may only shrink: a new circle fails the test, and
# so does a circle broken without being taken off the list.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_every_folder_and_module_of_the_package_has_a_layer() -> None:
    # The map in docs/design.md equals the code's: every room is in the table, and the
    # table names no room the package does not have.
    rooms = {room(m) for m in GRAPH} - {"", "__main__"}
    assert rooms - set(LAYERS) == set(), "add a row (or a core module) to docs/design.md, layers"
    assert set(LAYERS) - rooms == set(), "docs/design.md's layer table names what is gone"


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for a, b in GRAPH.edges():
        if room(a) in ("", "__main__") or b == "agentic_machines":
            # the package's __init__ is its front door (it imports every layer), and
            # __main__ runs the command line; nothing imports them except for the version
            continue
        if room(a) != room(b) and LAYERS[room(b)] > LAYERS[room(a)]:
            if (room(a), room(b)) not in DOCUMENTED_LAYER_EXCEPTIONS:
                upward.append(f"{a} imports {b}")
    assert upward == [], "move the code down a layer, or document the exception: " + "; ".join(
        sorted(upward)
    )


def test_no_new_import_circle() -> None:
    found = {
        frozenset(m.removeprefix("agentic_machines.") for m in component)
        for component in nx.strongly_connected_components(GRAPH)
        if len(component) > 1
    }
    assert found - KNOWN_CIRCLES == set(), "a new import circle: move the shared piece down"
    assert KNOWN_CIRCLES - found == set(), "a known circle is gone: take it off KNOWN_CIRCLES"


def test_in_function_imports_say_why() -> None:
    # An import inside a function hides a dependency, so each one carries its reason, on
    # the import's own line: the whole package, every folder and every top-level module.
    silent = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        if "#" not in lines[node.lineno - 1]:
                            silent.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert silent == [], f"say why each import is inside its function: {silent}"


def test_the_graph_sees_imports_inside_functions() -> None:
    # the check is only as good as the graph: the notebook display attaches itself, and
    # the catalog imports the architectures inside a function
    assert GRAPH.has_edge("agentic_machines.catalog", "agentic_machines.architectures")
    assert not GRAPH.has_edge("agentic_machines.machine", "agentic_machines.drawing.display")
    assert GRAPH.has_edge("agentic_machines.drawing.display", "agentic_machines.machine")


# -- the architecture protocol ----------------------------------------------------------------


PROTOCOL_PARTS = sorted(
    set(Architecture.__annotations__)
    | {n for n, v in vars(Architecture).items() if callable(v) and not n.startswith("_")}
)


def test_the_protocol_has_the_documented_parts() -> None:
    assert PROTOCOL_PARTS == sorted(
        ["machine", "initial", "scripted_model", "SCRIPT", "analysis", "diagram_completions"]
    )


@pytest.mark.parametrize("name", ARCHITECTURE_NAMES)
def test_architecture_follows_the_protocol(name: str) -> None:
    module = ARCHITECTURES[name]
    assert isinstance(module, Architecture), (
        f"{name} lacks part of the Architecture protocol: "
        f"{[a for a in PROTOCOL_PARTS if not hasattr(module, a)]}"
    )
    # runtime_checkable checks presence only; the signatures matter to the callers.
    assert not [
        p
        for p in inspect.signature(module.machine).parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ], f"{name}.machine() must work without arguments (the default toy task)"
    for fn in (module.scripted_model, module.analysis):
        required = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        assert not required, f"{name}.{fn.__name__}() must work without arguments"
    assert len(inspect.signature(module.diagram_completions).parameters) >= 1
    assert isinstance(module.SCRIPT, tuple) and all(isinstance(c, str) for c in module.SCRIPT)


def test_the_protocol_rejects_a_module_missing_a_part() -> None:
    import types

    fake = types.SimpleNamespace(machine=lambda: None, initial=0, scripted_model=lambda: None)
    assert not isinstance(fake, Architecture)


@pytest.mark.parametrize("name", ARCHITECTURE_NAMES)
def test_default_machine_starts_at_initial(name: str) -> None:
    module = ARCHITECTURES[name]
    m = module.machine()
    assert isinstance(m, agentic_machines.AgenticMachine)
    assert isinstance(m.prompt(module.initial), str)
    assert isinstance(module.diagram_completions(m.prompt(module.initial)), list)
