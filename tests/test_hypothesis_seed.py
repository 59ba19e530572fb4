"""A seeded Hypothesis search is a pure function of its seed (issue 21): the same
generated runs in every process, whatever the hash seed (``PYTHONHASHSEED``) of the
process. The planted agent bug was missed in about one process in four before: the seed
was put on a wrapper function that Hypothesis never read, so every process drew its own
runs; and a set literal among the agent's commands was drawn in hash order."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SEARCH = textwrap.dedent(
    """
    import hashlib, sys
    from agentic_machines import agent_machine
    from agentic_machines.checking import never_raises
    from agentic_machines.checking.adversarial import adversarial_completions
    from agentic_machines.checking.stateful import hypothesis_check

    asked = []

    def shop(model):
        cart = []
        while True:
            reply = model(f"cart: {cart}")
            asked.append(reply)
            if reply in {"done", "quit", "stop", "exit"}:   # a set literal: a frozenset constant
                return cart
            if reply.startswith("buy "):
                cart.append(reply[4:])
                if len(cart) > 3:
                    raise ValueError("cart full")

    m = agent_machine(shop, isolation="inline")  # its calls are counted in this process
    seed = None if sys.argv[1] == "none" else int(sys.argv[1])
    result = hypothesis_check(m, properties=[never_raises()], max_examples=30, max_steps=6,
                              completions=adversarial_completions(m), seed=seed, progress=False)
    print(len(asked), hashlib.sha256(repr(asked).encode()).hexdigest(), result.status)
    """
)


def _search(seed: str, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, seed],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("seed", ["3", "none"])
def test_the_same_seed_generates_the_same_runs_in_every_process(seed):
    runs = {_search(seed, hash_seed) for hash_seed in ("0", "1", "12345")}
    assert len(runs) == 1, runs
    count = int(next(iter(runs)).split()[0])
    assert count > 30  # the search did make runs (their completions are what is compared)
