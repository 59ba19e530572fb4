"""The search kernel's rules (runtime/search.py) hold the same for every search built on it:
``explore`` (serial and on an executor) and ``check_properties``."""

from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentic_machines import HALT, FunctionMachine, TableMachine, agent_machine, effect
from agentic_machines.checking import (
    check_properties,
    effects_at_most_once,
    halts_within,
    never_diverges,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.collector import collector_paused
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.search import Bounds, alphabet, offered

M = TableMachine(
    {0: "p", 1: "q"}, {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 0, (1, "b"): 1}, initial=0
)


def _explore_both(machine, **kw):
    serial = explore(machine, **kw)
    with ThreadPoolExecutor(2) as pool:
        parallel = explore(machine, executor=pool, **kw)
    assert list(serial.nodes(data=True)) == list(parallel.nodes(data=True))
    assert list(serial.edges(data=True)) == list(parallel.edges(data=True))
    assert serial.graph["stats"]["truncated_reason"] == parallel.graph["stats"]["truncated_reason"]
    return serial


def test_an_empty_alphabet_is_a_function_that_offers_nothing():
    # An alphabet is a set of strings, and the empty set is one: every state expanded is
    # stuck (no completion to follow), exactly as with a function that offers nothing.
    fixed = _explore_both(M, completions=[])
    chosen = _explore_both(M, completions=lambda prompt: [])
    for g in (fixed, chosen):
        assert list(g.nodes) == [0] and not g.edges
        assert g.nodes[0]["expanded"] is True
        assert g.graph["stats"]["truncated"] is False
    assert alphabet(M, []) == ([], None)


def test_check_properties_reads_an_empty_alphabet_as_explore_does():
    # The same rule in the checker: the start is stuck, a run that has not halted.
    props = [halts_within(3), never_diverges()]
    for completions in ([], lambda prompt: []):
        r = check_properties(M, properties=props, completions=completions)
        assert r.coverage.states == 1 and r.coverage.stuck == 1
        assert r["never_diverges()"].verdict.holds is True
        cx = r.counterexample("halts_within(3)")
        assert cx.completions == () and cx.states == (0,) and "stuck" in cx.explanation


def test_duplicates_and_non_strings_follow_one_rule_for_lists_and_functions():
    assert alphabet(M, ["b", "a", "b"]) == (["b", "a"], None)
    assert offered(lambda p: ["b", "a", "b"], "p", 0) == ["b", "a"]
    with pytest.raises(InvalidArgument, match="completions are strings"):
        explore(M, completions=["a", 1])
    for kw in ({}, {"executor": ThreadPoolExecutor(1)}):
        with pytest.raises(InvalidArgument, match="non-strings"):
            explore(M, completions=lambda p: ["a", 1], **kw)
        with pytest.raises(InvalidArgument, match="single string"):
            explore(M, completions=lambda p: "ab", **kw)
    with pytest.raises(InvalidArgument, match="list of strings or a function"):
        explore(M, completions=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("max_states", "max_depth", "words"),
    [
        (0, None, "max_states must be a whole number, at least 1"),
        (True, None, "max_states must be a whole number"),
        (2.5, None, "max_states must be a whole number"),
        (None, -1, "max_depth must be a whole number, 0 or more"),
        (None, 1.0, "max_depth must be a whole number"),
    ],
)
def test_one_bound_rule(max_states, max_depth, words):
    with pytest.raises(InvalidArgument, match=words):
        explore(M, max_states=max_states, max_depth=max_depth)
    with pytest.raises(InvalidArgument, match=words):
        check_properties(M, properties=halts_within(2), max_states=max_states, max_depth=max_depth)
    with pytest.raises(InvalidArgument, match=words):
        Bounds(max_states, max_depth)


def test_bounds_cut_the_same_way_serial_and_parallel():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    g = _explore_both(counter, completions=["1", "2"], max_states=4)
    assert g.graph["stats"]["truncated_reason"] == Bounds(4, None).full(4)
    g = _explore_both(counter, completions=["1", "2"], max_depth=2)
    assert g.graph["stats"]["truncated_reason"] == Bounds(None, 2).depth_cut()


def test_check_properties_names_the_bounds_as_explore_does():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    r = check_properties(counter, properties=never_diverges(), completions=["1"], max_depth=2)
    assert r.coverage.truncated == Bounds(None, 2).depth_cut()
    r = check_properties(counter, properties=never_diverges(), completions=["1"], max_states=4)
    assert r.coverage.truncated == Bounds(4, None).full(4)
    assert explore(counter, completions=["1"], max_states=4).graph["stats"]["states"] == 4


def test_the_start_rule_is_shared():
    no_start = FunctionMachine(lambda n: "p", lambda n, c: n, name="nowhere")
    for call in (
        lambda: explore(no_start, completions=["a"]),
        lambda: check_properties(no_start, properties=never_diverges(), completions=["a"]),
    ):
        with pytest.raises(InvalidArgument, match="'nowhere' has no initial state"):
            call()
    for call in (
        lambda: explore(M, HALT),
        lambda: check_properties(M, HALT, never_diverges()),
    ):
        with pytest.raises(InvalidArgument, match="from the sentinel"):
            call()


# thresholds a caller may have set, unlike the default (700, 10, 10): put back exactly
CALLER_THRESHOLDS = (613, 9, 17)


@pytest.mark.parametrize("enabled", [True, False])
def test_every_search_pauses_the_collector_and_leaves_it_as_it_found_it(enabled):
    # explore and check_properties pause the collector's full collections for the search
    # (their cost would grow with the states held), leave its young ones as they were,
    # and must give the caller's setting back exactly, also when the search raises.
    seen = []

    def h(n, c):
        seen.append((gc.isenabled(), gc.get_threshold()))
        return None if n == 2 else n + 1  # a missing return at state 2: InvalidMachine

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0)
    was, thresholds = gc.isenabled(), gc.get_threshold()
    try:
        (gc.enable if enabled else gc.disable)()
        gc.set_threshold(*CALLER_THRESHOLDS)
        for search in (
            lambda: explore(m, completions=["a"], max_depth=1),
            lambda: check_properties(
                m, properties=[never_diverges()], completions=["a"], max_depth=1
            ),
        ):
            search()
            assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
        with pytest.raises(Exception, match="returned None"):
            explore(m, completions=["a"])
        assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
        with pytest.raises(Exception, match="returned None"):
            check_properties(m, properties=[never_diverges()], completions=["a"])
        assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
        with collector_paused():
            assert gc.isenabled() is enabled
            young, middle, full = gc.get_threshold()
            with collector_paused():  # nested: the inner pause gives back the outer's
                assert gc.get_threshold() == (young, middle, full)
            assert gc.get_threshold() == (young, middle, full)
        assert (young, middle) == CALLER_THRESHOLDS[:2] and full >= 2**31 - 1
        assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
    finally:
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*thresholds)
    # every harness call ran with the young collections as found and the full ones paused
    assert seen and set(seen) == {(enabled, (*CALLER_THRESHOLDS[:2], full))}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a process")
