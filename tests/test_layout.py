"""The layout holds: cek/ imports run one way, and every architecture follows the protocol.

The import check reads the source (``ast``), so it sees imports inside functions too,
which a runtime check of ``sys.modules`` would miss.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

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

# The one real cycle, and why: printing needs the data, value and expression types,
# and their ``repr`` and error messages print. Each such import is inside a function.
# The second: a frame's repr shows the continuation as the program with a hole, which the
# stepper prints from the frames machine defines (inside Frame.__repr__).
DOCUMENTED_UPWARD = {
    ("syntax", "printer"),
    ("values", "printer"),
    ("expr", "printer"),
    ("machine", "stepper"),
}


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

# Folder -> rank: a module may import only from its own folder or from lower ranks
# ("" is the formal core, the package's top folder). A new subpackage is checked once it
# is given a rank here (and a row in docs/design.md, layers).
LAYER_RANK = {
    "": 0,
    "execution": 1,
    "runtime": 2,
    "cek": 3,
    "architectures": 4,
    # Top-level library modules above the core: the catalog resolves architectures by
    # name (the gallery uses it), the contrast tabulates and draws them.
    "catalog": 5,
    "drawing": 6,
    "contrast": 7,
    "cli": 8,
}

# The imports that go up a layer, each for a reason docs/design.md gives.
DOCUMENTED_LAYER_EXCEPTIONS = {
    ("machine", "drawing"),  # a machine draws itself in a notebook (in a function)
    ("strategies", "cek"),  # the public strategies module offers programs too
}


def package_imports(path: Path) -> list[tuple[str, int]]:
    """(folder of the imported package module, line) for every import inside the package."""
    rel = path.relative_to(PACKAGE).parts
    here = list(rel[:-1])  # the folders of this module inside the package
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            parts = base + (node.module.split(".") if node.module else [])
            names = [parts] if node.module else [parts + [a.name] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "agentic_machines."
        ):
            names = [node.module.split(".")[1:]]
        else:
            continue
        for target in names:
            folder = target[0] if target and (PACKAGE / target[0]).is_dir() else ""
            if not folder and target and target[0] in LAYER_RANK:
                folder = target[0]  # a top-level module with a rank of its own
            out.append((folder, node.lineno))
    return out


def _layer_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and p.name not in ("__init__.py", "__main__.py")
    )


@pytest.mark.parametrize("path", _layer_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_import_downwards(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    folder = rel.parts[0] if len(rel.parts) > 1 else ""
    if not folder and rel.stem in LAYER_RANK:
        folder = rel.stem
    if folder not in LAYER_RANK:
        pytest.skip(f"{folder}/ has no rank in LAYER_RANK yet")
    me = str(rel.with_suffix(""))
    for target, line in package_imports(path):
        if target not in LAYER_RANK or LAYER_RANK[target] <= LAYER_RANK[folder]:
            continue
        assert (me, target) in DOCUMENTED_LAYER_EXCEPTIONS, (
            f"{rel}:{line} imports from {target}/, a higher layer; move the code down or "
            "document the exception (docs/design.md, layers)"
        )


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
