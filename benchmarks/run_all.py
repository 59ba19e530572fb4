"""Run every benchmark and print the whole table of goals; with --write, docs/scaling.md.

Each ``benchmarks/bench_<area>.py`` measures one area against a baseline timed in the
same process (``benchmarks/_timing.py``) and prints one ``goal | ...`` row per goal; this
script runs them one after another, each in its own interpreter (so one area's caches do
not flatter another's), echoes what they print, and ends with the table of every goal
row. ``--write`` also writes ``docs/scaling.md``: the table with the date, the Python
and the core count, then each area's full report.

Run: ``python benchmarks/run_all.py [--only cek,agent] [--write]``. With ``--only`` and
``--write``, the sections of the areas not rerun are kept from the current page (each
says when it ran), and so are their rows of the table. ``--from-log FILE`` runs nothing
and takes each area's report from what an earlier run printed (its ``== area`` lines
and what follows them), e.g. to write the page from a run saved with ``tee``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "docs" / "scaling.md"
sys.path.insert(0, str(HERE))

from _timing import median_time, parse_goal  # noqa: E402

TABLE_HEAD = "| area | measure | measured | goal | verdict |\n|---|---|---|---|---|\n"


def areas() -> list[str]:
    """The benchmark areas, from the ``bench_<area>.py`` files beside this script."""
    return sorted(p.stem[len("bench_") :] for p in HERE.glob("bench_*.py"))


def run_area(area: str) -> tuple[str, float]:
    """(what ``bench_<area>.py`` printed, seconds it took), run in a fresh interpreter."""
    script = HERE / f"bench_{area}.py"
    seconds, proc = median_time(
        lambda: subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT
        ),
        runs=1,
    )
    text = proc.stdout.rstrip()
    if proc.returncode != 0:
        text += f"\n(exit status {proc.returncode})\n{proc.stderr.strip()[-2000:]}"
    return text, seconds


def goal_rows(area: str, text: str) -> list[tuple[str, str, str, str, str]]:
    """The goal rows in a benchmark's output, each prefixed with its area."""
    rows = []
    for line in text.splitlines():
        row = parse_goal(line)
        if row is not None:
            rows.append((area, *row))
    return rows