@pytest.mark.parametrize("enabled", [True, False])
def test_a_process_forked_inside_a_search_gets_the_collector_the_search_found(enabled):
    # A process pool's worker forked while a search runs never leaves the search's pause:
    # it must not keep the full collections off for good (a review found such workers
    # with the collector off).
    was, thresholds = gc.isenabled(), gc.get_threshold()
    read, write = os.pipe()
    try:
        (gc.enable if enabled else gc.disable)()
        gc.set_threshold(*CALLER_THRESHOLDS)
        with collector_paused():
            gc.set_threshold(5, 5, 5)  # changed inside: the outermost pause's finding counts
            with collector_paused():
                pid = os.fork()
                if pid == 0:  # the child: report, then go on as code that forks does
                    inside = (gc.isenabled(), gc.get_threshold())
        if pid == 0:  # the child left both blocks and runs a search of its own
            after = (gc.isenabled(), gc.get_threshold())
            with collector_paused():
                pass
            again = (gc.isenabled(), gc.get_threshold())
            os.write(write, repr((inside, after, again)).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        # a review found a child that left the blocks with the count at -1 and the full
        # collections off for good
        found = (enabled, CALLER_THRESHOLDS)
        assert os.read(read, 400).decode() == repr((found, found, found))
        assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
        # code inside a pause that turns the collector on, or sets its thresholds, does
        # not leave them so
        with collector_paused():
            gc.enable()
            gc.set_threshold(1, 1, 1)
        assert (gc.isenabled(), gc.get_threshold()) == (enabled, CALLER_THRESHOLDS)
    finally:
        os.close(read)
        os.close(write)
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*thresholds)


