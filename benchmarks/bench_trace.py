"""The trace writer: what a trace file costs a run, and how big it grows.

    python benchmarks/bench_trace.py

1. **Writer cost.** A 300-step run of a cheap machine with ``path=`` minus the same run
   without a file is the cost the trace adds. The floor it is compared with: opening the
   file, writing its own lines (already encoded, read back from the file) with one
   ``os.write`` each in a plain loop, and closing it. Both open an empty file made before
   the round (with ``O_TRUNC``, as ``run`` opens its path): creating a file costs
   0.17-0.73 ms of CPU time here, as much as 80 to 330 of the lines' writes, and varies with
   the disk's load more than anything compared, so on both sides it would pull the ratio
   towards 1 by a share the disk decides (the same writer read 1.7x to 2.6x in one hour);
   the ``created`` row shows it in. Both sides still pay the open and the close, and
   closing a file opened with ``O_TRUNC`` after writing to it makes ext4 start writing
   it back (``auto_da_alloc``: strace shows the close taking 0.1-0.8 ms of wall time
   after the writes, 15 µs with nothing written); those fixed costs still pull the ratio
   towards 1; the ``per step added`` row removes them (the cost a trace adds to a run of
   300 steps minus that of the same run stopped at 150, ÷ the plain loops' difference,
   per round). Goal ≤ 2x: encoding a line (the prompt delta found,
   the step's JSON built and encoded) costs at most as much again as the write itself.
   They run alternately in one process, 41 rounds; the ratio is the median of the
   per-round ratios. The goal row is in CPU time (user + system, so the kernel's share of
   each write counts); the wall-time ratio is printed beside it: on a machine with more
   runnable processes than cores, wall time mostly measures the scheduler
   (``benchmarks/_timing.py``).
   The machine's prompt grows like ReAct's (a 1 KB preamble, about 60 characters a step)
   and, like ReAct's program, it builds each prompt as a new string (the previous one plus
   the step's text), so both runs pay for the prompt and the writer finds it where a real
   run leaves it.
   Information rows, to show where the floor is: the same per step added; the same with
   each call creating its file; the same lines written *inside* the run (a model that
   makes the step's ``os.write`` of its already-encoded line, against the same model
   without it), divided by the plain loop; and the cost a trace adds divided by those
   in-run writes.

   **Where the floor is** (issue 25 item 5; CPU time, 2026-12-01). Goal row on main
   before this round: 2.32x on a quiet machine, files created by each call; with the files
   made before the round, at load average 2.6-3.7 on 2 cores: 2.55x and 2.60x before
   this round's change, 2.40x and 2.42x after it (A/B in one process, 101 rounds), and
   this benchmark read 2.48x, 2.24x, 2.07x, 2.07x, 2.26x at load 1.4-3.5 (with each
   call creating its file: 2.05x, 2.12x, 1.77x, 1.90x, 1.83x; per step added, in the
   last run and one more: 2.76x, 3.02x). The writer was
   taken apart in the run (each row a ``TraceWriter`` stripped down, ratio as the goal
   row, A/B in one process, two runs of 101 rounds at load 2.6-3.7):

   ======================================================================  ===========
   what the traced run does besides the bare run                            ÷ plain loop
   ======================================================================  ===========
   a writer that does nothing: ``path=``'s branch and 300 ``write(step)``    0.11x
   + opening and closing the file with ``os.open`` (the plain loop's)      0.21x
   + ``open_output_fd`` (two ``fcntl``), the writer objects                 0.31-0.39x
   + the header and end lines                                               0.57-0.61x
   + one ``os.write`` a step of a same-sized line, already encoded          1.42-1.47x
   + the prompt delta (``startswith`` of the ~10 KB previous prompt)        1.90-1.91x
   + escaping the new text and the completion, the f-string, ``encode``     2.40-2.51x
   the writer as it is (every kind of state, outcome and clock)              2.40-2.42x
   ======================================================================  ===========

   So the floor of this design in CPython is about 2.4x here: the write made in the run
   costs about what it costs in the plain loop (0.85x of a plain line, whose share of
   the open and close is in it), and everything else a step pays is Python work the
   plain loop does not do, none of it larger than 0.5x: the call and the per-run lines
   (0.6x; the 0.2x that comes with the header and end lines is mostly the writeback
   that a close starts once the file holds data, which the plain loop pays too), the delta
   (0.45x; about half of it the ``startswith``, which grows with the prompt), escaping
   and formatting (0.5-0.6x; ``json``'s C escaper takes 4-8 ns a character in two
   passes). Deterministic counts agree (cachegrind, user-space instructions a step, the
   bare run 20.2k): the writer adds 14.8k before this round and 14.2k after it, of
   which ``json``'s escaper 2.5k, ``memcmp`` for the delta 1.5k, the eval loop 3.1k, the
   f-string's join 0.8k, int to text 0.5k, allocation 1.3k; the same writer with no
   generality at all adds about 13.7k. A generic ``json`` encoder is slower (2-4x the
   f-string for the same dict), ``%`` formatting too (1.3x), a ``str.replace`` chain
   instead of the C escaper as well (1.1-1.9x). What this round changed: the common step
   line is one f-string with fewer parts and its int outcome formatted inline, and the
   header and end lines are f-strings (``None`` and the sentinels written directly)
   instead of the generic encoder's first call in a while.
   What would move the floor: (1) the step's line in one C call. Two prototypes outside
   the project (ASCII text and int states only, else the Python writer; the same bytes
   checked): the delta test, escaping, formatting and encoding in C, the write left in
   Python, read 2.11-2.18x against 2.29-2.56x for this writer in the same runs (14.2k
   instructions a step down to 9.7k); with the write in C too (one call a step, the GIL
   released around ``write(2)``, as ``os.write`` does) 1.58x and 1.72x, where a writer
   that only writes a ready line reads 1.41x and 1.55x (5.1k instructions a step).
   That is a compiled extension (an optional extra, with this writer as its fallback
   for other text and states), which changes how the toolkit installs on a fresh
   machine; (2) the machine telling the writer what its prompt appended (a transcript
   machine knows it) instead of the writer finding it: about 0.1x here (the
   ``startswith`` of a 10 KB prompt) and O(prompt) per step for long prompts, but an
   interface change (``write(step)`` is called by the run and the linear path); (3) fewer
   writes are ruled out by the contract (a killed run keeps every completed step), and
   writing into a memory map by the format (a killed run would leave NUL padding).
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

from agentic_machines import AgenticMachine, run  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402


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


def writer_cost(n: int, folder: str, runs: int = 41) -> dict[str, float]:
    """The writer's cost against the plain loop, CPU time unless the key says wall:

    ``ratio`` (the goal) and ``wall``: the cost a trace adds ÷ the plain loop, both writing
    into an empty file made before the timing; ``created``: the same when each call creates
    its file; ``marginal``: the same per step added from ``n // 2`` steps to ``n``; ``per_line``: CPU seconds of the plain loop per line; ``context``: the in-run
    writes ÷ the plain loop; ``over``: the cost a trace adds ÷ the in-run writes.

    Every timed call writes a file of its own (removed after the round): truncating a file
    written a moment ago makes the file system flush it first (milliseconds of wall time,
    and CPU time that varies with the disk's load), which would swamp the writes compared.
    Creating a file costs 0.2-0.7 ms of CPU time here (ext4, under load), as much as 100 to
    300 of the lines' writes and varying with the disk's load more than anything compared:
    included on both sides it pulls the ratio towards 1 by a share that depends on the
    disk (1.7x to 2.5x for the same writer in one hour), so the goal row leaves it out of
    both sides (each call opens an empty file made before the round, with the same
    ``O_TRUNC``) and the ``created`` row shows it in.
    """
    machine = Transcript(n)
    script = ["next"] * n
    first = os.path.join(folder, "trace.jsonl")
    run(machine, ScriptedModel(script), max_steps=n, path=first)
    lines = Path(first).read_bytes().splitlines(keepends=True)
    half = n // 2  # the same run stopped half-way, for the cost per added step
    run(machine, ScriptedModel(script), max_steps=half, path=first)
    half_lines = Path(first).read_bytes().splitlines(keepends=True)
    made: list[tuple[str, list[bytes]]] = []  # each file written, with the lines it must hold
    ready: list[str] = []  # empty files made outside the timing, taken one per call
    numbers = itertools.count()

    def new_file(kind: str) -> str:
        made.append((os.path.join(folder, f"{kind}-{next(numbers)}.jsonl"), lines))
        return made[-1][0]

    def empty_file(holding: list[bytes] = lines) -> str:
        made.append((ready.pop(), holding))
        return made[-1][0]

    def plain_into(name: str, lines: list[bytes] = lines) -> None:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            write = os.write
            for line in lines:
                write(fd, line)
        finally:
            os.close(fd)

    def in_run() -> None:
        fd = os.open(empty_file(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            os.write(fd, lines[0])
            run(machine, _LineModel(lines[1:-1], fd), max_steps=n)
            os.write(fd, lines[-1])
        finally:
            os.close(fd)

    fns = [
        lambda: run(machine, ScriptedModel(script), max_steps=n),
        lambda: run(machine, ScriptedModel(script), max_steps=n, path=empty_file()),
        lambda: plain_into(empty_file()),
        lambda: run(machine, _LineModel(lines[1:-1], None), max_steps=n),
        in_run,
        lambda: run(machine, ScriptedModel(script), max_steps=n, path=new_file("trace")),
        lambda: plain_into(new_file("plain")),
        lambda: run(machine, ScriptedModel(script), max_steps=half),
        lambda: run(machine, ScriptedModel(script), max_steps=half, path=empty_file(half_lines)),
        lambda: plain_into(empty_file(half_lines), half_lines),
    ]
    out: dict[str, float] = {}
    for cpu in (True, False):
        for i in range(5 * runs):
            ready.append(os.path.join(folder, f"empty-{i}.jsonl"))
            Path(ready[-1]).touch()
        times, _ = rounds(fns, runs, cpu=cpu)
        bare, traced, floor, quiet, writing, traced_new, floor_new, *halves = times

        def cost(over: list[float], traced: list[float] = traced) -> float:
            return statistics.median((t - b) / p for b, t, p in zip(bare, traced, over))

        if cpu:
            out["ratio"] = cost(floor)
            out["created"] = cost(floor_new, traced_new)
            out["per_line"] = statistics.median(floor) / len(lines)
            writes = [w - q for q, w in zip(quiet, writing)]
            out["context"] = statistics.median(w / p for w, p in zip(writes, floor))
            out["over"] = cost(writes)
            # Per added step: the fixed costs of a file (open, close, header and end lines,
            # the writeback a close starts) cancel between the two lengths, on both sides.
            out["marginal"] = statistics.median(
                ((t - b) - (th - bh)) / (p - ph)
                for b, t, p, bh, th, ph in zip(bare, traced, floor, *halves)
            )
        else:
            out["wall"] = cost(floor)
        for name, holding in made:  # the same lines, both ways; then the files go
            assert Path(name).read_bytes() == b"".join(holding), name
            os.remove(name)
        made.clear()
    return out


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
    cost = writer_cost(300, folder)
    print(
        f"trace writer, 300 steps: cost added ÷ plain os.write loop = {cost['ratio']:.2f}x in "
        f"CPU time, {cost['wall']:.2f}x in wall time (plain write {cost['per_line'] * 1e6:.2f} µs "
        f"CPU per line; load average {load:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"  per step added from 150 to 300 steps (a file's fixed costs cancel): "
        f"{cost['marginal']:.2f}x (CPU time)"
    )
    print(
        f"  with each call creating its file (both sides): {cost['created']:.2f}x; the same "
        f"writes made inside the run, one a step ÷ the plain loop: {cost['context']:.2f}x; "
        f"the cost a trace adds ÷ those in-run writes: {cost['over']:.2f}x (CPU time)"
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
    goal("trace writer: cost a trace adds ÷ one os.write per line, CPU time", cost["ratio"], 2)
    goal("trace writer: the same in wall time", cost["wall"], None)
    goal("trace writer: the same per step added, 150 -> 300 steps", cost["marginal"], None)
    goal("trace writer: the same with each call creating its file", cost["created"], None)
    goal(
        "trace writer: cost a trace adds ÷ its lines' os.write made inside the run",
        cost["over"],
        None,
    )
    (n1, s1), (n2, s2), (n3, s3) = sizes[-3:]
    growth = ((s3 - s2) / (n3 - n2)) / ((s2 - s1) / (n2 - n1))
    print(f"bytes per added step, {n2}->{n3} ÷ {n1}->{n2}: {growth:.3f} (1 linear, 2 quadratic)")
    goal("ReAct trace file: bytes per added step, last doubling ÷ the one before", growth, 1.1)


if __name__ == "__main__":
    main()