def table(rows: list[tuple[str, ...]]) -> str:
    """A Markdown table of goal rows (area, measure, measured, goal, verdict)."""
    # a pipe inside a cell (|S| = |C|) is escaped so Markdown keeps the columns
    return TABLE_HEAD + "".join(
        "| " + " | ".join(c.replace("|", "\\|") for c in r) + " |\n" for r in rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated areas, e.g. cek,agent")
    parser.add_argument("--write", action="store_true", help="also write docs/scaling.md")
    parser.add_argument(
        "--from-log", type=Path, default=None, help="take the reports from a saved run's output"
    )
    args = parser.parse_args(argv)
    wanted = [a.strip() for a in args.only.split(",") if a.strip()]
    unknown = sorted(set(wanted) - set(areas()))
    if unknown:
        print(f"no benchmark named {unknown}; available: {areas()}", file=sys.stderr)
        return 2
    sections: dict[str, str] = {}
    rows: dict[str, list] = {}
    saved = _saved_reports(args.from_log) if args.from_log else None
    for area in wanted or areas():
        if saved is not None:
            if area not in saved:
                continue
            text, when = saved[area], "from a saved run"
        else:
            print(f"== {area} (benchmarks/bench_{area}.py)", flush=True)
            before = os.getloadavg()[0]
            text, seconds = run_area(area)
            print(text, flush=True)
            # The machine's load beside each report: other processes share its cores.
            when = (
                f"{seconds:.0f} s in all, load average {before:.1f} before and "
                f"{os.getloadavg()[0]:.1f} after on {os.cpu_count()} cores"
            )
        rows[area] = goal_rows(area, text)
        sections[area] = (
            f"## {area}\n\n`python benchmarks/bench_{area}.py` ({when}, "
            f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)\n\n```text\n{text}\n```\n"
        )
    if args.write and (wanted or saved is not None):
        old_sections, old_rows = _old_page()
        sections = {**old_sections, **sections}
        rows = {**old_rows, **rows}
    all_rows = [r for area in sorted(rows) for r in rows[area]]
    print("\n" + table(all_rows), end="")
    if args.write:
        OUT.write_text(_page(all_rows, sections), encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


def _page(rows: list[tuple[str, ...]], sections: dict[str, str]) -> str:
    head = (
        "# Scaling benchmarks\n\n"
        f"Written by `python benchmarks/run_all.py --write` on {time.strftime('%Y-%m-%d', time.gmtime())}, "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores. The numbers were taken on a shared {os.cpu_count()}-core "
        "machine where other developers ran tests at the same time, so absolute times drift "
        "with its load; every row is therefore a ratio against a baseline timed in the same "
        "process, alternating with it, median of several runs (`benchmarks/_timing.py`), "
        "and the ratios are what to compare.\n\n"
        "## Goals\n\nEvery goal row the benchmarks printed (`python benchmarks/run_all.py` "
        "prints this table):\n\n"
    )
    body = "\n".join(sections[a] for a in sorted(sections))
    return head + table(rows) + "\n" + body + "\n" + PROFILES


PROFILES = """## Where the time went (profiles)

Each gap was profiled with cProfile before it was closed; the top entries and the ratio
before and after, as measured by the benchmarks above:

- **`completion_generates(X, x, X)`, all-SPE machine ÷ one read of all transitions:
  5.6x → 1.5–1.9x.** Before (300 states): 180 300 `harness` calls (every transition read
  twice, once as source and once as target), `_codes` 0.33 s, `_build_target` 0.18 s,
  `propagate` 0.17–0.55 s (a forced pair was pushed again by every row that met it before
  it was assigned: about n²/2 pushes). After: each transition is read once (the target
  rows are the source rows), rows are encoded in one comprehension, a forced pair is
  assigned when found so each row is scanned once, one machine is coloured once, and the
  closure pass is skipped when the pool is all of X. What is left is the read itself
  (≈ 1x) plus one pass over the integer table (encode, propagate).
- **`spe_states`, random 2 000 x 2 000 ÷ the plain early-exit loop: 28x → 0.35x.** Before:
  every row was read in full (4 M `harness` calls). After: one F1 scan per state stops once
  more than |C| − |S| completions were wasted (halted, diverged or repeated), the
  pigeonhole bound of the baseline, without copying S per state.
- **`is_spe_state` on every state ÷ `spe_states`: 1.8–2.3x → about 1.5x → 1.0–1.3x.**
  The two share the F1 scan; profile of the rest (2 000 calls, GC off): the scan 0.36 s,
  `is_spe_state` itself 0.11 s, of which building the `Verdict` and its `Obstruction`
  (two frozen dataclasses, ≈ 11 µs a call) and the claim text (≈ 6 µs) were the cost of
  an explained verdict per state; the first pass over a 4 M-entry table also pays the
  cyclic garbage collector walking it (3.9x with GC, 1.6x without). What changed (issue
  25 item 6): `is_spe_state` returns a `LazyVerdict` whose `holds`, `method` and
  `checked` are set at once and whose claim, witness or obstruction and details are
  built when first read (it compares, prints and pickles as that `Verdict`); the
  machine's S and C (`finite_parts`) and its closedness check are kept on the machine
  while they are the same immutable objects (a `FunctionMachine` was walked over S x C
  on every call); `short_repr` no longer imports on every call. Per call, the overhead
  over the scan went from 10–15 µs to about 3 µs (random 1 000 x 1 000, CPU time);
  the benchmark rows, CPU time with load 11–15 on 2 cores: 1.20–1.28x in four runs
  (random 2 000 x 2 000, where a refuting scan stops after about 50 completions, so a
  few µs are 10–20%; the same loop read 1.07x with the garbage collector off, and the
  spread between runs is as large as the gap to 1.2x) and 1.02–1.08x (all-SPE
  250 x 250). What is left is Python's call and object costs: the `LazyVerdict` itself
  (≈ 1.2 µs), the keyword arguments, the state check.
- **Trace writer: the cost a trace file adds ÷ writing its own lines with one `os.write`
  each: 4.6x → 2.1–2.5x (CPU time, load 1.4–3.7 on 2 cores), goal 2x, not met.**
  One step line is one f-string (the same text `json.dumps` gives for the step's dict,
  which a property test checks, header and end lines included) encoded once and written
  with one `os.write`. Where the cost goes, the writer stripped stage by stage and timed
  in the run (÷ the plain loop): a no-op `write(step)` and the `path=` branch 0.11x;
  opening and closing the file 0.21x; the writer objects 0.31–0.39x; the header and end
  lines 0.57–0.61x (mostly the writeback a close starts); one `os.write` of a ready line
  per step 1.42–1.47x (the same write made between the model's and the harness's work
  costs 1.4–1.5x the write in a tight loop: the kernel's write path is cold again each
  time); the prompt delta (`startswith` of a 10 KB prompt, the slice) 1.90x; escaping,
  the f-string and `encode` 2.40–2.51x. In user-space instructions per step
  (cachegrind): the bare run 20.2k, the writer before this round 14.8k, now 14.2k, a
  writer with no generality at all about 13.7k: pure Python is within about 4% of its
  own floor. The goal row opens a file made empty before the round on both sides (a
  file's creation cost 0.17–0.73 ms of CPU here, as much as 80–330 of the lines' writes,
  and varied with the disk); an information row gives the cost per added step, which
  cancels every fixed cost. What would move it, measured with a prototype outside the
  project that writes the same bytes: the delta test, escaping, formatting and write in
  one C call a step read 1.58x and 1.72x where the Python writer read 2.29x and 2.56x in
  the same runs (5.1k instructions a step against 14.2k). It is not in the package: a
  compiled extension changes installation on a fresh machine (a compiler, a wheel per
  platform) for a goal the pure-Python writer misses by a tenth to a quarter of a
  write; the machine telling the writer what its prompt appended (a transcript machine
  knows it) would save about 0.1x at 10 KB, more for longer prompts, at the cost of an
  interface every machine would have to keep true.
- **CEK fib 20 ÷ plain Python: met, 92–94x (goal 120x; 140x before this round).** Measured
  at load 11 on the 2 cores: the benchmark row (wall time, alternating, batches of plain
  Python) 92x and 94x in two runs; CPU time of fib 17 in 45 alternating rounds, the loop before this round
  128x and now 89x (10th percentile; 0.69x the time). A deterministic measure agrees:
  CPython bytecodes executed per CEK step (sys.settrace opcode events, fib 15, 15 783
  steps) went from 132 to 88. What changed, with no change to `step` or to any state:
  primitive calls run in place. When a rule would push a frame F (an `IfK` for an if's
  test, an `ArgsK` for an application's next part) only to evaluate a primitive applied
  to atoms such as `(< n 2)` or `(- n 1)`, the next two states are `<(p a ...), ρ', F κ>`
  and `<v, F κ>`; the loop computes v with one call and takes F's rule at once, counting
  the three steps, without building F. It does this only when neither state can be
  observed: the fuel lasts past them, Brent's check saves no state there, and the saved
  state's continuation depth differs from theirs, so neither can equal it. Frames carry
  their depth and hash only when first asked (a boundary, a cycle comparison that passed
  the cheap tests, `step`'s states); the bookkeeping after a step is one comparison with
  the next event (a Brent save or the end of fuel) and a depth-first cycle test; the
  trivial selectors are C callables. Tests in `tests/test_cek_machine.py` run every fuel
  from 1 past the end and every Brent phase on programs that loop, fail and reach
  boundaries through calls in place, against `run_by_steps`. Profile after (fib 20 under
  cProfile, 1.92 s): the loop body 1.32 s self, the primitives `-`, `<`, `+` 0.30 s
  together, frame construction 0.09 s, frame hashing 0.13 s (for the 2 313 states that
  passed the cheap cycle tests). The loop body is now the floor: per fib call it takes
  about 6 passes (If with its test in place, the `+` application, two calls with their
  argument in place, two returns to `ArgsK`). What would move it: fewer passes through
  more rules done in place (a return to an `ArgsK` whose remaining parts are atoms),
  each pass's plan read from one tuple instead of several attributes, or the loop
  compiled (mypyc or Cython, an optional extra). Before the register loop (the previous
  round, 430–457x here): `_parts` (a tuple, a frame and an `Eval` node per argument),
  `step`, `_apply` and the eager hash of every intermediate state led the profile; the
  register loop (one rule of `step` per pass, no `Eval`/`Ret` node per step, a `Seq`
  plan reading the atomic operands in one call) brought it to 140x.
- **`agent_machine`, linear 10k-step ReAct run ÷ direct: not met, 30.3x → 4–7x
  (the default line budget) and 17.2x → 2.2–3.6x (no budget).** First measured with the
  machine's load average at 10.7–13 on its 2 cores (other developers' tests); the
  code before this change gave 30.3x and 17.2x in the same hour, at load 12.9. What
  changed: `run` from the initial state takes a linear path
  (`runtime/linear.py`): the agent function is called once with a model
  function that asks the real model and records the step, so no greenlet switch is
  made per step, and every step runs untraced. A step is *decided by counting* (its
  lines counted exactly as `h` counts them) only when its time does not prove it within
  the budget: no CPython runs a counted line (at least one bytecode instruction, several
  CPU cycles) in less than 0.05 ns, and wall-clock time only grows with load or
  blocking, so a step that returned within `line_budget × 0.05 ns` (50 µs for the
  default budget) ran fewer lines than its budget, and counting would have given the
  same outcome. Every other step, and one a watchdog thread stops after 0.5 s (a loop
  that never calls the model again), is decided on a *shadow* run of the function in a
  greenlet: it catches up uncounted through the steps already decided (served from the
  trace, in one switch; at most one extra run of the function in the whole run), then
  runs that step through `h` with every line counted (frames that ran uncounted are set
  counting: `budget.count_running`). If the shadow agrees, the untraced run goes on; if
  not, its outcome (`DIVERGE`) stands. The clock decides only when to count, never an
  outcome: a test (deleted with the linear path in wave 8) checked that the linear trace equals the
  step-by-step one, at the budget's boundary too.
  Round 2 (issue 25, item 2; `runtime/linear.py`): a step records two strings, its
  prompt and its completion; the trace's `TraceState`s and `Step` tuples are made when
  the trace is first read, and the agent's result when `result`/`raised` asks; the
  watchdog in the main thread is an interval `SIGALRM` whose handler runs in the
  agent's own thread, so ending a step's clock takes two clock reads and no lock.
  Round 3 (this wave): the last step of every long run was late, because CPython frees
  the agent's locals as its frame returns (60–400 µs for a 10,000-entry history): the
  run now holds the agent's outermost frame so the locals are freed after the clock
  stops, under a profile hook that has the step counted if any Python code ran then;
  a collection that provably ran no Python code inside a step is taken off its time; a
  stock `ModelBase` model is called inline. Round 4: a late step is also tried on its
  thread's CPU time since the last checkpoint (read every quarter gate of wall time),
  which preemption does not stretch. Measured (see `bench_agent.py`'s docstring): no
  budget 2.2–3.6x at load 1.9–3.8; the default budget 4–7x, with a median of 2–9 late
  steps a run. What is left is the floor of this design: a preempted step's thread CPU
  time still grows by 46–182 µs here (the switch and the cold caches after it), more
  than the 50 µs gate, so preemption still makes late steps, and one late step costs a
  catch-up of the whole run on the shadow (2.5–2.8x the direct run: the replay 1.6x,
  a `TraceState` per step 0.85x). A larger gate would end it (with a 200 µs gate the
  same runs had no late step, 2.2–5.7x), but the cheapest counted unit measured here
  (`a, b = c, d` on one line: two instructions per dispatch) runs in 1.19 ns on this
  2.45 GHz core, so on the fastest 2026 cores a line may take 0.3 ns and `_FASTEST_LINE`
  stays 5e-11 (50 µs for the default budget): a bound the clock can only prove, never
  break. What would move the row: lines counted without a tracer (a per-thread
  user-instruction counter read with `rdpmc`, which this VM does not expose, or
  `sys.monitoring` on 3.12+), so that no shadow is needed; or cheaper state chains, so
  that a catch-up costs the replay alone. For a real agent, whose model call takes
  milliseconds to seconds, these microseconds per step do not show.
- **`check_properties` with `effects_at_most_once` on an agent function ÷ `explore` of
  it: 3,000 states in 56 s against 2.6 s for 1,500 → 1.0–1.4x on 3,280 states, growing
  0.85–1.01x per 3x states (goals 2x and 1.25x; load 2.7–3.6).** The first round removed
  the quadratic part (effects were looked up along whole histories). What was left, read
  with deterministic counts rather than timings: both searches make the same replays
  (4,244 against 4,257 at 3,280 states, each from depth 0, 5.6 steps on average: the
  O(depth) per state the issue keeps) and the check makes a constant 65–67 more Python
  calls per state at 364, 1,093, 3,280 and 9,841 states. The growth was the cyclic
  garbage collector: `explore` paused it, the check did not, and its full collections
  (each walks every live object, once the heap grew by a quarter) took 2–5% of the check
  at 1,093 states and 8–12% from 3,280 on; each finished agent run also sat in a
  reference cycle (run, greenlet, context), so 1,132 runs waited for the collector after
  a 1,093-state check. Now every search pauses the collector the same way
  (`runtime.collector.collector_paused`), a finished run's context is cleared so reference
  counting frees it (no cyclic garbage left after a check), and a replay passes the
  searched state's own prefixes (`TraceState.history`), so a recorded effect is found by
  identity (no history comparison). The benchmark times check and explore at depths 5, 6
  and 7 alternately in each round (CPU time) and fits the growth of their ratio: a
  two-point quotient read 0.86–1.38x on the same code. What is left is a constant per
  state; sharing replays across siblings would need a copy of a suspended greenlet (none
  exists) or a `fork` per branch point (far dearer than a replay of a few steps); a
  larger live-run cache (4,096 instead of 256) made `explore` 15% faster at depth 7 but
  holds thousands of suspended agents in memory, and is not taken. Pausing the whole
  collector had a memory price: cyclic garbage the agent itself made waited for the
  search's end (an agent making 20 kB of it a step held 253 MB at 1,023 states and
  1,264 MB at 4,095, against 36 and 43 MB with the collector on). Since wave 7 a search
  pauses only the full collections (their third threshold set out of reach), the ones
  whose cost grows with the heap; the young ones, which cost what was allocated lately,
  go on and free such garbage as the search goes: 36 and 44 MB for that agent, and
  `bench_effects.py` now measures the peak memory of its check of a shop that drops
  20 kB of cyclic garbage a step (the same as with the collector on at 1,093 and
  3,280 states; 4.2x that with the whole collector paused). Garbage cycles that outlive
  two young collections (tied to a suspended run, say) still wait for the search's end:
  an agent that keeps its last exception (exception, traceback, its own frame: a cycle
  per run) peaked at 99 MB at 9,841 states against 72 MB with the collector on (58 and
  58 at 3,280). The effects row did not move: 1.03-1.15x with growth 0.94-1.02x per 3x
  states, against 1.08-1.14x and 0.93-1.05x with the whole collector paused (three
  pairs of runs, alternating, load 0.9-3.8 on 2 cores).
- **REPL-Plan, traced lines per replayed cached call: about 80 → 1** (the block's own
  line). Before, every cached call ran the call log's bookkeeping under the block's
  line budget: `call`, `_same` (with `all()` over generators, whose frames were traced
  line by line), `_private` (`copy.deepcopy` of the result) and `_keep_names` (an
  `any()` generator over the namespace). Those are marked `uncharged` (a model-defined
  `__eq__`, `__repr__` or `__deepcopy__` they reach still opens traced frames and is
  still charged), the generators became loops, and an immutable result is returned
  without `copy.deepcopy`. The count-to-N curve then grows about linearly in time for
  N = 4 … 256, although the number of cached calls replayed grows as N²: a replay is
  now cheap next to an attempt's fixed cost (the namespace snapshot and the block's
  setup, about 3 000 traced lines under an enclosing budget).
- **An agent function in worker processes, toy agent ÷ inline per state: not met, 36.7x
  → 17–40x (the 3x goal is under the floor).** Each step was one fork of the process
  holding its state, so a 2-completion state cost two forks. Now the last completion
  tried from a held state is run by the holder itself (after it the state is not
  needed; a search that comes back rebuilds it from its nearest held ancestor), and
  `bench_agent_states.py` counts 1.06–1.20 forks a state (the start state costs three:
  the run to it, and a machine without `completions` learns them there): 36 → 18 ms a
  state at load 10 in one measurement. The floor, measured in the same run with networkx and Hypothesis
  imported: a bare fork and its wait is 1.5–3 ms on a quiet 2-core VM (when issue 35 was
  filed) and 10–27 ms at load 10–17 (the new process must be scheduled, and it copies
  the page tables of every module the checker imported), a socket round trip to a waiting process 0.04–0.06 ms.
  A state's floor is therefore its forks, about 1.06 of them: 18x inline's per-state
  cost (0.6 ms, a greenlet step and a replay) at load 17, and the measured cost is
  about 2x that floor (three processes woken per step: the checker, the holder and the
  child, each waiting for a core under load). Fewer forks than states would mean
  replaying inside one worker with no held states, whose cost grows with depth again
  (what issue 35 removed); a real model call costs far more than either.
"""


def _saved_reports(log: Path) -> dict[str, str]:
    """Each area's report in the saved output of an earlier run: {area: text}.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "log"
    ...     _ = p.write_text("== cek (benchmarks/bench_cek.py)\\nfib\\n== run (x)\\n", encoding="utf-8")
    ...     _saved_reports(p)
    {'cek': 'fib'}
    """
    reports: dict[str, list[str]] = {}
    current = None
    for line in log.read_text(encoding="utf-8").splitlines():
        if line.startswith(TABLE_HEAD.split("\n", 1)[0]):
            current = None  # the closing table of the run, not an area's report
        elif line.startswith("== "):
            current = line[3:].split(" ", 1)[0]
            reports[current] = []
        elif current is not None:
            reports[current].append(line)
    return {a: "\n".join(lines).rstrip() for a, lines in reports.items() if "".join(lines).strip()}


def _old_page() -> tuple[dict[str, str], dict[str, list]]:
    """The sections and goal rows of the current page by area, to keep those not rerun."""
    if not OUT.exists():
        return {}, {}
    page = OUT.read_text(encoding="utf-8")
    sections, rows = {}, {}
    for part in re.split(r"^## ", page, flags=re.M)[1:]:
        area = part.split("\n", 1)[0].strip()
        if (HERE / f"bench_{area}.py").exists():
            sections[area] = "## " + part.rstrip() + "\n"
    for line in page.splitlines():
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if len(cells) == 5 and cells[0] in sections:
            rows.setdefault(cells[0], []).append(tuple(cells))
    return sections, rows


if __name__ == "__main__":
    raise SystemExit(main())
