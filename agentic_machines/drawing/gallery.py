"""The diagrams gallery: every picture of ``docs/gallery.md``, written by one call.

:func:`write_gallery` writes each picture as a PNG and as Mermaid text (``.mmd``) into
one folder; ``python experiments/gallery.py`` and ``agentic-machines gallery DIR`` both
call it. The pictures (``PICTURES``, in order):

- ``fixtures``: the state diagrams of the F2 fixtures (``docs/design.md``), SPE states in gold;
- ``embedding``: an embedding drawn as two graphs with the mapping as arrows, and one
  commuting square;
- ``fans``: the successor fan of the SPE seed state x* and of ReAct's initial state;
- ``architectures``: each architecture's explored graph with the obstruction state of
  its verdict marked (the graphs of :func:`agentic_machines.drawing.contrast.architecture_graph`);
- ``deep``: THREAD three steps deep (21 states), the size a class meets first: drawn to
  fit a 16:9 slide, its legend table under the graph;
- ``repl_plan``: the tree of REPLs that REPL-Plan builds for count-to-four;
- ``rlm_depth2``: an RLM run at depth 2, the child RLM drawn inside the root's block
  that called it, the child's sub-calls inside the child's.

Every picture is drawn by :mod:`agentic_machines.drawing.diagrams` from a graph made by
:func:`agentic_machines.runtime.explore.explore`, so the gallery shows exactly what the
toolkit computes. :func:`draw_gallery` returns the figures without writing them (the
test suite measures their labels with :func:`agentic_machines.drawing.labels.label_clashes`).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     paths = write_gallery(d, only=["repl_plan"])
>>> sorted(p.name for p in paths)
['repl-plan-tree.mmd', 'repl-plan-tree.png']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from .._outcome import is_end
from .._text import counted, plural
from ..architectures import ARCHITECTURES, rlm, spe
from ..architectures import repl_plan as rp
from ..architectures.catalog import resolve
from ..architectures.environments import CountEnv
from ..architectures.repl_plan import MAIN
from ..cek import loader
from ..embedding import find_embeddings
from ..errors import InvalidArgument
from ..fixtures import menu_and_loop
from ..runtime.explore import explore
from ..runtime.local_models import ScriptedModel
from ..runtime.run import run
from .diagrams import draw, draw_embedding, to_mermaid
from .nesting import draw_nesting, nesting_mermaid

__all__ = [
    "write_gallery",
    "draw_gallery",
    "Picture",
    "REPL_LEGEND",
    "PICTURES",
    "fixture_pictures",
    "embedding_picture",
    "fan_pictures",
    "architecture_pictures",
    "repl_plan_picture",
    "rlm_depth2_picture",
    "deep_pictures",
]


@dataclass
class Picture:
    """One gallery picture: its file stem, the matplotlib figure, and its Mermaid texts
    (file name -> text). :meth:`save` writes ``<stem>.png`` and the Mermaid files."""

    stem: str
    figure: Any
    mermaid: dict[str, str] = field(default_factory=dict)

    def save(self, out: Path) -> list[Path]:
        """Write the PNG and the Mermaid files into ``out``; return their paths."""
        from .page import save_figure  # lazy: loads networkx (through labels)

        png = out / f"{self.stem}.png"
        save_figure(self.figure, png, "png")
        written = [png]
        for name, text in self.mermaid.items():
            (out / name).write_text(text + "\n", encoding="utf-8")
            written.append(out / name)
        return written


def _picture(stem: str, graph: Any, title: str, **marks: Any) -> Picture:
    legend = marks.pop("legend", None)
    fig = draw(graph, None, title=title, legend=legend, **marks)
    return Picture(stem, fig, {f"{stem}.mmd": to_mermaid(graph, **marks)})


def fixture_pictures() -> list[Picture]:
    """``f2-add``, ``f2-mul``, ``f2-const``: every state drawn, SPE states in gold.

    The same graphs and marks as ``agentic-machines diagram f2-add`` (both go through
    :mod:`agentic_machines.architectures.catalog`).

    >>> [p.stem for p in fixture_pictures()]
    ['f2-add', 'f2-mul', 'f2-const']
    """
    pictures = []
    for name in ("f2-add", "f2-mul", "f2-const"):
        entry = resolve(name)
        m = entry.machine()
        graph = entry.explore(m)
        marks = entry.highlights(m, graph)
        spe = sorted(marks.get("spe_states", ()))
        title = f"{name}: SPE states {spe if spe else 'none'}"
        pictures.append(_picture(name, graph, title, **marks))
    return pictures


def embedding_picture() -> list[Picture]:
    """``loop`` embedded into ``menu`` (q ↦ a): two graphs, the mapping as arrows, and the
    commuting square for the completion ``no``.

    >>> [(p.stem, list(p.mermaid)) for p in embedding_picture()]
    [('embedding', ['embedding-source.mmd', 'embedding-target.mmd'])]
    """
    menu, loop = menu_and_loop()
    e = next(find_embeddings(loop, menu))
    source, target = explore(loop, progress=False), explore(menu, progress=False)
    fig = draw_embedding(
        source,
        target,
        e.mapping,
        title=f"an embedding of loop into menu: {e.mapping}",
        square=("q", "no"),
    )
    return [
        Picture(
            "embedding",
            fig,
            {
                "embedding-source.mmd": to_mermaid(source),
                "embedding-target.mmd": to_mermaid(
                    target, embedding_image=list(e.mapping.values())
                ),
            },
        )
    ]


def fan_pictures() -> list[Picture]:
    """One step from the SPE seed x* and one step from ReAct's initial state.

    x* is drawn with the loaders of a few sampled boundary states (any boundary state
    has one, so the real fan is every state); ReAct with its diagram alphabet. The
    legend table beside each fan lists every successor's whole completion (for x*, the
    loader program) and how its prompt differs from the initial one.

    >>> [p.stem for p in fan_pictures()]
    ['fan-spe', 'fan-react']
    """
    pictures = []
    for name in ("spe", "react"):
        entry = resolve(name)
        if name == "spe":
            graph = _seed_fan(entry.machine())
        else:
            graph = entry.explore(entry.machine(), depth=1)
        start = graph.graph["start"]
        title = f"{name}: the successors of the initial state"
        pictures.append(_picture(f"fan-{name}", graph, title, successors_of=start))
    return pictures


def _seed_fan(machine: Any, width: int = 8) -> Any:
    """x* and one step: the loaders of ``width`` sampled boundary states, x*'s own, a halt."""
    seed = spe.initial
    targets = list(dict.fromkeys(s for s in spe.sample_states(depth=1) if s != seed))[:width]
    completions = [loader(t) for t in targets] + [loader(seed), '"done"']
    return explore(machine, seed, completions, max_depth=1, progress=False)


