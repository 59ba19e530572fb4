"""``agentic-machines demo``: the main job, section by section.

:data:`SECTIONS` lists the parts of the demo in order; each is a function
``section(out_dir, stream)`` that prints its part and writes its files into ``out_dir``.
To add a part, write such a function and append it to the list.

>>> SECTIONS[0].__name__
'f2_fixtures'
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..architectures import ARCHITECTURES
from ..architectures.catalog import resolve
from ..fixtures import FIXTURES
from ..generation import completion_generates, is_spe_state

__all__ = ["demo", "SECTIONS", "f2_fixtures", "contrast"]

Section = Callable[[Path, TextIO], None]


def f2_fixtures(out_dir: Path, stream: TextIO) -> None:
    """The F2 fixtures (``docs/design.md``): every state's SPE verdict, and a diagram per fixture.

    >>> import io, tempfile
    >>> out = io.StringIO()
    >>> f2_fixtures(Path(tempfile.mkdtemp()), out)
    >>> "state 1: holds" in out.getvalue()
    True
    """
    from ..drawing.diagrams import draw, to_mermaid  # loaded when the verb runs

    print("F2 fixtures: which states are SPE states?", file=stream)
    for name in FIXTURES:
        entry = resolve(name)
        machine = entry.machine()
        print(f"\n{name}:", file=stream)
        for state in machine.states:
            verdict = is_spe_state(machine, state)
            print(
                f"  state {state!r}: {verdict.status:<9} {verdict.method:<11} {verdict.certificate}",
                file=stream,
            )
        graph = entry.explore(machine)
        marks = entry.highlights(machine, graph)
        spe = sorted(marks.get("spe_states", ()), key=repr)
        print(
            f"  SPE states: {{{', '.join(map(repr, spe))}}}" if spe else "  SPE states: none",
            file=stream,
        )
        png, mmd = out_dir / f"{name}.png", out_dir / f"{name}.mmd"
        fig = draw(graph, png, title=f"{name}: SPE states in gold", **marks)
        fig.clear()  # made without pyplot: clearing frees it now rather than at collection
        mmd.write_text(to_mermaid(graph, **marks) + "\n", encoding="utf-8")
        print(f"  diagrams: {png}, {mmd}", file=stream)
    verdict = completion_generates(resolve("diverge1").machine(), 0, resolve("halt1").machine())
    print(f"\ndiverge1 from 0 completion-generates halt1? {verdict.status}: {verdict}", file=stream)


def contrast(out_dir: Path, stream: TextIO) -> None:
    """The contrast of the architectures: the table with its certificates, and each
    architecture's explored diagram (initial state, its successors, obstruction state).

    The table is also written as ``contrast.md`` into ``out_dir``.
    """
    from ..drawing.contrast import (  # loaded when the verb runs
        analyses_of,
        contrast_rows,
        render_table,
        to_markdown,
        write_diagrams,
    )

    print(
        "The contrast: is each architecture's initial state an SPE state?\n",
        file=stream,
    )
    rows = contrast_rows()
    print(render_table(rows), file=stream)
    if any(r.conditional for r in rows):
        print(
            "\n  (conditional): refuted given a premise proved in proofs/ and tested on the "
            "completions counted; the toolkit cannot check it for every string.",
            file=stream,
        )
    (out_dir / "contrast.md").write_text(to_markdown(rows) + "\n", encoding="utf-8")
    # Rows of machines outside the architecture registry (Spell's) have no diagram here.
    # The diagrams mark each obstruction state the rows' analyses found: given, not rerun.
    paths = write_diagrams(
        out_dir,
        dict.fromkeys(r.name for r in rows if r.name in ARCHITECTURES),
        analyses=analyses_of(rows),
    )
    print(f"\n  table: {out_dir / 'contrast.md'}", file=stream)
    print(f"  diagrams: {', '.join(p.name for p in paths)}", file=stream)


SECTIONS: list[Section] = [f2_fixtures, contrast]
"""The parts of the demo, in order."""


def demo(out_dir: str | Path = "demo-out", stream: TextIO = sys.stdout) -> int:
    """Run every section of :data:`SECTIONS`, writing files into ``out_dir``; return 0.

    ``tests/test_cli.py`` runs it whole (through ``agentic-machines demo``).
    """
    began = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for i, section in enumerate(SECTIONS):
        if i:
            print("\n" + "-" * 72 + "\n", file=stream)
        section(out, stream)
    print(
        f"\nDiagrams (PNG and Mermaid) are in {out.resolve()}. Done in {time.perf_counter() - began:.1f} s.",
        file=stream,
    )
    return 0
