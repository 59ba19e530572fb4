"""The example notebook runs, without Jupyter, and its displays render.

Each code cell is executed in one shared namespace, as a kernel would; when a cell ends
with an expression, its value is "displayed" the way Jupyter does it: through
``_repr_markdown_`` and ``_repr_svg_`` when the object has them.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))


def run_notebook(path: Path) -> list[tuple[str, str]]:
    """Execute the code cells of ``path``; return the (mime type, text) displays."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "__main__"}
    shown: list[tuple[str, str]] = []
    for n, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse(source, filename=f"{path.name}[{n}]")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"{path.name}[{n}]", "exec", dont_inherit=True), namespace)
        if last is None:
            continue
        value = eval(
            compile(ast.Expression(last.value), f"{path.name}[{n}]", "eval", dont_inherit=True),
            namespace,
        )
        for method, mime in (("_repr_markdown_", "text/markdown"), ("_repr_svg_", "image/svg+xml")):
            render = getattr(value, method, None)
            if render is not None:
                text = render()
                assert isinstance(text, str) and text, f"cell {n}: {method} returned {text!r}"
                shown.append((mime, text))
    return shown


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS, "docs/notebooks/ should hold at least one example notebook"


def test_notebooks_run_and_render(tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)  # a cell that writes a file writes it here
    try:
        for path in NOTEBOOKS:
            shown = run_notebook(path)
            kinds = {mime for mime, _ in shown}
            assert {"text/markdown", "image/svg+xml"} <= kinds, f"{path.name} shows {kinds}"
            for mime, text in shown:
                if mime == "image/svg+xml":
                    assert "<svg" in text
    finally:
        os.chdir(cwd)


def test_notebook_cells_have_no_stored_outputs() -> None:
    # Outputs are produced by running; storing them would let the file go stale.
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            assert not cell.get("outputs"), f"{path.name}: clear the outputs before committing"
