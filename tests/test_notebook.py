"""The example notebook: it runs, its committed outputs are what the code gives now, and
each output shows what it should in JupyterLab.

The cells are executed here without a kernel, in one shared namespace as a kernel would
run them; a cell ending with an expression is formatted by IPython's own
``DisplayFormatter`` (what a kernel sends to the front end). JupyterLab then shows one
MIME type per output, the first of ``JUPYTERLAB_ORDER`` it finds: Markdown beats SVG, so a
machine must not offer both (see ``agentic_machines.drawing.display``).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from agentic_machines.drawing.display import shown_by_jupyterlab
from agentic_machines.machine import AgenticMachine

DisplayFormatter = pytest.importorskip("IPython.core.formatters").DisplayFormatter

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))


def run_notebook(path: Path) -> list[dict]:
    """Execute the code cells of ``path``; per code cell, its printed text and its
    displayed value: ``{"stdout": str, "bundle": dict | None, "value": object}``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "__main__"}
    formatter = DisplayFormatter()
    results = []
    for n, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse(source, filename=f"{path.name}[{n}]")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        out = io.StringIO()
        value = None
        with contextlib.redirect_stdout(out):
            exec(compile(tree, f"{path.name}[{n}]", "exec", dont_inherit=True), namespace)
            if last is not None:
                code = compile(
                    ast.Expression(last.value), f"{path.name}[{n}]", "eval", dont_inherit=True
                )
                value = eval(code, namespace)
        bundle = formatter.format(value)[0] if value is not None else None
        results.append({"stdout": out.getvalue(), "bundle": bundle, "value": value})
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[Path, list[dict]]:
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("notebook"))  # a cell that writes a file writes here
    try:
        return {path: run_notebook(path) for path in NOTEBOOKS}
    finally:
        os.chdir(cwd)


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS, "docs/notebooks/ should hold at least one example notebook"


def test_jupyterlab_shows_each_machine_as_its_diagram_and_tables_as_markdown(runs) -> None:
    for path, cells in runs.items():
        shown = []
        for n, cell in enumerate(cells):
            if cell["bundle"] is None:
                continue
            mime = shown_by_jupyterlab(cell["bundle"])
            shown.append(mime)
            if isinstance(cell["value"], AgenticMachine):
                assert mime == "image/svg+xml", f"{path.name} cell {n}: JupyterLab shows {mime}"
                assert "<svg" in cell["bundle"]["image/svg+xml"]
        assert {"text/markdown", "image/svg+xml"} <= set(shown), f"{path.name} shows {shown}"


def test_the_committed_outputs_are_what_the_notebook_gives_now(runs) -> None:
    for path, cells in runs.items():
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        stale = f"{path.name} has stale outputs: run python experiments/notebook.py"
        for n, (cell, now) in enumerate(zip(code, cells)):
            outputs = cell.get("outputs", [])
            printed = "".join("".join(o["text"]) for o in outputs if o["output_type"] == "stream")
            assert printed == now["stdout"], f"{stale} (cell {n}: printed text)"
            results = [o for o in outputs if o["output_type"] == "execute_result"]
            if now["bundle"] is None:
                assert not results, f"{stale} (cell {n})"
                continue
            assert len(results) == 1, f"{stale} (cell {n}: no result stored)"
            data = {k: "".join(v) for k, v in results[0]["data"].items()}
            assert set(data) == set(now["bundle"]), f"{stale} (cell {n}: MIME types)"
            for mime, text in data.items():  # SVGs too: fixed ids, no date
                assert text == now["bundle"][mime], f"{stale} (cell {n}: {mime})"