def architecture_pictures() -> list[Picture]:
    """Each architecture's explored graph, the obstruction state of its verdict marked.

    The graph and marks of ``agentic-machines diagram NAME``
    (:mod:`agentic_machines.architectures.catalog`), deep enough to reach the obstruction state:
    two steps, more when the obstruction lies deeper (REPL-Plan's is three completions
    away).

    >>> sorted(p.stem for p in architecture_pictures())
    ['adaplanner', 'adapt', 'codeact', 'pal', 'react', 'reflexion', 'repl_plan', 'rlm', 'spe', 'spell', 'thread', 'tot']
    """
    pictures = []
    for name, module in ARCHITECTURES.items():
        entry = resolve(name)
        machine = entry.machine()
        # The analysis runs once here (it is the slow part); the marks are those of
        # entry.highlights: the initial state's successors and the obstruction state.
        obstruction = getattr(module.analysis(), "obstruction", None)
        state = getattr(obstruction, "state", None)
        graph = entry.explore(machine, depth=max(2, len(getattr(state, "completions", ()))))
        marks: dict[str, Any] = {"successors_of": entry.start(machine)}
        if obstruction is not None and state in graph:
            marks["obstruction"] = state
        title = f"{name}: initial state, its successors" + (
            " and the obstruction state" if "obstruction" in marks else ""
        )
        pictures.append(_picture(name, graph, title, **marks))
    return pictures


def deep_pictures() -> list[Picture]:
    """THREAD explored three steps deep: 21 states, the legend table under the graph so
    that the picture fits a 16:9 slide 1920 pixels wide (:data:`.diagrams.SLIDE`).

    >>> [p.stem for p in deep_pictures()]
    ['thread-depth3']
    """
    entry = resolve("thread")
    machine = entry.machine()
    graph = entry.explore(machine, depth=3)
    states = sum(1 for n in graph if not is_end(n))
    title = f"thread, three steps deep: {states} states, the initial state's successors"
    return [_picture("thread-depth3", graph, title, successors_of=entry.start(machine))]


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

    graph = nx.DiGraph(
        name="REPL-Plan: the tree of REPLs",
        start=MAIN,
        roots=[MAIN],
        edge_heading="calls each child served (edge tags)",
        edge_noun="calls",
    )
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


