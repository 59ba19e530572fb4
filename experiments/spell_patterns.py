"""Spell's worked patterns with scripted models, and the replay growth curve.

Runs every pattern of ``agentic_machines.spell.patterns`` and checks its documented
outcome, then counts tool calls of the same sessions under Spell and under the naive
re-run harness as the number of turns grows (one tool call per turn: Spell n, naive
n(n+1)/2), and over seeded random sessions.

Usage: ``python experiments/spell_patterns.py [--turns N]``.
"""

from __future__ import annotations

import argparse
import sys

from agentic_machines.spell.patterns import (
    PATTERNS,
    random_session_calls,
    replay_curve,
    run_pattern,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="longest session (default 10)")
    args = parser.parse_args(argv)
    failures = 0
    for name, pattern in PATTERNS.items():
        run, env = run_pattern(pattern)
        ok = run.error is None and run.value == pattern.value
        ok = ok and len(run.recoveries) == pattern.recoveries
        failures += not ok
        print(
            f"{'ok ' if ok else 'BAD'} {name:<20} value={run.value!r} model calls={len(run.states)} "
            f"tool calls={dict(env.calls)}"
        )
    print("\nturns  spell tool calls  naive tool calls")
    for n, spell_calls, naive_calls in replay_curve(args.turns):
        print(f"{n:>5}  {spell_calls:>16}  {naive_calls:>16}")
    print("\nrandom sessions (seeded): turns, tool requests, spell calls, naive calls")
    for seed in range(5):
        requests, spell_calls, naive_calls = random_session_calls(args.turns, seed=seed)
        print(f"{args.turns:>5}  {requests:>5}  {spell_calls:>5}  {naive_calls:>5}")
        failures += spell_calls != requests
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
