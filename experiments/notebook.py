"""Run docs/notebooks/tour.ipynb in a Jupyter kernel and write its outputs into the file.

    python experiments/notebook.py            # needs the dev extra (nbclient, ipykernel)

The notebook is committed with its outputs so that a reader sees the pictures without
running anything; tests/test_notebook.py checks that they are what the code gives now.
The kernel imports agentic_machines from this checkout.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "notebooks" / "tour.ipynb"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else NOTEBOOK
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):  # nbformat 4.5 wants stable cell ids
        cell.setdefault("id", f"cell-{i}")
    with tempfile.TemporaryDirectory() as scratch:  # a cell that writes a file writes here
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": scratch}}
        ).execute()
    for cell in nb.cells:  # no run-dependent metadata: re-running gives the same file
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    print(f"wrote the outputs of {sum(c.cell_type == 'code' for c in nb.cells)} cells to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
