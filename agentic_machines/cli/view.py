"""``agentic-machines view TARGET``: the interactive graph view, one HTML file.

Explores the target as ``diagram`` does (``--depth``, ``--max-states``, ``-c``) and writes
:func:`~agentic_machines.drawing.interactive.graph_html` to ``-o FILE`` (default
``NAME-view.html``); ``--counterexample TRACE`` (a file of ``test --save`` or ``run
--save``) opens with that run's path highlighted; ``--serve`` then serves the file on
127.0.0.1 until Ctrl-C (``--port``, default a free one). ``diagram --format html`` writes
the same page.

>>> import tempfile, os
>>> from agentic_machines.cli.commands import main
>>> out = os.path.join(tempfile.mkdtemp(), "f.html")
>>> main(["view", "f2-mul", "-o", out])  # doctest: +ELLIPSIS
wrote .../f.html: 2 states, 3 edges, depth 0
0
>>> open(out).read(15)
'<!DOCTYPE html>'
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._text import counted
from ._args import (
    add_bound_arguments,
    add_isolation_arguments,
    add_target_arguments,
    agent_options,
    completions_for,
    file_stem,
    graph_counts,
    machine_with_isolation,
)

__all__ = ["add_parser", "view_command", "write_view", "serving"]


def add_parser(sub: Any) -> None:
    """Register ``view`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "view",
        help="the interactive graph view: one self-contained HTML file (pan, zoom, click, search)",
        description="Explore a machine and write its graph as one self-contained HTML page "
        "(no network): pan and zoom, click a state for its prompt, completions and path, "
        "search prompts, filter edges, collapse subtrees, group states; a counterexample "
        "opens highlighted. --serve serves it on 127.0.0.1.",
    )
    add_target_arguments(p)
    p.add_argument("-o", "--output", metavar="FILE", help="the page (default: NAME-view.html)")
    p.add_argument(
        "--counterexample",
        metavar="TRACE",
        help="a trace file (test --save, run --save) whose path opens highlighted",
    )
    p.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 until Ctrl-C")
    p.add_argument("--port", type=int, default=0, help="the port for --serve (default: a free one)")
    add_bound_arguments(p)
    add_isolation_arguments(p, "the completions' code")
    p.set_defaults(func=view_command)


def view_command(args: argparse.Namespace) -> int:
    """Handle ``view``: write the page, and serve it with ``--serve``."""
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    graph = entry.explore(
        machine,
        depth=args.depth,
        max_states=args.max_states,
        completions=completions_for(args, machine, entry.name),
    )
    out = Path(args.output or f"{file_stem(entry.name)}-view.html")
    write_view(
        graph,
        out,
        f"{entry.name} ({entry.kind})",
        args.counterexample,
        entry.highlights(machine, graph),
    )
    stats = graph.graph["stats"]
    print(f"wrote {out}: {graph_counts(stats)}")
    if args.serve:
        with serving(out, args.port) as url:
            print(f"serving {url} (Ctrl-C stops)", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                _forever()
    return 0


def write_view(graph: Any, out: Path, title: str, trace_path: str | None, marks: dict) -> None:
    """Write the page for ``graph``; with ``trace_path``, the trace's run highlighted."""
    from ..drawing.interactive import path_of, write_html  # loaded when the verb runs

    path: list = []
    path_title = "counterexample"
    if trace_path is not None:
        from ..runtime.run import Trace  # loaded when the verb runs

        trace = Trace.load(trace_path)
        start = trace.start if _in(graph, trace.start) else None
        path = path_of(graph, trace.completions, start)
        shown = len(path) - 1
        steps = counted(len(trace.steps), "step")
        path_title = f"counterexample ({Path(trace_path).name}: {shown} of {steps} in this graph)"
    write_html(graph, out, title=title, path=path, path_title=path_title, **marks)


def _in(graph: Any, state: Any) -> bool:
    try:
        return state in graph
    except TypeError:  # a state read from a file may not hash
        return False


@contextlib.contextmanager
def serving(page: Path, port: int = 0) -> Iterator[str]:
    """Serve ``page``'s folder on 127.0.0.1 while the block runs; yields the page's URL."""
    import threading  # loaded when asked

    handler = functools.partial(_Quiet, directory=str(page.resolve().parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


def _forever() -> None:
    import time  # loaded when asked

    while True:
        time.sleep(3600)
