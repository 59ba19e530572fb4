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
  each: 4.6x → 2.2–2.7x (CPU time, five runs at load 10–13 on 2 cores), goal 2x, not
  met here.**
  One step line is one f-string (the same text `json.dumps` gives for the step's dict,
  which a property test checks) encoded once and written with one `os.write`. Measured
  per step on this machine (CPU time): the `os.write` of a 200-byte line 1.3–1.5 µs;
  the writer's own work about 1.5 µs: finding the prompt delta (`startswith` of the
  previous prompt, O(prompt): 0.2 µs for a hot 10 KB prompt, 1.7 µs for a cold one),
  JSON-escaping the new text and the completion (0.4 µs for 60 characters; C), the
  line's f-string (0.4–0.6 µs; `%` and `str.join` cost the same), `encode` (0.05 µs)
  and the call. So the floor of this format in CPython is about 2x a write, before the
  per-run costs (opening through `open_output`, the header and end lines), which a
  300-step run does not fully amortise. What would move it: the prompt delta told by the machine
  instead of found (a transcript machine knows what it appended), or the line's
  escaping and formatting in C. The benchmark compares honestly: the same bytes (it
  asserts it), one `os.write` per line, a new file per call for both sides (truncating a
  file written a moment ago makes ext4 flush it first: 6–7 ms of wall time), alternating
  order, median of 41 per-round ratios, CPU time (wall time on a machine with load 10
  on 2 cores mostly measures the scheduler: 0.8–2.3x in the same runs).
- **CEK fib 20 ÷ plain Python: not met here, 140x (goal 120x), about 3x faster than
  before.** On this machine the code before issue 25 measured 430–457x (CPU time,
  plain Python in batches) where the issue measured 292–305x on a quieter one; the
  same measurement now gives 138–145x, and the benchmark row (wall time, alternating)
  140x. The floor: the cek section's last ratio, CEK ÷ a direct recursive evaluator of
  the same language (dict environments, Python recursion, no states at all), is now
  1.03x, so the register loop costs what the simplest Python interpreter of the
  language costs, and what is left of the distance to 120x is interpreting in Python at
  all. Moving it further needs the inner loop compiled (Cython or mypyc, an optional
  extra) or a closure-compiling evaluator between boundaries; lazily hashed frames
  (tried: a depth filter for Brent's check and hashes made on demand) gained nothing
  measurable, because the check still hashes the frames of every state it compares.
  Profile before (fib 16, 25 543
  steps, 0.99 s under cProfile): `_parts` 0.23 s self (the application rule builds a new
  `done` tuple, an `ArgsK` frame and an `Eval` node per argument), `step` 0.12 s,
  `_apply` 0.10 s, `hash` 0.085 s for 38 409 calls (every intermediate `Eval`/`Ret`/frame
  is hashed when it is built). What changed: `run` keeps the state in registers between
  boundaries (`machine._run_registers`: one rule of `step` per pass, the same frames
  built, no `Eval`/`Ret` node per step); Brent's cycle check builds a state node only
  when kind, continuation hash and expression hash all match the saved state; each
  `Seq` carries a plan that reads the atomic operands before the next compound one with
  one `itemgetter` and selects the next environments directly; a self-recursive call
  reuses the calling closure (equal field for field); `+ - = <` take a two-integer fast
  path. `run_by_steps` (the old loop over `step`) is kept as the definition, and
  property tests in `tests/test_cek_machine.py` check that both give the same outcome,
  step count, out-of-fuel point and cycle period. Profile after (fib 18, 1.6 s under
  cProfile): the loop body itself 1.04 s, `ArgsK` construction with its eager hash
  0.19 s, the primitives 0.19 s, the rest below 0.1 s each; Brent's check is 5–15% of
  the run (with `detect_cycles=False` for comparison). A Seq's plan is made the first
  time the loop meets it, so compiling (and the loader's round trip) costs what it did.
- **`agent_machine`, linear 10k-step ReAct run ÷ direct: not met, 30.3x → 5.0–10.2x
  (the default line budget) and 17.2x → 2.7–4.7x (no budget).** Measured with the
  machine's load average at 10.7–13 on its 2 cores (other developers' tests); the
  code before this change gave 30.3x and 17.2x in the same hour, at load 12.9. What
  changed: `run` from the initial state takes a linear path
  (`runtime/agent.py`, `_Linear`): the agent function is called once with a model
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
  outcome: `tests/test_agent_linear.py` checks that the linear trace equals the
  step-by-step one, at the budget's boundary too. What is left, measured in CPU time
  per step (`time.thread_time`, the direct step about 0.85 µs on this machine): the
  `FunctionModel` that `run` needs (its call log) 0.3–0.6x; a `TraceState` node per
  step 0.6 µs (it was 1.2 µs before it kept one slot); the `Step` tuple, the model
  function's bookkeeping and the asyncio/thread checks about 1 µs; the gate (two clock
  reads and a lock, so the watchdog can never raise outside a step) about 0.6 µs. Under
  load, a step preempted for longer than 50 µs is decided by counting: 7–19 per 10 000
  steps here, which costs the shadow's one extra run (about 1.5x) and the counted steps;
  that, and the load's own noise, is the spread between runs. The greenlet path that
  branching takes (`h()` in a plain loop) is unchanged in design: 13–17x here.
  What would move it further: a trace that makes its `TraceState`s lazily (a step could
  hold the completion's index and build the state when read); a watchdog that works by
  signal in the main thread (no lock per step); and a clock that ignores preemption
  (`CLOCK_THREAD_CPUTIME_ID`, which costs 8 µs per read on this VM but about 0.1 µs on
  bare metal) so that a busy machine makes no late steps.
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
