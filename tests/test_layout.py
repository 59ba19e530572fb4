"""The layout holds, and docs/design.md's map says what the code is.

- The map (docs/design.md, "Layers") names every module of the package and nothing else;
  its table is the layer order, and no import goes up a layer except those the map lists.
- Every import statement the map makes ("`a` imports `b`", "`a` does not import `b`",
  cek/'s "the import order is ...") holds in the import graph.
- No import circle; every import inside a function says why it is there.
- Every architecture follows the protocol.

The import graph is read from the source (``ast``), so it sees imports inside functions
too, which a runtime check of ``sys.modules`` would miss.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path

import networkx as nx
import pytest

import agentic_machines
from agentic_machines.architectures import ARCHITECTURE_NAMES, ARCHITECTURES, Architecture

PACKAGE = Path(agentic_machines.__file__).resolve().parent


# -- the layers of the package ------------------------------------------------------------------

DESIGN = PACKAGE.parent / "docs" / "design.md"


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per run: four checks below walk every module."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache  # built when a test first needs it, so collecting this file is cheap
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
        for node in ast.walk(syntax_tree(path)):
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


def short(module: str) -> str:
    """A module's name inside the package, as docs/design.md writes it (``cek.printer``)."""
    return module.removeprefix("agentic_machines.")