REPL_LEGEND = (
    ("a REPL (green ring: main, where the task starts)", "#e8eef7", "o"),
    ("REPL → the child REPL it called", "#6b6b6b", "-"),
)
"""The tree of REPLs has its own legend: its nodes are REPLs, not machine states."""


def repl_plan_picture() -> list[Picture]:
    """The tree of REPLs REPL-Plan builds for count-to-four, with the calls it served.

    >>> [p.stem for p in repl_plan_picture()]
    ['repl-plan-tree']
    """
    result = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
    graph = repl_tree(result)
    title = (
        f"count to four: actions {' '.join(result.actions)}, {result.model_calls} model calls, "
        f"status {result.status}"
    )
    return [_picture("repl-plan-tree", graph, title, legend=list(REPL_LEGEND))]


def rlm_depth2_picture() -> list[Picture]:
    """The scripted depth-2 RLM episode (``rlm.DEPTH2_SCRIPT``) as nested blocks: the
    root's turn 2 starts a child RLM, whose turn 1 asks a batch of sub-calls.

    >>> [p.stem for p in rlm_depth2_picture()]
    ['rlm-depth2']
    """
    m = rlm.machine(max_depth=2, isolation="inline")  # the project's own scripted code
    trace = run(m, ScriptedModel(rlm.DEPTH2_SCRIPT))
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    steps = []
    for (level, summary), step in zip(
        rlm.run_levels(s.prompt for s in trace.steps), trace.steps, strict=True
    ):
        # a sub-call's box shows its answer: what returns into the caller's block
        answer = f" → {step.completion!r}" if summary.startswith("sub-call") else ""
        steps.append((level, summary + answer))
    title = (
        f"RLM at max_depth=2: {len(steps)} model calls, answer {result.answer!r} "
        f"after {result.turns} root turns"
    )
    label = "inside step {caller}'s block"
    fig = draw_nesting(steps, title=title, frame_label=label)
    return [
        Picture("rlm-depth2", fig, {"rlm-depth2.mmd": nesting_mermaid(steps, frame_label=label)})
    ]


PICTURES: dict[str, Callable[[], list[Picture]]] = {
    "fixtures": fixture_pictures,
    "embedding": embedding_picture,
    "fans": fan_pictures,
    "architectures": architecture_pictures,
    "deep": deep_pictures,
    "repl_plan": repl_plan_picture,
    "rlm_depth2": rlm_depth2_picture,
}
"""Picture group name -> the function that draws its pictures."""


def draw_gallery(only: Iterable[str] | None = None, *, verbose: bool = False) -> list[Picture]:
    """Draw every gallery picture in memory (``only``: some groups of ``PICTURES``).

    An unknown group name is refused before anything is drawn.

    >>> [p.stem for p in draw_gallery(["repl_plan"])]
    ['repl-plan-tree']
    >>> draw_gallery(["nope"])
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: unknown gallery picture ['nope']; choose from ['fixtures', 'embedding', 'fans', 'architectures', 'deep', 'repl_plan', 'rlm_depth2']
    """
    names = list(PICTURES) if only is None else list(only)
    unknown = [n for n in names if n not in PICTURES]
    if unknown:
        raise InvalidArgument(
            f"unknown gallery {plural(len(unknown), 'picture')} {unknown}; choose from {list(PICTURES)}"
        )
    pictures: list[Picture] = []
    for name in names:
        began = time.perf_counter()
        drawn = PICTURES[name]()
        if verbose:
            print(f"{name}: {counted(len(drawn), 'picture')} in {time.perf_counter() - began:.1f}s")
        pictures += drawn
    return pictures


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
    out = Path(out_dir)
    # The folder first: a path that is a file fails at once, not after a minute of drawing.
    if out.exists() and not out.is_dir():
        raise InvalidArgument(
            f"{out} is a file, not a folder; give the folder to write the gallery into "
            "(it is created if missing)"
        )
    out.mkdir(parents=True, exist_ok=True)
    pictures = draw_gallery(only, verbose=verbose)
    written: list[Path] = []
    for picture in pictures:
        written += picture.save(out)
        picture.figure.clear()  # made without pyplot: clearing frees it now
    return written
