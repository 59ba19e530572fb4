"""``check`` grows linearly with a machine file's size, not with its square.

Counted, not timed: the number of ``rank`` calls (the order that names the smallest
counterexample) for every state's SPE verdict, at n and 2n states. Before, each refuted
state ranked every state (|S|^2 calls: a 1.1 MB file took 106 s).
"""

from __future__ import annotations

from agentic_machines import HALT, TableMachine, generation
from agentic_machines.generation import is_spe_state


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
