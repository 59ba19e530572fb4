"""The contrast table of the architectures: print it and write docs/contrast.md.

Run from the repository root:

    python experiments/contrast.py            # prints the table, writes docs/contrast.md
    python experiments/contrast.py --no-write # prints only

Every row is computed now, by the checks themselves (agentic_machines.drawing.contrast); nothing
in the table is typed by hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agentic_machines.architectures import ARCHITECTURES
from agentic_machines.drawing.contrast import (
    analyses_of,
    architecture_graph,
    contrast_rows,
    render_table,
    to_markdown,
)
from agentic_machines.drawing.diagrams import to_mermaid

DOC = Path(__file__).resolve().parent.parent / "docs" / "contrast.md"

INTRO = """\
# The contrast: which agent architectures have an SPE initial state?

Each architecture of `agentic_machines.architectures` is a faithful, small agentic
machine on a toy task (see each module's docstring for what is faithful and what is
simplified). For each we ask whether its initial state x is an SPE state: can every state
of the machine be *loaded* from x by one completion, with the identity embedding?

- **SPE** (the CEK evaluator with the seed x*) says yes: a loader completion is computed
  for every sampled boundary state and checked, `h(x*, loader(β)) == β` (method
  `sampled`; the proof for all β is in `proofs/`).
- **ReAct, RLM, THREAD** (and REPL-Plan, when present) say no, by fact F2: each harness
  has a successor-prompt invariant, proved in `proofs/` and property-tested on the listed
  number of seeded completions (valid actions, malformed actions, random text, control
  words, huge strings). A concrete state reached from x by a short script has a prompt
  that the invariant rules out for every successor of x, so no successor can be its image.
  These rows read **refuted (conditional)**: the invariant is proved in `proofs/` for the
  machine that `machine()` builds (the harness code is fingerprinted, so a changed harness
  gets *undecided* instead), but the toolkit itself can only test it on sampled
  completions, never on every string. The refutation holds *given* that premise.
- **Spell** says yes too: its loader rebuilds a state's waiting frames as source, and a
  child session waiting inside its own computation as a child program run by
  `!spell-eval`, in a fresh environment as at a turn boundary (method `sampled` on the
  states reached by the sample completions, nested children counted; the proof for every
  state is `proofs/spell_loader.md`). The naive harness that re-runs the whole program
  is refuted by F2.
- **Reflexion, PAL, CodeAct, ADaPT, Tree of Thoughts and AdaPlanner** are refuted the
  same way, by F2 with a proved invariant (PAL's is that no completion leads to a state
  at all; Tree of Thoughts' row is BFS, and DFS is refuted alike). Their rows also fill
  the column **embeds ReAct**: does ReAct's machine, on the same task, embed into the
  architecture? The cell gives the verdict, its method and its certificate (an embedding
  checked on sampled states, or an obstruction with the proof it rests on); `—` means
  the question is not examined for that row.
- The last rows show the other side of the theorem: what the SPE seed completion-generates
  (machines realized in the evaluator's language) and a state *inside* the SPE machine that
  is not an SPE state (conditional too: the harness is constant there, proved in
  `proofs/spe_theorem.md` and tested on sampled completions).

This page is written by `python experiments/contrast.py`; the table below is its output.

"""

CHECK = """
## Check it yourself

```python
from agentic_machines.drawing.contrast import contrast_rows, render_table

rows = contrast_rows()
status = {r.name: r.status for r in rows if r.question == "initial state SPE?"}
assert status["spe"] == "holds" and status["spell"] == "holds"
assert all(s == "refuted" for name, s in status.items() if name not in ("spe", "spell"))
zoo = ("reflexion", "pal", "codeact", "adapt", "tot", "adaplanner")
embeds = {r.name: r.embeds_react for r in rows if r.name in zoo}
assert all(cell.startswith("refuted") for cell in embeds.values()), embeds
print(render_table(rows))
```
"""


def diagrams(rows: list) -> str:
    """One Mermaid graph per architecture: the initial state, its successors (green) and
    the obstruction state (red), explored to depth 2 over its diagram alphabet. The
    obstruction comes from the analysis the table's ``rows`` already ran (the costliest
    part of a row), not from a second run of it."""
    analyses = analyses_of(rows)
    out = [
        "\n## The explored graphs\n",
        "Each graph starts at the initial state and follows a few completions per prompt "
        "(the module's `diagram_completions`, which include the scripted solution). The "
        "initial state's successors are green; the obstruction state named in the table is "
        "red. `agentic-machines demo` writes the same graphs as PNG.\n",
    ]
    for name in ARCHITECTURES:
        graph, marks = architecture_graph(name, analysis=analyses.get(name))
        out.append(f"\n### {name}\n\n```mermaid\n{to_mermaid(graph, **marks)}\n```\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-write", action="store_true", help="print the table without writing docs/contrast.md"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DOC,
        help="where to write the Markdown (default: docs/contrast.md)",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = contrast_rows()
    print(render_table(rows))
    print(f"\n{len(rows)} rows in {time.perf_counter() - start:.1f} s")
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            INTRO + to_markdown(rows) + "\n" + diagrams(rows) + CHECK, encoding="utf-8"
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