def test_pauses_overlapping_in_two_threads_leave_the_collector_as_the_first_found():
    # Searches in two threads: the first pause ends while the second runs. The second
    # must stay paused, and the collector must end as it was before both (a stack of
    # findings per block left the full collections off for good: the second pause had
    # found the first's paused setting and put it back last).
    was, thresholds = gc.isenabled(), gc.get_threshold()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def first():
        with collector_paused():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second():
        first_in.wait(10)
        with collector_paused():
            second_in.set()
            first_out.wait(10)
            seen.append(gc.get_threshold())  # the first pause has ended by now

    try:
        gc.enable()
        gc.set_threshold(*CALLER_THRESHOLDS)
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert first_out.is_set() and seen, "the threads did not run as planned"
        assert seen == [(*CALLER_THRESHOLDS[:2], 2**31 - 1)]
        assert (gc.isenabled(), gc.get_threshold()) == (True, CALLER_THRESHOLDS)
    finally:
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*thresholds)


class _Cycle:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    made = 0
    alive = 0

    def __init__(self) -> None:
        self.me = self
        _Cycle.made += 1
        _Cycle.alive += 1

    def __del__(self) -> None:
        _Cycle.alive -= 1


def _garbage_maker(model):
    # an agent that makes and drops a garbage cycle at every step, and notes how many of
    # them are alive: those the collector has not freed yet
    @effect
    def pay(turn: int) -> str:
        return "ok"

    turn = 0
    while True:
        _Cycle()
        _ALIVE.append(_Cycle.alive)
        turn += 1
        if model("pay or done?") == "done":
            return turn
        pay(turn)


_ALIVE: list[int] = []


@pytest.mark.parametrize("search", ["explore", "check_properties"])
def test_a_search_frees_the_cyclic_garbage_an_agent_makes_as_it_goes(search):
    # Pausing the whole collector made an agent's cyclic garbage pile up until the search
    # ended (a review measured 253 MB against 36 MB). The young collections still run in
    # a search, so the cycles are freed as it goes. The collector runs when allocations
    # say so: the thresholds are set here, so the bound does not depend on the caller's.
    m = agent_machine(_garbage_maker, name="garbage", isolation="inline")  # this process's garbage
    was, thresholds = gc.isenabled(), gc.get_threshold()
    gc.collect()
    _ALIVE.clear()
    _Cycle.made = _Cycle.alive = 0
    try:
        gc.enable()
        gc.set_threshold(700, 10, 10)
        if search == "explore":
            g = explore(m, completions=["pay", "again", "done"], max_depth=8)
            states = g.graph["stats"]["states"]
        else:
            result = check_properties(
                m,
                properties=[effects_at_most_once("pay"), never_diverges()],
                completions=["pay", "again", "done"],
                max_depth=8,
            )
            assert result
            states = result.coverage.states
    finally:
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*thresholds)
    assert states == 511
    made, most = _Cycle.made, max(_ALIVE)
    assert made > 2000 and most < made // 5, (made, most)


# -- progress says when divergent steps take the time (issue 35, item 6) ------------------------


def _spinner():
    while True:
        c = yield "go or spin?"
        if c == "spin":
            while True:
                pass


def test_progress_counts_the_divergent_steps_of_the_search_with_an_injected_clock():
    from agentic_machines import HarnessMachine
    from agentic_machines.runtime.search import Found, Reporter, Walk, plan, walk

    m = HarnessMachine(_spinner, line_budget=2_000)
    m.harness(m.initial, "spin")  # a divergent step before the search is not the search's
    ticks = iter(range(0, 10_000, 10))  # every reading 10 s after the last: a line each time
    seen: list[dict] = []
    report = Reporter(seen.append, clock=lambda: float(next(ticks)))
    walk(Walk(plan(m, None, ["go", "spin"], max_depth=3), Found()), report, 0.0)
    assert [v["divergent_steps"] for v in seen][-1] == 3  # one per state expanded
    assert seen[-1]["line_budget"] == 2_000 and seen[-1]["divergent_seconds"] >= 0
    assert m.divergent[0] == 4  # the machine's own count includes the step made before


def test_the_progress_line_says_when_divergent_steps_dominate_the_time():
    from agentic_machines.runtime.search import search_line

    values = {
        "states": 40,
        "edges": 80,
        "depth": 5,
        "queued": 3,
        "states_per_second": 4.0,
        "seconds": 10.0,
        "divergent_steps": 12,
        "line_budget": 100_000,
    }
    dominated = search_line(dict(values, divergent_seconds=7.3), False)
    assert dominated.endswith(
        ", 73% of the time in 12 divergent steps (line budget 100,000; lower it with --line-budget)"
    )
    assert "divergent" not in search_line(dict(values, divergent_seconds=4.0), False)
    assert "divergent" not in search_line({**values, "divergent_steps": 0}, True)
