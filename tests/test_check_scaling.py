"""``check`` grows linearly with a machine file's size, not with its square.

Counted, not timed: the number of ``rank`` calls (the order that names the smallest
counterexample) for every state's SPE verdict, at n and 2n states (before, each refuted
state ranked every state: |S|^2 calls, a 1.1 MB file took 106 s); and every function call
the ``check`` verb makes on a machine file, at n and 4n states.
"""

from __future__ import annotations

import contextlib
import io
import sys

from agentic_machines import HALT, TableMachine, generation
from agentic_machines.cli.commands import main
from agentic_machines.generation import is_spe_state
from agentic_machines.machinefile import dump_machine


def _machine(n: int) -> TableMachine:
    delta = {}
    for i in range(n):
        delta[(i, "a")] = (i + 1) % n
        delta[(i, "b")] = HALT if i % 7 == 0 else (i * 3) % n
    return TableMachine({i: f"prompt {i}" for i in range(n)}, delta, initial=0)


def _rank_calls(n: int, monkeypatch) -> int:
    calls = [0]
    real = generation.rank

    def counting(value):
        calls[0] += 1
        return real(value)

    monkeypatch.setattr(generation, "rank", counting)
    m = _machine(n)
    texts = [str(is_spe_state(m, x)) for x in m.states]  # the obstruction is built by str
    assert all("Refuted" in t for t in texts)
    return calls[0]


def test_every_states_verdict_ranks_the_states_about_once(monkeypatch):
    small, large = _rank_calls(300, monkeypatch), _rank_calls(600, monkeypatch)
    assert large <= 2.5 * small, (small, large)  # |S|^2 would be 4x
    assert large <= 20 * 600


def _check_calls(n: int, folder) -> int:
    """The function calls (Python and C) that ``agentic-machines check FILE`` makes on a
    machine file of ``n`` states: loading, every state's verdict printed, the SPE states
    and the embedding check, as the verb runs them."""
    path = dump_machine(_machine(n), folder / f"m{n}.json")
    calls = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sys.setprofile(count)
        try:
            code = main(["check", str(path)])
        finally:
            sys.setprofile(None)
    assert code == 0 and out.getvalue().count("\nstate ") == n
    return calls[0]


def test_check_of_a_machine_file_does_work_linear_in_its_states(tmp_path):
    # Counted, not timed: the calls of the whole verb on a file of n and 4n states (a
    # 1.13 MB file of 14,000 states took 2.8 s by hand, 10x the time of one of 1,400:
    # benchmarks/bench_checkfile.py). |S|^2 work would make 16x the calls; the count is
    # the same on every run, so the bound is tight: 4x plus what does not grow.
    _check_calls(20, tmp_path)  # first use: imports and caches are not the file's work
    small, large = _check_calls(300, tmp_path), _check_calls(1200, tmp_path)
    assert large <= 4.2 * small, (small, large)
    assert large <= 400 * 1200, large  # a few hundred calls per state
