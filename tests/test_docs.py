"""Every example in docs/ and proofs/ runs, and every printed output still matches.

Conventions for Markdown files (see docs/CONTRIBUTING-docs.md):
- ```pycon blocks (and any block with ``>>>`` prompts) run as doctests: the output shown
  after each prompt is compared with what the code prints now;
- ```python blocks run as plain code, top to bottom, in one namespace per file that the
  ``pycon`` blocks share too;
- a block fenced as ```python no-run is shown but not executed (use sparingly).
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md"] + sorted(
    p for d in ("docs", "proofs") for p in (ROOT / d).rglob("*.md")
)
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def code_blocks(text: str) -> list[tuple[str, str, int]]:
    """The fenced code blocks of a Markdown text: (info string, body, first line)."""
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start(2)) + 1
        out.append((m.group(1).strip(), m.group(2), line))
    return out


def run_markdown(path: Path, tmp_path: Path) -> int:
    """Run every Python block of ``path`` in order; return how many ran."""
    namespace: dict = {"__name__": f"doc:{path.name}"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    ran = 0
    cwd = os.getcwd()
    os.chdir(tmp_path)  # examples that write files write them here, not into the checkout
    try:
        for info, body, line in code_blocks(path.read_text(encoding="utf-8")):
            lang = info.split()[0] if info else ""
            if lang not in ("python", "py", "pycon") or "no-run" in info:
                continue
            name = f"{path.relative_to(ROOT)}:{line}"
            if lang == "pycon" or ">>>" in body:
                test = parser.get_doctest(body, namespace, name, str(path), line)
                result = runner.run(test, clear_globs=False)
                namespace.update(test.globs)  # DocTest copies its globals: carry names forward
                assert result.failed == 0, f"doctest block at {name} failed (see output above)"
            else:
                exec(
                    compile(body, name, "exec", dont_inherit=True), namespace
                )  # run as a reader would
            ran += 1
    finally:
        os.chdir(cwd)
    return ran


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_markdown_examples_run(path: Path, tmp_path: Path) -> None:
    # a page whose examples use a framework (an optional extra) runs only with it installed
    from agentic_machines.adapters import EXTRAS, missing_extra

    for module in re.findall(r"^(?:>>> )?(?:from|import) (\w+)", path.read_text("utf-8"), re.M):
        if module in EXTRAS and importlib.util.find_spec(module) is None:
            pytest.skip(f"{path.name} {missing_extra(module)}")
    run_markdown(path, tmp_path)


def test_every_proof_has_an_executable_check() -> None:
    for path in sorted((ROOT / "proofs").glob("*.md")):
        blocks = [
            b
            for b in code_blocks(path.read_text(encoding="utf-8"))
            if b[0].split()[:1] in (["python"], ["pycon"])
        ]
        assert blocks, f"{path.name} has no executable check; end it with a python or pycon block"
