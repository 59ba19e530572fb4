"""The diagrams gallery: every picture of ``docs/gallery.md``, written by one call.

:func:`write_gallery` writes each picture as a PNG and as Mermaid text (``.mmd``) into
one folder; ``python experiments/gallery.py`` and ``agentic-machines gallery DIR`` both
call it. The pictures (``PICTURES``, in order):

- ``fixtures``: the state diagrams of the F2 fixtures (``docs/design.md``), SPE states in gold;
- ``embedding``: an embedding drawn as two graphs with the mapping as dashed lines;
- ``fans``: the successor fan of the SPE seed state x* next to ReAct's initial state;
- ``architectures``: each architecture's explored graph with the obstruction state of
  its verdict marked (delegated to :func:`agentic_machines.cli.contrast.write_diagrams`);
- ``repl_plan``: the tree of REPLs that REPL-Plan builds for count-to-four.

Every picture is drawn by :mod:`agentic_machines.drawing.diagrams` from a graph made by
:func:`agentic_machines.runtime.explore.explore`, so the gallery shows exactly what the
toolkit computes.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     paths = write_gallery(d, only=["repl_plan"])
>>> sorted(p.name for p in paths)
['repl-plan-tree.mmd', 'repl-plan-tree.png']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..machine import HALT, TableMachine

__all__ = [
    "write_gallery",
    "PICTURES",
    "menu_and_loop",
    "fixture_pictures",
    "embedding_picture",
    "fan_pictures",
    "architecture_pictures",
    "repl_plan_picture",
]


def menu_and_loop() -> tuple[TableMachine, TableMachine]:
    """The two machines of tutorial chapter 2: ``loop`` embeds into ``menu`` twice.

    >>> menu, loop = menu_and_loop()
    >>> menu.prompt("a") == loop.prompt("q")
    True
    """
    menu = TableMachine(
        {"s0": "menu", "a": "continue?", "b": "continue?"},
        {
            ("s0", "yes"): "a",
            ("s0", "no"): "b",
            ("a", "yes"): "a",
            ("a", "no"): HALT,
            ("b", "yes"): "b",
            ("b", "no"): HALT,
        },
        initial="s0",
        name="menu",
    )
    loop = TableMachine(
        {"q": "continue?"}, {("q", "yes"): "q", ("q", "no"): HALT}, initial="q", name="loop"
    )
    return menu, loop


def fixture_pictures(out: Path) -> list[Path]:
    """``f2-add``, ``f2-mul``, ``f2-const``: every state drawn, SPE states in gold.

    The same graphs and marks as ``agentic-machines diagram f2-add`` (both go through
    :mod:`agentic_machines.cli.catalog`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in fixture_pictures(Path(d))]
    ['f2-add.png', 'f2-add.mmd', 'f2-mul.png', 'f2-mul.mmd', 'f2-const.png', 'f2-const.mmd']
    """
    from ..cli.catalog import resolve
    from .diagrams import draw, to_mermaid

    written: list[Path] = []
    for name in ("f2-add", "f2-mul", "f2-const"):
        entry = resolve(name)
        m = entry.machine()
        graph = entry.explore(m)
        marks = entry.highlights(m, graph)
        spe = sorted(marks.get("spe_states", ()))
        title = f"{name}: SPE states {spe if spe else 'none'}"
        written += _both(out, name, graph, title, draw, to_mermaid, **marks)
    return written


def embedding_picture(out: Path) -> list[Path]:
    """``loop`` embedded into ``menu`` (q ↦ a): two graphs and the mapping.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in embedding_picture(Path(d))]
    ['embedding.png', 'embedding-source.mmd', 'embedding-target.mmd']
    """
    from ..embedding import find_embeddings
    from ..runtime.explore import explore
    from .diagrams import draw_embedding, to_mermaid

    menu, loop = menu_and_loop()
    e = next(find_embeddings(loop, menu))
    source, target = explore(loop, progress=False), explore(menu, progress=False)
    png = out / "embedding.png"
    _close(
        draw_embedding(
            source, target, e.mapping, png, title=f"an embedding of loop into menu: {e.mapping}"
        )
    )
    src_mmd, tgt_mmd = out / "embedding-source.mmd", out / "embedding-target.mmd"
    src_mmd.write_text(to_mermaid(source) + "\n", encoding="utf-8")
    tgt_mmd.write_text(
        to_mermaid(target, embedding_image=list(e.mapping.values())) + "\n", encoding="utf-8"
    )
    return [png, src_mmd, tgt_mmd]


def fan_pictures(out: Path) -> list[Path]:
    """One step from the SPE seed x* and from ReAct's initial state, in one picture.

    x* is drawn with the loaders of a few sampled boundary states (any boundary state
    has one, so the real fan is every state); ReAct with its diagram alphabet. Each fan
    is written on its own, and ``fans.png`` stacks the two (x* on top: its fan is wide).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in fan_pictures(Path(d))]
    ['fan-spe.png', 'fan-spe.mmd', 'fan-react.png', 'fan-react.mmd', 'fans.png']
    """
    from ..cli.catalog import resolve
    from .diagrams import draw, to_mermaid

    written: list[Path] = []
    figures = []
    for name in ("spe", "react"):
        entry = resolve(name)
        if name == "spe":
            graph = _seed_fan(entry.machine())
        else:
            graph = entry.explore(entry.machine(), depth=1)
        start = graph.graph["start"]
        title = f"{name}: the successors of the initial state"
        fig = draw(graph, None, successors_of=start, title=title)
        figures.append(fig)
        png = out / f"fan-{name}.png"
        fig.savefig(png, format="png", bbox_inches="tight", dpi=120)
        mmd = out / f"fan-{name}.mmd"
        mmd.write_text(to_mermaid(graph, successors_of=start) + "\n", encoding="utf-8")
        written += [png, mmd]
    side = out / "fans.png"
    _side_by_side([p for p in written if p.suffix == ".png"], side)
    for fig in figures:
        _close(fig)
    return written + [side]


def _seed_fan(machine: Any, width: int = 8) -> Any:
    """x* and one step: the loaders of ``width`` sampled boundary states, x*'s own, a halt."""
    from ..architectures import spe
    from ..cek import loader
    from ..runtime.explore import explore

    seed = spe.initial
    targets = list(dict.fromkeys(s for s in spe.sample_states(depth=1) if s != seed))[:width]
    completions = [loader(t) for t in targets] + [loader(seed), '"done"']
    return explore(machine, seed, completions, max_depth=1, progress=False)


