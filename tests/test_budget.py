"""Unit tests of agentic_machines.execution.budget: deterministic line budgets."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_machines.errors import BudgetExceeded
from agentic_machines.execution.budget import LineBudget, checkpoint, restore_tracing


@pytest.mark.parametrize(
    "src", ["while True: pass", "while True:\n    x = 1", "for _ in iter(int, 1): pass"]
)
def test_line_budget_cuts_every_kind_of_loop(src):
    with pytest.raises(BudgetExceeded):
        with LineBudget(500):
            exec(compile(src, "<model>", "exec"), {})


def test_a_spent_budget_cannot_be_swallowed_by_a_handler_that_checkpoints():
    # CPython switches a raising tracer off, so a bare `except BaseException` loop is
    # stopped by checkpoints in its handlers (codeexec inserts them into model code).
    src = "n = 0\nwhile True:\n    try:\n        n += 1\n    except BaseException:\n        checkpoint()"
    for limit in (500, 501, 502, 997):
        with pytest.raises(BudgetExceeded):
            with LineBudget(limit):
                exec(compile(src, "<model>", "exec"), {"checkpoint": checkpoint})


def test_an_enclosing_budget_keeps_counting_after_an_inner_one_is_spent():
    with pytest.raises(BudgetExceeded) as outer_info:
        with LineBudget(5_000) as outer:
            with pytest.raises(BudgetExceeded):
                with LineBudget(100):
                    exec(compile("while True:\n    x = 1", "<model>", "exec"), {})
            restore_tracing()
            exec(compile("while True:\n    x = 1", "<model>", "exec"), {})
    assert outer_info.value.args[0] == 5_000 and outer.exhausted


def test_a_functions_count_is_the_same_on_its_first_call_and_later_ones():
    # On 3.13 opcode tracing set in a frame's call event takes effect only from that code
    # object's next frame: a first call was counted by line, later ones per instruction,
    # so a count depended on whether the function had run under a budget before.
    namespace: dict = {}
    exec(
        "def f():\n    a = 1\n    c = [i for i in range(3)]\n    while a < 4: a += 1\n    return a\n",
        namespace,
    )
    counts = []
    for _ in range(3):
        with LineBudget(10**6) as budget:
            namespace["f"]()
        counts.append(budget.used)
    assert counts[0] == counts[1] == counts[2]


# Generators started under a line budget and resumed after it ended, in three threads, under
# another budget or none. `yield from` is a loop on one line, which budget.py once charged
# per instruction (frame.f_trace_opcodes) on every version: CPython 3.12.1 then crashed with
# SIGSEGV (5 runs of 5 at 500 rounds), as the whole suite did in tests/test_attack_corpus.py
# (harness machines keep suspended generators between steps).
_RESUMED_ELSEWHERE = textwrap.dedent("""
    import threading
    from agentic_machines.execution.budget import LineBudget

    def inner():
        x = yield 1
        y = yield x
        return y

    def outer():
        return (yield from inner())

    def finish(g, value):
        try:
            g.send(value)
            g.send(value)
        except StopIteration:
            pass

    def work(rounds):
        held = []
        for i in range(rounds):
            with LineBudget(10_000_000):
                g = outer()
                next(g)
                held.append(g)
            if i % 2:
                finish(held.pop(0), "a")
            else:
                with LineBudget(10_000_000):
                    finish(held.pop(0), "b")

    threads = [threading.Thread(target=work, args=(2_000,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("done")
""")


def test_generators_resumed_in_other_threads_after_their_budget_do_not_crash_the_process():
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _RESUMED_ELSEWHERE],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr[-2000:]