def room(module: str) -> str:
    """The folder or top-level module a module belongs to (``cek``, ``machine``, ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


# -- docs/design.md's map: read from the page, so that the page and the code cannot drift ------

MAP = re.search(r"^## Layers\n(.*?)(?=^## )", DESIGN.read_text(encoding="utf-8"), re.S | re.M)
assert MAP, "docs/design.md has no '## Layers' section (the map tests/test_layout.py reads)"
MAP_TEXT = MAP.group(1)
# the map's prose with its line breaks undone, so a statement may wrap
MAP_PROSE = " ".join(MAP_TEXT.split())


def top_level_names(cell: str) -> list[str]:
    """The names in backticks outside every parenthesis: the modules a table cell names.

    A row of the layer table names each module of its folder as ```name` (what it
    holds)``; names inside the parentheses are the module's contents, not modules.

    >>> top_level_names("`run` (`run`, `Trace`), `search` (the kernel (one)) and `harness`")
    ['run', 'search', 'harness']
    """
    depth = 0
    names = []
    for token in re.finditer(r"`([^`]*)`|\(|\)", cell):
        if token.group(0) == "(":
            depth += 1
        elif token.group(0) == ")":
            depth -= 1
        elif depth == 0:
            names.append(token.group(1))
    return names


def layer_rows() -> list[tuple[str, list[str]]]:
    """(room or ``""`` for the core's row, the modules its cell names), in table order.

    >>> layer_rows()[0][0], "machine" in layer_rows()[0][1]
    ('', True)
    """
    table = MAP_TEXT[MAP_TEXT.index("| layer | folder | owns |") :].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        _, _, folder, owns, _ = (cell.strip() for cell in line.split("|"))
        if folder == "`agentic_machines/` (top level)":
            rows.append(("", top_level_names(owns)))
            continue
        found = re.fullmatch(r"`agentic_machines/(\w+)(/|\.py)`", folder)
        assert found, (
            f"docs/design.md's layer table: write the folder {folder} as `agentic_machines/NAME/`"
        )
        rows.append((found.group(1), top_level_names(owns) if found.group(2) == "/" else []))
    return rows


def design_layers() -> dict[str, int]:
    """Room -> its row in docs/design.md's layer table (the layer order, core first).

    >>> layers = design_layers()
    >>> layers["machine"], layers["runtime"] < layers["cek"] < layers["cli"]
    (0, True)
    """
    ranks: dict[str, int] = {}
    for rank, (folder, names) in enumerate(layer_rows()):
        for name in names if folder == "" else [folder]:
            assert name not in ranks, f"docs/design.md's layer table names {name} twice"
            ranks[name] = rank
    return ranks


LAYERS = design_layers()

CLAIM = re.compile(
    r"(?:`(?P<subject>[\w.]+)`|(?P<core>\bthe core)) "
    r"(?P<verb>imports only|imports|does not import|never imports) "
    # a list of objects ends where a name starts the next statement ("`a` imports `b`,
    # and `c` does not import `d`" is two statements)
    r"(?P<objects>`[\w.]+`(?:(?:,? and |,? or |, )`[\w.]+`(?! (?:imports|does|never)))*)"
)


def resolve(name: str) -> set[str]:
    """The modules a name of the map stands for: a module, or every module of a folder.

    ``cek.__init__`` is the folder's ``__init__`` alone; ``the core`` is the first row.

    >>> sorted(resolve("cek.__init__")), "agentic_machines.cek.printer" in resolve("cek")
    (['agentic_machines.cek'], True)
    """
    if name == "the core":
        return {m for m in module_graph() if room(m) and LAYERS.get(room(m)) == 0}
    full = "agentic_machines." + name.removesuffix(".__init__")
    if name.endswith(".__init__"):
        return {full} & set(module_graph())
    return {m for m in module_graph() if m == full or m.startswith(full + ".")}


def map_claims(text: str = MAP_PROSE) -> list[tuple[str, str, list[str]]]:
    """Every import statement of the map: (subject, verb, objects).

    >>> map_claims("so `machine` does not import `drawing` or `runtime.explore`; and")
    [('machine', 'does not import', ['drawing', 'runtime.explore'])]
    >>> len(map_claims("`a` imports `b`, and `c` does not import `d` or `e`"))
    2
    """
    return [
        (
            found.group("subject") or "the core",
            found.group("verb"),
            re.findall(r"`([\w.]+)`", found.group("objects")),
        )
        for found in CLAIM.finditer(text)
    ]


def claim_is_false(subject: str, verb: str, objects: list[str]) -> str | None:
    """Why a statement of the map is false of the import graph, or None when it holds."""
    sources = resolve(subject)
    if not sources:
        return f"`{subject}` names no module of the package"
    imported = {b for a in sources for b in module_graph().successors(a)} - sources
    targets = {}
    for name in objects:
        targets[name] = resolve(name)
        if not targets[name]:
            return f"`{name}` names no module of the package"
    if verb == "imports":
        missing = [name for name, modules in targets.items() if not modules & imported]
        return f"it imports none of {missing}" if missing else None
    if verb == "imports only":
        allowed = set().union(*targets.values())
        extra = sorted(short(b) for b in imported - allowed)
        return f"it also imports {extra}" if extra else None
    found = sorted(short(b) for name, modules in targets.items() for b in modules & imported)
    return f"it imports {found}" if found else None


def test_the_map_names_every_module_of_the_package() -> None:
    # docs/design.md's map equals the code's: every room is in the layer table, every
    # module of a folder is named in its row (as `name` (what it holds)), and the table
    # names nothing the package does not have
    rooms = {room(m) for m in module_graph()} - {""}
    assert rooms - set(LAYERS) == set(), (
        "add a row (or, for a core module, `name` (what it holds) in the first row) to "
        f"docs/design.md's layer table for {sorted(rooms - set(LAYERS))}"
    )
    assert set(LAYERS) - rooms == set(), (
        f"docs/design.md's layer table names {sorted(set(LAYERS) - rooms)}, which the "
        "package does not have: take it off the table"
    )
    wrong = []
    for folder, named in layer_rows():
        if folder == "" or not (PACKAGE / folder).is_dir():
            continue
        modules = {short(m).removeprefix(folder + ".") for m in module_graph() if room(m) == folder}
        modules.discard(folder)  # the folder's __init__
        if modules - set(named):
            wrong.append(
                f"row agentic_machines/{folder}/: name {sorted(modules - set(named))} "
                "as `module` (what it holds), outside parentheses"
            )
        if set(named) - modules:
            wrong.append(
                f"row agentic_machines/{folder}/: {sorted(set(named) - modules)} is not a "
                "module of the folder (rename it, or put a name that is not a module inside "
                "the parentheses of the module that holds it)"
            )
    assert wrong == [], "docs/design.md's layer table: " + "; ".join(wrong)


def test_the_map_makes_import_statements() -> None:
    # the statement check below is only as good as the reading of the page
    claims = map_claims()
    assert len(claims) >= 10, claims
    assert ("spell.text", "does not import", ["spell.evaluator"]) in claims


def test_every_import_statement_of_the_map_holds() -> None:
    # "`a` imports `b`", "`a` imports only `b` and `c`", "`a` does not import `b`": every
    # such statement of docs/design.md's map is checked against the import graph
    false = []
    for subject, verb, objects in map_claims():
        why = claim_is_false(subject, verb, objects)
        if why:
            stated = " or ".join(f"`{o}`" for o in objects)
            false.append(f"'`{subject}` {verb} {stated}' is false: {why}")
    assert false == [], (
        "docs/design.md's map states imports the code does not have: correct the sentence "
        "(or the code): " + "; ".join(false)
    )


def test_no_import_statement_of_the_map_escapes_the_check() -> None:
    # a statement that starts like one ("`a` imports ...") but names no module after the
    # verb would go unchecked: the page must say it in the checked form
    starts = {
        m.start()
        for m in re.finditer(r"`[\w.]+` (?:imports|does not import|never imports)\b", MAP_PROSE)
    }
    checked = {m.start() for m in CLAIM.finditer(MAP_PROSE)}
    unchecked = [MAP_PROSE[i : i + 60] for i in sorted(starts - checked)]
    assert unchecked == [], (
        "docs/design.md's map: name the imported modules in backticks right after the verb "
        '("`a` imports `b` and `c`"), so the statement is checked: ' + " | ".join(unchecked)
    )


def test_a_false_statement_is_caught() -> None:
    # the check can fail: statements that contradict the graph are reported
    assert claim_is_false("drawing.display", "does not import", ["machine"])
    assert claim_is_false("machine", "imports", ["drawing"])
    assert claim_is_false("execution", "imports only", ["errors"])
    assert claim_is_false("nowhere", "imports", ["machine"])


# The import circles that remain, each opened by an import inside a function, with the
# reason docs/design.md gives. The list may only shrink: a new circle fails the test, and
# so does a circle broken without being taken off the list.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for a, b in module_graph().edges():
        if room(a) == "" or b == "agentic_machines":
            # the package's __init__ is its front door (it imports every layer); nothing
            # imports it except for the version
            continue
        if room(a) != room(b) and LAYERS[room(b)] > LAYERS[room(a)]:
            upward.append(f"{a} imports {b}")
    assert upward == [], (
        "an import goes up docs/design.md's layer table: move the shared code down a layer, "
        "or the importing module to a row below what it imports: " + "; ".join(sorted(upward))
    )


def test_no_new_import_circle() -> None:
    found = {
        frozenset(m.removeprefix("agentic_machines.") for m in component)
        for component in nx.strongly_connected_components(module_graph())
        if len(component) > 1
    }
    assert found - KNOWN_CIRCLES == set(), "a new import circle: move the shared piece down"
    assert KNOWN_CIRCLES - found == set(), "a known circle is gone: take it off KNOWN_CIRCLES"


# -- inside cek/: the import order the map states ----------------------------------------------


def cek_order() -> dict[str, int]:
    """cek module -> its place in the map's "the import order is a → b and c → ..." chain.

    >>> order = cek_order()
    >>> order["syntax"] < order["printer"] < order["machine"] < order["realize"]
    True
    """
    chain = re.search(r"the import order is ((?:`\w+`(?: → | and |, )?)+)", MAP_PROSE)
    assert chain, "docs/design.md's map: state cek/'s order as 'the import order is `a` → `b` ...'"
    return {
        name: rank
        for rank, group in enumerate(chain.group(1).split(" → "))
        for name in re.findall(r"`(\w+)`", group)
    }


CEK_ORDER = cek_order()


def test_the_cek_order_names_every_cek_module() -> None:
    modules = {short(m).removeprefix("cek.") for m in module_graph() if room(m) == "cek"} - {"cek"}
    assert modules == set(CEK_ORDER), (
        "docs/design.md's 'the import order is ...' chain of cek/ must name every cek module "
        f"once: missing {sorted(modules - set(CEK_ORDER))}, gone {sorted(set(CEK_ORDER) - modules)}"
    )


def test_cek_imports_follow_the_stated_order() -> None:
    # a cek module imports only modules strictly before it in the chain (the package's
    # __init__ comes after all of them)
    against = [
        f"{short(a)} imports {short(b)}"
        for a, b in module_graph().edges()
        if room(a) == room(b) == "cek"
        and a != "agentic_machines.cek"
        and CEK_ORDER[short(b).removeprefix("cek.")] >= CEK_ORDER[short(a).removeprefix("cek.")]
    ]
    assert against == [], (
        "move the code down, or attach it from above as the printer and the stepper do "
        "(or change the order docs/design.md states): " + "; ".join(sorted(against))
    )


# -- in-function imports ------------------------------------------------------------------------


def test_in_function_imports_say_why() -> None:
    # An import inside a function hides a dependency, so each one carries its reason, on
    # the import's own line: the whole package, every folder and every top-level module.
    silent = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(syntax_tree(path)):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        if "#" not in lines[node.lineno - 1]:
                            silent.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert silent == [], f"say why each import is inside its function: {silent}"


def test_the_graph_sees_imports_inside_functions() -> None:
    # the check is only as good as the graph: the notebook display attaches itself, and
    # the catalog imports explore inside a function
    assert module_graph().has_edge(
        "agentic_machines.architectures.catalog", "agentic_machines.runtime.explore"
    )
    assert not module_graph().has_edge(
        "agentic_machines.machine", "agentic_machines.drawing.display"
    )
    assert module_graph().has_edge("agentic_machines.drawing.display", "agentic_machines.machine")


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


# -- named interfaces: no private name crosses a module ----------------------------------------

# (importer, module imported from, name): the private names other modules still take, each
# owned by a change under way this session (issue 39, item 4). The list may only shrink: a
# name made public (no underscore) or no longer imported must come off it.
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str, str]] = set()


def private_uses(name: str, package: list[str], tree: ast.Module, modules: set[str]) -> set[str]:
    """The private names module ``name`` (in folder ``package``) takes from another of
    ``modules``: ``from m import _x``, and ``m._x`` where ``m`` names a module it imported
    (``import a.m as m``, ``from a import m``); as ``"m:_x"``.

    >>> tree = ast.parse("from . import b\\nfrom .c import _d\\nb._e(); b.f()")
    >>> sorted(private_uses("p.a", ["p"], tree, {"p.a", "p.b", "p.c"}))
    ['p.b:_e', 'p.c:_d']
    """

    def private(attr: str) -> bool:
        return attr.startswith("_") and not attr.startswith("__")

    found, aliases = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:  # a submodule, bound to a name
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                elif private(alias.name) and target in modules and target != name:
                    found.add(f"{target}:{alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and aliases.get(node.value.id, name) != name
            and private(node.attr)
        ):
            found.add(f"{aliases[node.value.id]}:{node.attr}")
    return found


def private_imports() -> set[tuple[str, str, str]]:
    """Every private name a module of the package takes from another of its modules
    (:func:`private_uses`): (importer, module, name), in the map's short names."""
    found = set()
    modules = set(module_graph())
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        for use in private_uses(name, package, syntax_tree(path), modules):
            target, _, attr = use.partition(":")
            found.add((short(name), short(target), attr))
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    found = private_imports()
    new = sorted(found - PRIVATE_IMPORTS_ALLOWED)
    assert new == [], (
        "a module takes another's private name (imports it, or reads it off the module): "
        "name it without the underscore in its "
        f"module (it is an interface now), or move the code that needs it: {new}"
    )
    gone = sorted(PRIVATE_IMPORTS_ALLOWED - found)
    assert gone == [], f"take these off PRIVATE_IMPORTS_ALLOWED in tests/test_layout.py: {gone}"


# -- module docstrings say what a module is for, in at most 40 lines ------------------------------

DOCSTRING_LINES = 40


def docstring_lengths() -> dict[str, int]:
    """Module -> the number of lines of its docstring (0 without one)."""
    lengths = {}
    for module in module_graph():
        path = PACKAGE.parent.joinpath(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        doc = ast.get_docstring(syntax_tree(path), clean=False)
        lengths[short(module)] = len((doc or "").splitlines())
    return lengths


def test_module_docstrings_fit_in_40_lines() -> None:
    lengths = docstring_lengths()
    long = [f"{m} ({n} lines)" for m, n in sorted(lengths.items()) if n > DOCSTRING_LINES]
    assert long == [], (
        f"a module docstring says what the module is for and how to use it in at most "
        f"{DOCSTRING_LINES} lines: move the rest (the why, the measurements) to a page of "
        f"docs/: {long}"
    )
