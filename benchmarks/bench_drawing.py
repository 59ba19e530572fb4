"""Drawing a state diagram against rendering the same finished picture.

Run: ``python benchmarks/bench_drawing.py``. What a user waits for when drawing a
picture (``agentic-machines diagram``, ``draw(graph, "g.png")``, the gallery) is
``draw`` and the PNG save. Its floor: matplotlib rendering the same picture, already
laid out, to the same PNG (one ``savefig`` at the gallery's dpi, cropped to what is
drawn, of a figure ``draw`` made before the round). Both give the same bytes (checked
below); the ratio (draw and save ÷ save alone) is the cost of laying the picture out:
the layout and its fit to a slide, the arrows cut at the node rims, each edge label's
search for a place clear of the other labels, nodes and edges. Three graphs:

- ``f2-mul``: the F2 fixture, every state a root, one marked state's successors (a
  small picture: 4 states, the legend table beside it);
- ``wide``: a transcript agent with five growing actions and a stop, explored two steps
  deep (31 states, the depth-2 row summarised into 5 drawn states and a "more" node;
  the picture of ``tests/test_diagram_summary.py``'s shared fixture);
- ``thread-depth3``: THREAD three steps deep, the gallery's largest picture (21 states,
  the table under the graph).

The two run alternately, 5 rounds each (:mod:`_timing`); the ratio is the median of the
per-round ratios, in CPU time (drawing is one thread, and the machine these run on is
shared). Goal: at most 3x, i.e. laying a picture out costs at most two renderings of it.

Before and after (2026-12-06, load 5-7 on 2 cores, CPU time): on main before this round,
wide 23.5x (draw and save 7.2 s), thread-depth3 3.3x, f2-mul 2.0x: the label placer asked
every arrow for its path (which matplotlib recomputes, cutting it at both ends) for each of
up to 161 trial boxes per label. With the edges' paths measured once per placement
(:class:`agentic_machines.drawing.geometry.EdgePaths`): 2.6x (0.76 s), 1.6x, 1.8x. With
the two whole-figure draws per picture also gone (the edges alone drawn before their
labels are placed; the legend's box asked for, not drawn): 2.5x (0.70 s), 1.5x, 1.4x.
With each label's obstacles read as floats once (``labels.overlap_of``), in one run
beside main before this round (load 7-10): wide 2.35x (0.65 s) against 22.0x (6.7 s),
thread-depth3 1.50x against 3.22x, f2-mul 1.61x against 1.79x.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines import HALT, FunctionMachine  # noqa: E402
from agentic_machines.architectures.catalog import resolve  # noqa: E402
from agentic_machines.drawing.diagrams import draw  # noqa: E402
from agentic_machines.drawing.page import DPI  # noqa: E402
from agentic_machines.fixtures import fixture  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

RUNS = 5


def wide() -> FunctionMachine:
    """Five actions that grow the transcript and one that ends it."""
    actions = ["look", "ask", "check", "wait", "retry", "stop"]
    return FunctionMachine(
        prompt=lambda s: "You help a customer. Actions so far: " + s,
        harness=lambda s, c: HALT if c == "stop" else f"{s}|{c}",
        completions=actions,
        initial="start",
        name="wide",
    )


def cases() -> list[tuple[str, object, dict]]:
    """(name, explored graph, draw's marks) of each picture measured."""
    m = fixture("f2-mul")
    thread = resolve("thread")
    machine = thread.machine()
    deep = thread.explore(machine, depth=3)
    return [
        ("f2-mul", explore(m, roots=m.states), {"spe_states": [1], "successors_of": 1}),
        ("wide", explore(wide(), max_depth=2, progress=False), {}),
        ("thread-depth3", deep, {"successors_of": thread.start(machine)}),
    ]


def png(fig) -> bytes:
    """The PNG ``save_figure`` writes (the same call), in memory."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=DPI)
    return buf.getvalue()


def main() -> None:
    print(f"{'picture':<14} {'draw+save s':>11} {'save s':>7} {'ratio':>6}")
    rows = []
    for name, graph, marks in cases():
        finished = draw(graph, **marks)

        def drawn(graph=graph, marks=marks):
            fig = draw(graph, **marks)
            out = png(fig)
            fig.clear()
            return out

        full, base, ratio, (a, b) = paired(drawn, lambda f=finished: png(f), RUNS, cpu=True)
        assert a == b, f"{name}: draw's PNG differs from the finished figure's"
        print(f"{name:<14} {full:>11.3f} {base:>7.3f} {ratio:>6.2f}")
        rows.append((name, ratio))
    for name, ratio in rows:
        goal(f"{name}: draw and save ÷ save of the finished picture (CPU)", ratio, 3)


if __name__ == "__main__":
    main()