def architecture_pictures(out: Path) -> list[Path]:
    """Each architecture's explored graph, the obstruction state of its verdict marked.

    Drawn by :func:`agentic_machines.cli.contrast.write_diagrams` (the picture of
    ``agentic-machines diagram NAME``), deep enough to reach the obstruction state: at
    least two steps, more when the obstruction lies deeper (REPL-Plan's is three
    completions away).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     sorted(p.name for p in architecture_pictures(Path(d)) if p.suffix == ".png")
    ['react.png', 'repl_plan.png', 'rlm.png', 'spe.png', 'thread.png']
    """
    from ..architectures import ARCHITECTURES
    from ..cli.contrast import write_diagrams

    written: list[Path] = []
    for name, module in ARCHITECTURES.items():
        obstruction = module.analysis().obstruction
        steps = len(getattr(getattr(obstruction, "state", None), "completions", ()))
        written += write_diagrams(out, [name], depth=max(2, steps))
    return written


def repl_tree(result: Any) -> Any:
    """The tree of REPLs of a finished REPL-Plan episode, as a graph :mod:`.diagrams` draws.

    One node per REPL (its ``prompt`` attribute is the REPL's description, ``depth`` its
    nesting level), one edge from a REPL to each child it spawned, injected or reused,
    labelled by every call the child served (its ``#CALL#`` lines, in order).

    >>> from agentic_machines.architectures import repl_plan as rp
    >>> from agentic_machines.architectures.environments import CountEnv
    >>> g = repl_tree(rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4)))
    >>> list(g), g.edges["main", "count_even"]["completions"]
    (['main', 'count_even'], ['count_even(2)', 'count_even(4)'])
    """
    import networkx as nx

    from ..architectures.repl_plan import MAIN

    graph = nx.DiGraph(name="REPL-Plan: the tree of REPLs", start=MAIN, roots=[MAIN])
    graph.add_node(
        MAIN, kind="state", prompt=result.repls[MAIN].description, depth=0, expanded=True
    )
    for entry in result.trace:
        if entry.kind in ("spawned", "injected", "reused"):
            child = entry.text.split(":", 1)[0].strip()
            if child not in graph:
                record = result.repls[child]
                depth = graph.nodes[entry.repl]["depth"] + 1
                graph.add_node(
                    child, kind="state", prompt=record.description, depth=depth, expanded=True
                )
            if not graph.has_edge(entry.repl, child):
                calls = [
                    line[len("#CALL# ") :]
                    for line in result.repls[child].transcript.splitlines()
                    if line.startswith("#CALL# ")
                ]
                graph.add_edge(entry.repl, child, completions=calls, label=", ".join(calls))
    return graph


