"""The trace writer: what a trace file costs a run, and how big it grows.

    python benchmarks/bench_trace.py

1. **Writer cost.** A 300-step run of a cheap machine with ``path=`` minus the same run
   without a file is the cost the trace adds. The floor it is compared with: opening the
   file, writing its own lines (already encoded, read back from the file) with one
   ``os.write`` each in a plain loop, and closing it. Goal ≤ 2x: encoding a line (the
   prompt delta found, the step's JSON built and encoded) costs at most as much again as
   the write itself. The three run alternately in one process, 41 rounds; the ratio is the
   median of the per-round ratios. The goal row is in CPU time (user + system, so the
   kernel's share of each write counts); the wall-time ratio is printed beside it: on a
   machine with more runnable processes than cores, wall time mostly measures the
   scheduler (``benchmarks/_timing.py``).
   The machine's prompt grows like ReAct's (a 1 KB preamble, about 60 characters a step)
   and, like ReAct's program, it builds each prompt as a new string (the previous one plus
   the step's text), so both runs pay for the prompt and the writer finds it where a real
   run leaves it.
   Information rows, to show where the floor is: the same lines written *inside* the run
   (a model that makes the step's ``os.write`` of its already-encoded line, against the
   same model without it), divided by the plain loop; and the cost a trace adds divided
   by those in-run writes.

   **Where the floor is** (issue 25 item 5; CPU time, load average 7–11 on 2 cores,
   2026-12-01). Goal row 2.2–2.5x in six runs (2.3–2.7x before this round's change, A/B).
   The write alone, made once a step between the model's and the harness's work, costs
   1.4–1.5x the same write in a tight loop (the kernel's write path and the file's pages
   are cold again each time): the information rows read 1.37x, 1.41x, 1.52x, and the
   trace's cost ÷ those in-run writes 1.57x, 1.61x, 1.64x. So ≤ 2x leaves the encoding
   half a write (about 1.3 µs here), and encoding takes about one write. Per step inside
   the run (stages of the writer added one by one, writing to ``/dev/null``, medians of
   41 alternating rounds): calling ``write(step)`` 0.4–0.7 µs; finding the prompt delta
   (``startswith`` of the previous prompt, about 10 KB, O(prompt) in C) +0.3–0.7 µs;
   slicing and escaping the new text +0.2–0.7 µs; escaping the completion, the line's
   f-string (four ints and seven strings), ``encode`` and the bookkeeping +1.5–2 µs;
   the ``os.write`` to ``/dev/null`` 0.65 µs. Each is one C call or a few bytecodes:
   a generic ``json`` encoder is slower (2–4x the f-string for the same dict, with the
   C encoder made once), ``%`` formatting too (1.3x), and skipping the generality
   (state and outcome kinds, the clock) saved nothing measurable. What this round
   changed: the step writer is a closure (its state in cells, ``os.write`` bound once),
   an int or str outcome is encoded once and reused as the next line's state, and the
   file is a bare descriptor (``_files.open_output_fd``; a file object added an
   ``fstat``, an ``isatty`` and a flush per run). What would move the floor: the line
   escaped and formatted in one C call (a small compiled extension, an optional extra,
   about 2 µs of a step's work); the machine telling the writer what its prompt appended
   (a transcript machine knows it) instead of the writer finding it, O(prompt) per step;
   fewer writes are ruled out by the contract (a killed run keeps every completed step),
   and writing into a memory map by the format (a killed run would leave NUL padding).
2. **ReAct file size against run length.** ReAct runs of n = 8 ... 256 steps (Lookup
   actions on the toy wiki); the file size is fitted to a + b·n and to a + b·n + c·n².
   The goal: the bytes each added step costs stay the same from one doubling of n to the
   next (ratio ≤ 1.1; a quadratic file doubles them).
   Before prompt deltas every line held the whole transcript so far: quadratic.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, rounds  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402

from agentic_machines import AgenticMachine, run  # noqa: E402


class Transcript(AgenticMachine):
    """State n; the prompt is a growing transcript (a header and one line per step)."""

    name = "transcript"
    initial = 0

    def __init__(self, steps: int) -> None:
        self.steps = steps
        # A ReAct-sized transcript: a 1 KB preamble, then about 60 characters a step.
        self.lines = ["You are a counter. Answer 'next'.\n" * 30] + [
            f"Thought {i}: the count is {i}.\nAction {i}: next\nObservation {i}: ok\n"
            for i in range(steps)
        ]
        self.texts = ["".join(self.lines[: i + 1]) for i in range(steps)]

    def prompt(self, state: int) -> str:
        # A new string each step, the previous transcript plus this step's line, as a
        # ReAct program builds it (texts[] only saves building the previous one again).
        return self.texts[state - 1] + self.lines[state] if state else self.lines[0]

    def harness(self, state: int, completion: str) -> object:
        return state + 1 if state + 1 < self.steps else "done"


class _LineModel:
    """Answers "next"; with a descriptor, first writes the step's line, already encoded.

    Run with the same machine and no ``path=``, it is the run doing the file's own writes
    in the run's place (one ``os.write`` a step, between the model's and the harness's
    work), with no encoding; with no descriptor, the same run without them.
    """

    def __init__(self, lines: list[bytes], fd: int | None) -> None:
        self.lines, self.fd, self.calls = lines, fd, 0

    def complete(self, prompt: str) -> str:
        if self.fd is not None:
            os.write(self.fd, self.lines[self.calls])
        self.calls += 1
        return "next"


def writer_cost(n: int, folder: str, runs: int = 41) -> tuple[float, float, float, float, float]:
    """(CPU-time ratio, wall-time ratio, CPU seconds of the plain loop per line, in-run
    writes ÷ the plain loop, the trace's cost ÷ in-run writes), the last two in CPU time.

    Every timed call writes a new file (a name of its own, removed after the round), as
    a run with ``path=`` usually does: truncating a file written a moment ago makes the
    file system flush it first (milliseconds of wall time, and CPU time that varies with
    the disk's load), which would swamp the writes compared.
    """
    machine = Transcript(n)
    script = ["next"] * n
    first = os.path.join(folder, "trace.jsonl")
    run(machine, ScriptedModel(script), max_steps=n, path=first)
    lines = Path(first).read_bytes().splitlines(keepends=True)
    made: list[str] = []
    numbers = itertools.count()

    def new_file(kind: str) -> str:
        made.append(os.path.join(folder, f"{kind}-{next(numbers)}.jsonl"))
        return made[-1]

    def plain() -> None:
        fd = os.open(new_file("plain"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            write = os.write
            for line in lines:
                write(fd, line)
        finally:
            os.close(fd)

    def in_run() -> None:
        fd = os.open(new_file("in-run"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            os.write(fd, lines[0])
            run(machine, _LineModel(lines[1:-1], fd), max_steps=n)
            os.write(fd, lines[-1])
        finally:
            os.close(fd)

    fns = [
        lambda: run(machine, ScriptedModel(script), max_steps=n),
        lambda: run(machine, ScriptedModel(script), max_steps=n, path=new_file("trace")),
        plain,
        lambda: run(machine, _LineModel(lines[1:-1], None), max_steps=n),
        in_run,
    ]
    ratios, per_line, context, over = [], 0.0, 0.0, 0.0
    for cpu in (True, False):
        (bare, traced, floor, quiet, writing), _ = rounds(fns, runs, cpu=cpu)
        ratios.append(statistics.median((t - b) / p for b, t, p in zip(bare, traced, floor)))
        if cpu:
            per_line = statistics.median(floor) / len(lines)
            writes = [w - q for q, w in zip(quiet, writing)]
            context = statistics.median(w / p for w, p in zip(writes, floor))
            over = statistics.median((t - b) / w for b, t, w in zip(bare, traced, writes))
        for name in made:  # the same lines, both ways; then the files go
            assert Path(name).read_bytes() == b"".join(lines), name
            os.remove(name)
        made.clear()
    return ratios[0], ratios[1], per_line, context, over


def react_sizes(folder: str, lengths: list[int]) -> list[tuple[int, int]]:
    from agentic_machines.architectures import react

    sizes = []
    for n in lengths:
        machine = react.machine(max_steps=n)
        comps = [f" Look again.\nAction {i + 1}: Lookup[river]" for i in range(n)]
        path = os.path.join(folder, f"react-{n}.jsonl")
        trace = run(machine, ScriptedModel(comps), max_steps=n, path=path)
        sizes.append((len(trace), os.path.getsize(path)))
    return sizes


def fit(points: list[tuple[int, int]], degree: int) -> list[float]:
    """Least squares of size on 1, n (, n²), by the normal equations (no numpy needed)."""
    rows = [[float(n) ** k for k in range(degree + 1)] for n, _ in points]
    ys = [float(s) for _, s in points]
    m = degree + 1
    a = [[sum(r[i] * r[j] for r in rows) for j in range(m)] for i in range(m)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(m)]
    for i in range(m):  # Gauss-Jordan
        p = max(range(i, m), key=lambda r: abs(a[r][i]))
        a[i], a[p], b[i], b[p] = a[p], a[i], b[p], b[i]
        for r in range(m):
            if r != i:
                f = a[r][i] / a[i][i]
                a[r] = [x - f * y for x, y in zip(a[r], a[i])]
                b[r] -= f * b[i]
    return [b[i] / a[i][i] for i in range(m)]


def main() -> None:
    folder = tempfile.mkdtemp()
    load = os.getloadavg()[0]
    ratio, wall, per_line, context, over = writer_cost(300, folder)
    print(
        f"trace writer, 300 steps: cost added ÷ plain os.write loop = {ratio:.2f}x in CPU time, "
        f"{wall:.2f}x in wall time (plain write {per_line * 1e6:.2f} µs CPU per line; "
        f"load average {load:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"  the same writes made inside the run, one a step ÷ the plain loop: {context:.2f}x; "
        f"the cost a trace adds ÷ those in-run writes: {over:.2f}x (CPU time)"
    )
    lengths = [8, 16, 32, 64, 128, 256]
    sizes = react_sizes(folder, lengths)
    print(f"{'steps':>6} {'bytes':>9} {'bytes/step':>10}")
    for n, size in sizes:
        print(f"{n:6d} {size:9d} {size / n:10.1f}")
    a, b = fit(sizes, 1)
    qa, qb, qc = fit(sizes, 2)
    largest = sizes[-1][0]
    share = abs(qc) * largest**2 / sizes[-1][1]
    print(
        f"linear fit: {a:.0f} + {b:.1f}·n bytes; quadratic term c = {qc:.4f} "
        f"({share:.1%} of the largest file)"
    )
    goal("trace writer: cost a trace adds ÷ one os.write per line, CPU time", ratio, 2)
    goal("trace writer: the same in wall time", wall, None)
    goal("trace writer: cost a trace adds ÷ its lines' os.write made inside the run", over, None)
    (n1, s1), (n2, s2), (n3, s3) = sizes[-3:]
    growth = ((s3 - s2) / (n3 - n2)) / ((s2 - s1) / (n2 - n1))
    print(f"bytes per added step, {n2}->{n3} ÷ {n1}->{n2}: {growth:.3f} (1 linear, 2 quadratic)")
    goal("ReAct trace file: bytes per added step, last doubling ÷ the one before", growth, 1.1)


if __name__ == "__main__":
    main()