def repl_plan_picture(out: Path) -> list[Path]:
    """The tree of REPLs REPL-Plan builds for count-to-four, with the actions it took.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in repl_plan_picture(Path(d))]
    ['repl-plan-tree.png', 'repl-plan-tree.mmd']
    """
    from ..architectures import repl_plan as rp
    from ..architectures.environments import CountEnv
    from .diagrams import draw, to_mermaid

    result = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
    graph = repl_tree(result)
    title = (
        f"count to four: actions {' '.join(result.actions)}, {result.model_calls} model calls, "
        f"status {result.status}"
    )
    return _both(out, "repl-plan-tree", graph, title, draw, to_mermaid)


PICTURES: dict[str, Callable[[Path], list[Path]]] = {
    "fixtures": fixture_pictures,
    "embedding": embedding_picture,
    "fans": fan_pictures,
    "architectures": architecture_pictures,
    "repl_plan": repl_plan_picture,
}
"""Picture group name -> the function that writes it into a folder."""


def write_gallery(
    out_dir: str | Path, *, only: Iterable[str] | None = None, verbose: bool = False
) -> list[Path]:
    """Write every gallery picture (PNG and Mermaid) into ``out_dir``; return the paths.

    ``only`` restricts to some of the groups in ``PICTURES`` (for quick tests); an
    unknown group name is refused before anything is drawn.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write_gallery(d, only=["embedding"])]
    ['embedding.png', 'embedding-source.mmd', 'embedding-target.mmd']
    """
    names = list(PICTURES) if only is None else list(only)
    unknown = [n for n in names if n not in PICTURES]
    if unknown:
        raise InvalidArgument(f"unknown gallery picture(s) {unknown}; choose from {list(PICTURES)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in names:
        began = time.perf_counter()
        paths = PICTURES[name](out)
        if verbose:
            print(f"{name}: {len(paths)} file(s) in {time.perf_counter() - began:.1f}s")
        written += paths
    return written


# ------------------------------------------------------------------------ helpers
def _both(
    out: Path, stem: str, graph: Any, title: str, draw: Callable, to_mermaid: Callable, **marks: Any
) -> list[Path]:
    png, mmd = out / f"{stem}.png", out / f"{stem}.mmd"
    _close(draw(graph, png, title=title, **marks))
    mmd.write_text(to_mermaid(graph, **marks) + "\n", encoding="utf-8")
    return [png, mmd]


def _side_by_side(pngs: list[Path], path: Path) -> None:
    """Stack pictures one above the other (the fans are wide), each at its own size."""
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    images = [imread(p) for p in pngs]
    width = max(img.shape[1] for img in images) / 120
    height = sum(img.shape[0] for img in images) / 120
    fig = Figure(figsize=(width, height))
    grid = fig.add_gridspec(len(images), 1, height_ratios=[img.shape[0] for img in images])
    for i, img in enumerate(images):
        ax = fig.add_subplot(grid[i, 0])
        ax.imshow(img)
        ax.axis("off")
    fig.savefig(path, format="png", bbox_inches="tight", dpi=120)
    _close(fig)


def _close(fig: Any) -> None:
    clear = getattr(fig, "clear", None)
    if callable(clear):
        clear()
